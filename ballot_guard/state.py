"""``.ballot_guard/``: ballot-guard's own scratch space in a repository.

It holds the scorecard, the freeze lock, the bytecode cache of runs and each
gate's temporary run directory, and carries its own ``.gitignore`` (``*``) so
a hook never dirties the tree.
"""
from __future__ import annotations

import os
import time
from datetime import datetime, timezone

DIRNAME = ".ballot_guard"


def state_dir(root: str) -> str:
    """``<root>/.ballot_guard``, created with its ``.gitignore`` if missing."""
    path = os.path.join(root, DIRNAME)
    os.makedirs(path, exist_ok=True)
    ignore = os.path.join(path, ".gitignore")
    if not os.path.exists(ignore):
        tmp = f"{ignore}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write("*\n")
        os.replace(tmp, ignore)
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


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    name = f".{os.path.basename(path)}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    tmp = os.path.join(directory, name)
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
