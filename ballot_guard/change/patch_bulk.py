"""The bulk reading of a clean ``git diff``: every file without a per-line loop.

``ballot_guard.change.from_patch`` reads any diff line by line; for the common case, a
patch made of ``diff --git`` sections only, this module gets the same files
from a handful of C-speed passes (byte counts, three regular expressions):
when every section has one of the shapes ``git diff`` writes for a modified,
new or deleted file, one match each and no Python step per file (``common``),
else one short step per file.  It returns None whenever the patch is not
clean, and the line reading takes over.

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
from itertools import compress, repeat, starmap
from operator import add, itemgetter
from typing import Any, cast

from ballot_guard.change.patch_lines import fast_section, p0_paths, record_changes
from ballot_guard.change.patch_names import FS_ENCODING, FS_ERRORS, PatchError, normalize
from ballot_guard.change.raw_diff import FileChange

_EXT_WORDS = (rb"(?:old mode|new mode|deleted file mode|new file mode|index|similarity index"
              rb"|dissimilarity index|rename from|rename to|copy from|copy to) ")
# Matched on "\n" + data: a literal "\n..." prefix lets the regex engine skip ahead fast.
# Each line is taken with the "\\n" before it, the last one's end only looked at, so
# that the matches of two adjacent sections do not overlap.
# Groups: the rest of the "diff --git " line, the extended header lines, "\n" when a
# ---/+++ pair follows them, its two names, and "@" when a hunk follows (it must follow
# a pair).
_FILE = re.compile(rb"\ndiff --git ([^\n]*)((?:\n" + _EXT_WORDS + rb"[^\n]*)*)"
                   rb"(?:(\n)--- ([^\n]*)\n\+\+\+ ([^\n]*))?(?=\n(@?))")
_HUNKS = re.compile(rb"\n@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_BODY_START = re.compile(rb"\n(?=([ +\-\\@\n]))")

_HEX = rb"[0-9a-f]++\.\.[0-9a-f]++"
# One section of a common shape (see ``_simple``), each in one match: the name; the mode
# of an "index A..B MODE" line; or a new or deleted file's mode line (its kind's first
# letter captured) and its "index A..B" line; the ---/+++ pair its kind gives, if there
# is one.  The lines' "\n"s stand for the index line and the pair (one-byte captures
# cost no allocation).  With no pair, neither a hunk (the line reading refuses a hunk
# after other text) nor a "--- " line (another pair, left to ``_simple``) may follow.
# The name is taken shortest first ("a/x b/x b/x b/x" can only be "x b/x": the line
# ends after the second copy).  The first hunk header after the pair is taken too (its
# counts, as _HUNKS gives them): when every file has one hunk, _HUNKS has no pass to make.
_COMMON = re.compile(
    rb"\ndiff --git a/([^\n\"]+?) b/\1\n"
    rb"(?:index " + _HEX + rb" ([0-7]{6})"
    rb"|((?:(n)ew|(d)eleted) file mode [0-7]{6})(?:(\n)index " + _HEX + rb")?)"
    rb"(?:(\n)--- (?(4)/dev/null|a/\1)\n\+\+\+ (?(5)/dev/null|b/\1)"
    rb"(?:(\n)@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@|(?=\n|\Z))|(?!\n@|\n--- )(?=\n|\Z))")


def _clean(region: bytes, files: list[tuple[bytes, ...]]) -> bool:
    """Whether the patch is clean git sections whose hunks add up (see the module doc).

    ``region`` is the patch with one "\\n" before it and its final "\\n" dropped,
    so that every line starts right after a "\\n"."""
    # every "\ndiff --git " starts a match of _FILE: nothing a match takes holds one
    ext = b"".join([f[1] for f in files]).count(b"\n")  # extended headers in header blocks
    pairs = len(files) - [f[2] for f in files].count(b"")
    return _adds_up(region, len(files), ext, pairs)


def _adds_up(region: bytes, gits: int, ext: int, pairs: int,
             heads: list[tuple[bytes, bytes]] | None = None) -> bool:
    """Whether every line of ``region`` is a ``diff --git`` line (``gits`` of them), one
    of the ``ext`` extended header lines of the header blocks, a ``Binary files`` line, a
    hunk header or a body line, and the hunks' headers announce every body line but the
    ``pairs`` ``---``/``+++`` pairs that directly follow header blocks (module doc).

    ``heads``: the counts of hunk headers already read, as ``_HUNKS`` gives them; when
    they are as many as the lines that start with "@", they are all, else all are read."""
    total = region.count(b"\n")
    # The first byte of every body line in one C-level pass (faster than five counts
    # of two-byte needles), counted by kind.
    # An empty line is a "\n" right before the next one (or the end): the lookahead
    # counts each of "\n\n\n"'s two.
    firsts = b"".join(_BODY_START.findall(region))
    context, minus, plus, marks, ats, empty = (
        firsts.count(c) for c in (b" ", b"-", b"+", b"\\", b"@", b"\n"))
    empty += region.endswith(b"\n")
    binary = region.count(b"\nBinary files ")
    if context + minus + plus + marks + ats + gits + binary + ext + empty != total:
        return False  # garbage, binary data, CRLF, a preamble: read line by line
    if heads is None or len(heads) != ats:
        heads = _HUNKS.findall(region)
        if len(heads) != ats:
            return False

    old = _line_total(list(map(itemgetter(0), heads)))
    new = _line_total(list(map(itemgetter(1), heads)))
    return old == context + empty + minus - pairs and new == context + empty + plus - pairs


def _line_total(counts: list[bytes]) -> int:
    """The sum of hunk-header line counts, an omitted count (b"") being 1."""
    return sum(map(int, b" ".join(counts).split())) + counts.count(b"")


def _plain_names(names: list[bytes]) -> list[str] | None:
    """The names decoded, when every one is already normal as ``normalize`` would
    judge it (non-empty, relative, no ``.`` component, no doubled or trailing slash);
    else None.  Names come from header lines, so none holds a newline."""
    text = b"\n".join(names).decode(FS_ENCODING, FS_ERRORS)
    if not text or text[0] in "./\n" or text[-1] in "/\n" or "\n\n" in text or "\0" in text \
            or "/." in text or "//" in text or "\n." in text or "\n/" in text or "/\n" in text:
        return None
    return text.split("\n")


_MODES = {m.encode(): m for m in ("100644", "100755", "120000", "160000")}
# A record's status and modes by what _COMMON captured: the mode of an index line, or a
# new or deleted file's mode line.
_KINDS = {key: kind for m in _MODES.values()
          for key, kind in ((m.encode(), ("M", m, m)),
                            (b"new file mode " + m.encode(), ("A", None, m)),
                            (b"deleted file mode " + m.encode(), ("D", m, None)))}
_NEW, _DELETED, _INDEX = b"\nnew file mode ", b"\ndeleted file mode ", b"\nindex "


def _simple(g: bytes, ext: bytes, pair: bytes, minus: bytes, plus: bytes,
            hunk: bytes) -> tuple[bytes, str, str | None, str | None] | None:
    """(name, status, old mode, new mode) of the common section shapes, else None:
    ``a/X b/X`` (unquoted) with an ``index`` line that carries the mode, or a
    ``new file mode`` / ``deleted file mode`` line then an ``index`` line; a
    ``---``/``+++`` pair, when there is one (``pair``), naming the same file (there
    must be one when a hunk follows: ``hunk`` is "@").

    ``ext`` holds the extended header lines, each after its "\\n"."""
    half = (len(g) - 1) >> 1
    name = g[2:half]
    if g[half:half + 3] != b" b/" or g[:2] != b"a/" or g[half + 3:] != name or b'"' in g:
        return None
    second = ext.find(b"\n", 1)
    if second < 0:  # one line: "index A..B MODE", or a new / deleted file without index
        if ext[:7] == b"\nindex ":
            mode = None
            if ext.count(b" ") == 2:
                tok = ext.rpartition(b" ")[2]
                mode = _MODES.get(tok) or tok.decode()
            status, old_mode, new_mode = "M", mode, mode
            first = b""
        elif ext:
            first = ext
        else:
            return None  # no extended header at all
    elif ext.find(b"\n", second + 1) < 0 and ext[second:second + 7] == _INDEX:
        first = ext[:second]
    else:
        return None
    if first:
        if first[:15] == _NEW:
            tok = first[15:]
            status, old_mode, new_mode = "A", None, _MODES.get(tok) or tok.decode()
        elif first[:19] == _DELETED:
            tok = first[19:]
            status, old_mode, new_mode = "D", _MODES.get(tok) or tok.decode(), None
        else:
            return None
    if not pair:
        return None if hunk else (name, status, old_mode, new_mode)
    want_minus = b"/dev/null" if status == "A" else b"a/" + name
    want_plus = b"/dev/null" if status == "D" else b"b/" + name
    if minus != want_minus or plus != want_plus:
        return None
    return name, status, old_mode, new_mode


def read(data: bytes, p0: list[str] | None = None) -> list[FileChange] | None:
    """Every file of a clean ``git diff`` (see the module doc); None: read it line by line.

    ``p0``: as in ``ballot_guard.change.patch_lines`` (the common ``a/X b/X`` sections
    give none)."""

    records = common(data)
    if records is not None:
        return records
    if not data.startswith(b"diff --git "):
        return None
    region = b"\n" + (data[:-1] if data.endswith(b"\n") else data)
    files = _FILE.findall(region + b"\n")  # the "\\n" closes the last line
    if not _clean(region, files):
        return None

    shapes = list(starmap(_simple, files))
    if None not in shapes:  # the usual case: every section has a common shape
        known = cast("list[tuple[bytes, str, str | None, str | None]]", shapes)
        paths = _plain_names([shape[0] for shape in known])
        if paths is not None:
            return list(map(tuple.__new__, repeat(FileChange), [
                (status, path, None, old_mode, new_mode, None, None)
                for path, (_, status, old_mode, new_mode) in zip(paths, known, strict=True)]))
    changes: list[FileChange] = []
    append = changes.append
    starts: list[int] = []
    found: list[Any] = []  # the records read section by section
    new_tuple = tuple.__new__
    try:
        for i in range(len(files)):
            shape = shapes[i]
            if shape is not None:
                name, status, old_mode, new_mode = shape
                append(new_tuple(FileChange, (status, normalize(name, lineno=0), None,
                                              old_mode, new_mode, None, None)))
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


def common(data: bytes) -> list[FileChange] | None:
    """``read``'s result when every section has a common shape (``_simple``), each taken
    by one match of ``_COMMON``, and the hunks add up; else None (``read`` then goes
    section by section).  The same records, with no Python step per section.

    A section whose ---/+++ pair names other files is no match (a "--- " line follows
    the header block ``_COMMON`` took): the patch then goes section by section, where
    that pair is counted as a pair."""
    if not data.startswith(b"diff --git "):
        return None
    region = b"\n" + (data[:-1] if data.endswith(b"\n") else data)
    shapes = _COMMON.findall(region)
    gits = len(shapes)
    if not gits:
        return None
    # A "diff --git" line that starts no match stands in no line count: no need to count
    # them, the hunks cannot add up.
    names, index_modes, mode_lines, _, _, indexes, pairs, hunks, olds, news = zip(
        *shapes, strict=True)
    keys = list(map(add, index_modes, mode_lines))  # one of the two is b""
    ext = gits + gits - indexes.count(b"")
    heads = list(compress(zip(olds, news, strict=True), hunks))
    kinds = list(map(_KINDS.get, keys))
    if None in kinds or not _adds_up(region, gits, ext, gits - pairs.count(b""), heads):
        return None
    paths = _plain_names(list(names))
    if paths is None:
        return None
    new_tuple = tuple.__new__
    return [new_tuple(FileChange, (status, path, None, old_mode, new_mode, None, None))
            for path, (status, old_mode, new_mode) in zip(
                paths, cast("list[tuple[str, str | None, str | None]]", kinds), strict=True)]
