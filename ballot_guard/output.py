"""All printing goes through here: plain lines, optional colour.

Colour only when the stream is a terminal and ``NO_COLOR`` is unset (or
``FORCE_COLOR`` is set); ``--json`` commands print exactly one JSON object on
stdout and their human text on stderr.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, Any

_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


def use_color(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if getattr(stream, "neutralises", False):  # a CI log guard escapes control characters
        return False
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, color: str, stream: IO[str] | None = None) -> str:
    stream = sys.stdout if stream is None else stream
    if not use_color(stream):
        return text
    return f"\033[{_CODES[color]}m{text}\033[0m"


def say(text: str = "") -> None:
    """A line of the report on stdout."""
    print(text, file=sys.stdout, flush=True)


def warn(text: str) -> None:
    """A line on stderr (warnings, progress, errors)."""
    print(text, file=sys.stderr, flush=True)


def emit_json(obj: Any) -> None:
    """The one JSON object a ``--json`` command prints on stdout."""
    import json  # noqa: PLC0415 - lazy: rare branch: json (1.2 ms) only for the --json commands

    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False) + "\n")
    sys.stdout.flush()
