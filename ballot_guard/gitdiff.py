"""The bulk reading of a clean ``git diff``: every file without a per-line loop.

``ballot_guard.patch`` reads any diff line by line; for the common case, a
patch made of ``diff --git`` sections only, this module gets the same files
from a handful of C-speed passes (byte counts, three regular expressions),
leaving Python one short step per file.  It returns None whenever the patch
is not clean, and the line reading takes over.

Why the bulk check is enough.  git's parser (``git apply --numstat``, run on
the same bytes first) makes each hunk consume exactly the lines its
``@@ -a,b +c,d @@`` header announces, each line being context (`` `` or
empty), ``-``, ``+`` or ``\\``.  Here every line must be one of: such a body
line, a hunk header, a ``diff --git`` line, a git extended header inside a
section's header block, or ``Binary files ... differ``.  Then the ``-`` lines
that no hunk consumes number ``minus - (old - context - empty)``; the
``--- `` lines that directly follow a section's header block are never
consumed, so when that number equals their count, no other ``-`` line is
left over, and no traditional ``---``/``+++`` header can hide inside a hunk
body.  Every name then stands in a section's header block, read below.
"""
from __future__ import annotations

import re
from typing import Any

from ballot_guard.change import FileChange, _file_change

_EXT_WORDS = (rb"(?:old mode|new mode|deleted file mode|new file mode|index|similarity index"
              rb"|dissimilarity index|rename from|rename to|copy from|copy to) ")
# Matched on "\n" + data: a literal "\n..." prefix lets the regex engine skip ahead fast.
# Each line is taken with the "\\n" before it, the last one's end only looked at, so
# that the matches of two adjacent sections do not overlap.
_FILE = re.compile(rb"\ndiff --git ([^\n]*)((?:\n" + _EXT_WORDS + rb"[^\n]*)*)"
                   rb"(?:\n--- ([^\n]*)\n\+\+\+ ([^\n]*))?(?=\n)")
_EMPTY = re.compile(rb"\n(?=\n|\Z)")
_HUNKS = re.compile(rb"\n@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _empty_lines(region: bytes) -> int:
    if region.count(b"\n\n") == 0:  # the usual case: no empty context line at all
        return 1 if region.endswith(b"\n") else 0
    return len(_EMPTY.findall(region))


def _clean(region: bytes, files: list[tuple[bytes, bytes, bytes, bytes]]) -> bool:
    """Whether the patch is clean git sections whose hunks add up (see the module doc).

    ``region`` is the patch with one "\\n" before it and its final "\\n" dropped,
    so that every line starts right after a "\\n"."""
    total = region.count(b"\n")
    context, minus, plus = region.count(b"\n "), region.count(b"\n-"), region.count(b"\n+")
    marks, ats = region.count(b"\n\\"), region.count(b"\n@")
    gits, binary = region.count(b"\ndiff --git "), region.count(b"\nBinary files ")
    empty = _empty_lines(region)
    ext = sum(f[1].count(b"\n") for f in files)  # extended headers inside header blocks
    if context + minus + plus + marks + ats + gits + binary + ext + empty != total:
        return False  # garbage, binary data, CRLF, a preamble: read line by line
    if len(files) != gits:
        return False
    heads = _HUNKS.findall(region)
    if len(heads) != ats:
        return False
    pairs = sum(1 for f in files if f[2])
    old = sum(int(b) if b else 1 for b, _ in heads)
    new = sum(int(d) if d else 1 for _, d in heads)
    return old == context + empty + minus - pairs and new == context + empty + plus - pairs


def _simple(g: bytes, ext: bytes, minus: bytes,
            plus: bytes) -> tuple[bytes, str, str | None, str | None] | None:
    """(name, status, old mode, new mode) of the common section shapes, else None.

    ``ext`` holds the extended header lines, each after its "\\n"."""
    half = (len(g) - 1) // 2
    name = g[2:half]
    if g[half:half + 3] != b" b/" or g[:2] != b"a/" or g[half + 3:] != name or b'"' in g:
        return None
    lines = ext.split(b"\n")  # ["", first, (second)]
    if len(lines) == 2 and lines[1].startswith(b"index "):
        mode = lines[1].rpartition(b" ")[2].decode() if lines[1].count(b" ") == 2 else None
        status, old_mode, new_mode = "M", mode, mode
    elif len(lines) in (2, 3) and (len(lines) == 2 or lines[2].startswith(b"index ")):
        first = lines[1]
        if first.startswith(b"new file mode "):
            status, old_mode, new_mode = "A", None, first[14:].decode()
        elif first.startswith(b"deleted file mode "):
            status, old_mode, new_mode = "D", first[18:].decode(), None
        else:
            return None
    else:
        return None
    if minus:
        want_minus = b"/dev/null" if status == "A" else b"a/" + name
        want_plus = b"/dev/null" if status == "D" else b"b/" + name
        if minus != want_minus or plus != want_plus:
            return None
    return name, status, old_mode, new_mode


def read(data: bytes, p0: list[str] | None = None) -> list[FileChange] | None:
    """Every file of a clean ``git diff`` (see the module doc); None: read it line by line.

    ``p0``: as ``patchscan.scan``'s (the common ``a/X b/X`` sections give none)."""
    from ballot_guard.patchnames import PatchError, normalize
    from ballot_guard.patchscan import fast_section, p0_paths, record_changes

    if not data.startswith(b"diff --git "):
        return None
    region = b"\n" + (data[:-1] if data.endswith(b"\n") else data)
    files = _FILE.findall(region + b"\n")  # the "\\n" closes the last line
    if not _clean(region, files):
        return None
    changes: list[FileChange] = []
    append = changes.append
    starts: list[int] = []
    found: list[Any] = []  # the records read section by section
    try:
        for i, groups in enumerate(files):
            shape = _simple(*groups)
            if shape is not None:
                name, status, old_mode, new_mode = shape
                append(_file_change(old_mode, new_mode, status, normalize(name, lineno=0)))
                continue
            if not starts:
                starts = [m.start() for m in _FILE.finditer(region + b"\n")]
            end = starts[i + 1] if i + 1 < len(starts) else len(data)
            rec = fast_section(data[starts[i]:end], 0)
            if rec is None:
                return None
            changes.extend(record_changes(rec))
            found.append(rec)
    except PatchError:
        return None  # the line reading raises it again, with its line number
    if p0 is not None:
        p0_paths(found, p0)
    return changes
