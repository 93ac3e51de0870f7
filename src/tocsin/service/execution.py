"""Work, retry, requeue, staged changes, chatroom messages, commands (SPEC §8–§10)."""

from __future__ import annotations

from tocsin.service.base import TocsinBase


class ExecutionMixin(TocsinBase):
    """Owned by the execution work (issue 4)."""
