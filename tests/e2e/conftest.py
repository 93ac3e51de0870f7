"""The ``tocsin serve`` fixtures of ``support.fixtures``: ``env``, ``serve_app``, ``served``."""

from __future__ import annotations

from support.fixtures import env, serve_app, served

__all__ = ["env", "serve_app", "served"]
