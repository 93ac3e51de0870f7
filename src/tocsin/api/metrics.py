"""Prometheus metrics of one app (SPEC §16): one registry per app, so tests can build many.

- ``tocsin_tick_duration_seconds`` (histogram): embedded ticks and root-route ticks
- ``tocsin_runs_created_total`` (counter): runs inserted by ticks of this process
- ``tocsin_tick_backlog`` (gauge): due tables the last embedded tick period could not reach
- ``tocsin_runs`` (gauge, label ``status``): runs per stored status, read at scrape time
- ``tocsin_runs_stuck`` (gauge): runs matching SPEC §8's ``stuck`` filter (failed, or running
  without an update for ``stuck_after_s``), read at scrape time
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from tocsin.core.model import RunStatus
from tocsin.store.outage import OutageLog

log = logging.getLogger("tocsin.metrics")

RUN_STATUSES = tuple(RunStatus)

RunCounter = Callable[[], Mapping[str, int]]


class RunGauges(Collector):
    """Reads run counts through ``count`` on every scrape; a failed read yields no samples (a
    database outage is the ``outage`` log's: not one traceback per scrape)."""

    def __init__(self, count: RunCounter, outage: OutageLog | None = None) -> None:
        self.count = count
        self.outage = outage or OutageLog(log)

    def collect(self) -> Iterator[Metric]:
        try:
            counts = self.count()
        except Exception as exc:
            if not self.outage.failed("metrics", exc, holds=False):
                log.exception("metrics: counting runs failed")
            return
        self.outage.recovered("metrics")
        by_status = GaugeMetricFamily("tocsin_runs", "Runs per stored status", labels=["status"])
        for status in RUN_STATUSES:
            by_status.add_metric([status], counts.get(status, 0))
        yield by_status
        yield GaugeMetricFamily(
            "tocsin_runs_stuck",
            "Runs matching the stuck filter: failed, or running and stale",
            value=counts.get("stuck", 0),
        )


class Metrics:
    """The metrics of one app, in their own registry."""

    def __init__(self, count_runs: RunCounter, outage: OutageLog | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.tick_duration = Histogram(
            "tocsin_tick_duration_seconds",
            "Duration of one tick (run_due_triggers)",
            registry=self.registry,
        )
        self.runs_created = Counter(
            "tocsin_runs_created", "Runs created by ticks", registry=self.registry
        )
        self.tick_backlog = Gauge(
            "tocsin_tick_backlog",
            "Due tables the last embedded tick period could not reach",
            registry=self.registry,
        )
        self.registry.register(RunGauges(count_runs, outage))

    def observe_tick(self, counts: Mapping[str, int], duration_s: float) -> None:
        self.tick_duration.observe(duration_s)
        self.runs_created.inc(counts.get("runs_created", 0))
        if "backlog" in counts:
            self.tick_backlog.set(counts["backlog"])

    def timed_tick(self, tick: Callable[[], dict[str, int]]) -> dict[str, int]:
        """Run ``tick()`` and observe its duration and counts."""
        started = time.perf_counter()
        counts = tick()
        self.observe_tick(counts, time.perf_counter() - started)
        return counts


def serve_metrics(registry: CollectorRegistry, host: str, port: int) -> WSGIServer:
    """``registry`` at ``http://host:port/metrics`` (``TOCSIN_METRICS_PORT``) in a daemon thread;
    ``shutdown()`` and ``server_close()`` the answer to stop it."""
    server, _thread = start_http_server(port, addr=host, registry=registry)
    log.info("metrics served", extra={"host": host, "port": port})
    return server


__all__ = ["RUN_STATUSES", "Metrics", "RunGauges", "serve_metrics"]
