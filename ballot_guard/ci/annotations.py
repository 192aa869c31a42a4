"""GitHub Actions workflow commands (``::error file=...::message``), escaped by GitHub's rules.

The message (data) escapes ``%``, ``\\r`` and ``\\n``; a property value also
escapes ``:`` and ``,`` (actions/toolkit ``command.ts``).
"""
from __future__ import annotations


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, *, file: str | None = None, title: str | None = None,
            line: int | None = None) -> str:
    """One workflow command line, e.g. ``::error file=a.py,title=x::message``."""
    props = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if title is not None:
        props.append(f"title={escape_property(title)}")
    head = f"::{kind} {','.join(props)}" if props else f"::{kind}"
    return f"{head}::{escape_data(message)}"


def error(message: str, *, file: str | None = None, title: str | None = None) -> str:
    return command("error", message, file=file, title=title)
