"""Timestamps as the scorecard and the freeze file write them: ``YYYY-MM-DDTHH:MM:SSZ``."""
from __future__ import annotations

from datetime import datetime, timezone


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
