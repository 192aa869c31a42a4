"""``.ballot_guard/``: ballot-guard's own scratch space in a repository.

It holds the scorecard, the freeze lock, the bytecode cache of runs and each
gate's temporary run directory, and carries its own ``.gitignore`` (``*``) so
a hook never dirties the tree.
"""
from __future__ import annotations

import os
from datetime import datetime, timezone

DIRNAME = ".ballot_guard"


def state_dir(root: str) -> str:
    """``<root>/.ballot_guard``, created with its ``.gitignore`` if missing."""
    path = os.path.join(root, DIRNAME)
    os.makedirs(path, exist_ok=True)
    ignore = os.path.join(path, ".gitignore")
    if not os.path.exists(ignore):
        from ballot_guard.atomic import write_text

        write_text(ignore, "*\n")
    return path


def utc_now() -> str:
    """The current time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(text: str) -> float | None:
    """Seconds since the epoch of a ``...Z`` timestamp, None when unreadable."""
    try:
        stamp = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        try:
            stamp = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.timestamp()
