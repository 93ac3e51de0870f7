"""Schedules: timing specs, clock windows, compound trees and their evaluation, skips, occurrence
identities, the retry policy."""

from __future__ import annotations
