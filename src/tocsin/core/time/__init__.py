"""Time: cron dialects, IANA zones and wall time, instants. Imports no other part of core."""

from __future__ import annotations
