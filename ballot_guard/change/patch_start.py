"""What GNU ``patch`` would take as the start of a diff in text we do not read.

``patch`` skips leading and trailing garbage, so every line of a patch that our
reading does not consume (a mail's message, text between sections, what follows
a hunk whose counts are used up) is scanned as ``patch`` scans it: first the
indentation is stripped (spaces, tabs and ``X``, as ``patch`` does), then any
RFC 934 encapsulation (``- `` prefixes).  A line that then starts a diff
``patch`` applies (a unified hunk, a context hunk, a normal or ``ed`` command,
an indented ``diff --git`` header) cannot be judged: ``stretch`` raises
PatchError naming it.  ``Index:`` names are read (``index_name``): ``patch``
may take a file name from them.
"""
from __future__ import annotations

import re

from ballot_guard.change.patch_names import PatchError

_INDENT = re.compile(rb"[ \tX]*")
_RFC934 = re.compile(rb"(?:- )*")
# An ed or normal-diff command line, whole: "4c4", "2,5d1", "3a", "7i", "1,2s/x/y/".
_COMMAND = re.compile(rb"\d+(?:,\d+)?(?:[acdi]|[acd]\d+(?:,\d+)?|s/.*)[ \t]*\Z")
# GNU patch's own, looser test for a command line: digits and commas, then a, c or d.
_LOOSE = re.compile(rb"\d[\d,]*[acd]")


def strip(line: bytes) -> bytes:
    """The line as ``patch`` looks at it: no indentation, no RFC 934 ``- `` prefixes,
    no trailing CR."""
    line = line.rstrip(b"\r")
    line = line[_INDENT.match(line).end():]  # type: ignore[union-attr]
    return line[_RFC934.match(line).end():]  # type: ignore[union-attr]


def index_name(line: bytes) -> bytes | None:
    """The name of an ``Index:`` line (``patch`` may patch it), or None."""
    s = strip(line)
    if not s.startswith(b"Index:"):
        return None
    name = s[6:].strip().split(b"\t", 1)[0].strip()
    return name or None


def stretch(lines: list[bytes], first: int, end: int, first_line: int) -> None:
    """Raise PatchError when ``lines[first:end]`` (text our reading skips; line numbers
    from ``first_line`` for index 0) hold what GNU ``patch`` would apply."""
    stripped = [strip(lines[k]) for k in range(first, end)]
    for j, s in enumerate(stripped):
        where = first_line + first + j
        nxt = stripped[j + 1] if j + 1 < len(stripped) else b""
        raw = lines[first + j]
        if s.startswith(b"@@ -"):
            why = "a unified hunk" + (" indented or encapsulated" if s != raw else "")
        elif s.startswith(b"diff --git "):
            why = "a diff --git header indented or encapsulated"
        elif (s.startswith(b"********") and nxt.startswith(b"*** ")) or s == b"*" * 15:
            why = "a context diff hunk"
        elif s.startswith(b"*** ") and nxt.startswith(b"--- "):
            why = "a context diff header (*** / ---)"
        elif _COMMAND.match(s) or (_LOOSE.match(s) and (
                nxt[:2] in (b"< ", b"> ") or nxt in (b"<", b">") or b"." in stripped[j + 1:])):
            why = "an ed or normal diff command"
        else:
            continue
        raise PatchError(f"line {where}: {why} that GNU patch would apply but ballot-guard "
                         "does not read; hand over a plain unified diff")
