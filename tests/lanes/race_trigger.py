"""One process of the lane race test: open the facade with the lane, wait for ``go`` on stdin,
trigger the scheduled run ``argv[2]`` once, print the attempt and the source calls as JSON."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta

from tocsin import Tocsin

from .lane_support import LANE_ID, Probe, make_lane


def main() -> None:
    url, due = sys.argv[1], datetime.fromisoformat(sys.argv[2])
    probe = Probe()
    t = Tocsin.open(url, lanes=[make_lane(probe)])
    try:
        t.lanes.list()  # connected and migrated before the start line
        print("ready", flush=True)
        sys.stdin.readline()
        got = t.lanes.trigger(
            LANE_ID, kind="scheduled", scheduled_for=due, now=due + timedelta(seconds=5)
        )
        out = {"attempt": got["attempt"], "run_id": got["run_id"], "decision": got["decision"]}
        print(json.dumps({**out, "source_calls": probe.source_calls}), flush=True)
    finally:
        t.close()


if __name__ == "__main__":
    main()
