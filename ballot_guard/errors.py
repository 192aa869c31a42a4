"""One error type for "cannot judge" (exit 4).

A policy verdict (blocked, drift, frozen) is never an exception: it is a
return value.  Raise CannotJudge when ballot-guard cannot reach a verdict at
all; the top-level handler prints its message on one line and returns 4.
"""
from __future__ import annotations


class CannotJudge(Exception):
    """The change, config, runner or arguments cannot be judged: exit 4."""


class UsageError(CannotJudge):
    """Bad command-line arguments."""
