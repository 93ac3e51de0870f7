"""The lane run contract (``trigger-contract.v1``) and its verify."""

from __future__ import annotations
