"""The header scan of a unified diff, line by line, and section by section.

Every path named in ``diff --git``, ``---``/``+++``, ``rename from/to`` and
``copy from/to`` lines counts; hunk bodies are skipped by counting the lines their
``@@ -a,b +c,d @@`` header announces, so a removed line reading ``-- x`` is not a
header.  A traditional diff whose ``---`` and ``+++`` name different files counts
both.  Text the reading does not consume is scanned for what GNU ``patch`` would
apply (``ballot_guard.change.patch_start``), and ``Index:`` names count.  ``scan`` first
tries the bulk reading of a clean ``git diff``
(``ballot_guard.change.patch_bulk``).
"""
from __future__ import annotations

import os
import re

from ballot_guard.change.patch_names import (
    PatchError,
    git_header_raw,
    normalize,
    quoted_name,
    strip_prefix,
    traditional_raw,
)
from ballot_guard.change.patch_start import index_name, stretch
from ballot_guard.change.raw_diff import FileChange


class _Record:
    """What one file's headers say (a plain class: 20,000 of them must be cheap)."""

    minus: bytes | None = None
    plus: bytes | None = None
    minus_seen = False
    plus_seen = False
    rename_from: bytes | None = None
    rename_to: bytes | None = None
    copy_from: bytes | None = None
    copy_to: bytes | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    new_file = False
    deleted = False
    hunks = 0
    extra: tuple[bytes, ...] = ()  # stray rename/copy names
    p0: tuple[bytes, ...] = ()  # names as written, before -p1 drops their first component

    def __init__(self, lineno: int, git: bool, raw_names: list[bytes] | None = None) -> None:
        self.lineno, self.git = lineno, git
        self.header_names = [strip_prefix(n) for n in raw_names] if raw_names else []
        if raw_names:
            self.p0 = tuple(raw_names)

    def traditional(self, minus: bytes, plus: bytes, lineno: int) -> None:
        """Read a ``--- ``/``+++ `` pair (the text after the markers)."""
        raw_minus, raw_plus = traditional_raw(minus, lineno), traditional_raw(plus, lineno + 1)
        self.minus = None if raw_minus is None else strip_prefix(raw_minus)
        self.plus = None if raw_plus is None else strip_prefix(raw_plus)
        self.minus_seen = self.plus_seen = True
        self.p0 = (*self.p0, *(n for n in (raw_minus, raw_plus) if n is not None))


def p0_paths(records: list[_Record], into: list[str]) -> None:
    """Append to ``into`` every name as ``patch -p0`` / ``git apply -p0`` would read it,
    normalised, except git's own ``a/x`` ``b/x`` (made for ``-p1``) and names that would
    leave the repository."""
    for r in records:
        for n in r.p0:
            if n[:2] in (b"a/", b"b/"):
                continue
            try:
                into.append(normalize(n, lineno=r.lineno))
            except PatchError:
                continue


def record_changes(r: _Record) -> list[FileChange]:
    ln = r.lineno
    names = [n for n in (r.minus, r.plus, r.rename_from, r.rename_to, r.copy_from, r.copy_to,
                         *r.header_names, *r.extra) if n is not None]
    if not names:
        if r.minus_seen and r.plus_seen:  # /dev/null on both sides
            raise PatchError(f"line {ln}: a diff with /dev/null on both sides")
        raise PatchError(f"line {ln}: a diff header names no file")
    old_mode, new_mode = r.old_mode, r.new_mode
    if r.rename_from is not None or r.copy_from is not None:
        status = "R" if r.rename_from is not None else "C"
        old = r.rename_from if r.rename_from is not None else r.copy_from
        new = r.rename_to if status == "R" else r.copy_to
        if new is None:
            raise PatchError(f"line {ln}: {'rename' if status == 'R' else 'copy'} without a target")
        main = FileChange(status, normalize(new, lineno=ln),
                          normalize(old, lineno=ln) if old is not None else None,
                          old_mode, new_mode)
    elif r.deleted or (r.plus_seen and r.plus is None):
        path = r.minus if r.minus is not None else names[0]
        main = FileChange("D", normalize(path, lineno=ln), None, old_mode, None)
    elif r.new_file or (r.minus_seen and r.minus is None):
        path = r.plus if r.plus is not None else names[-1]
        main = FileChange("A", normalize(path, lineno=ln), None, None, new_mode)
    else:
        path = r.plus if r.plus is not None else (
            r.header_names[-1] if r.header_names else names[0])
        status = "M"
        if old_mode and new_mode and old_mode[:2] != new_mode[:2]:
            status = "T"
        main = FileChange(status, normalize(path, lineno=ln), None, old_mode, new_mode)
    result = [main]
    known = {main.path, main.old_path}
    for n in dict.fromkeys(names):  # every other name the record gives counts too
        p = normalize(n, lineno=ln)
        if p not in known:
            known.add(p)
            result.append(FileChange("M", p))
    return result


def scan_lines(data: bytes, first_line: int = 1) -> list[_Record]:
    """The precise reading, line by line, counting every hunk's lines.

    Every stretch of lines it does not consume (text before, between and after the
    sections it reads) is scanned as GNU ``patch`` would scan it
    (``ballot_guard.change.patch_start``): what ``patch`` would apply there is refused, and
    ``Index:`` names count.  A hunk must follow its ``+++`` header or the previous
    hunk directly: after other text, ``patch`` would look for new file names there.
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    records: list[_Record] = []
    cur: _Record | None = None
    i, n = 0, len(lines)
    gap = 0  # the first line of the stretch not consumed yet
    read_end = -1  # the line after the last ``+++`` header or hunk body
    while i < n:
        line = lines[i]
        lineno = i + first_line
        if line.startswith(b"diff --git "):
            stretch(lines, gap, i, first_line)
            i += 1
            cur = _Record(lineno, True, git_header_raw(line[11:], lineno))
            records.append(cur)
            gap = i
        elif line.startswith(b"--- ") and i + 1 < n and lines[i + 1].startswith(b"+++ "):
            stretch(lines, gap, i, first_line)
            if cur is None or not cur.git or cur.minus_seen or cur.hunks:
                cur = _Record(lineno, False)
                records.append(cur)
            cur.traditional(line[4:], lines[i + 1][4:], lineno)
            i += 2
            gap = read_end = i
        elif line.startswith(b"@@ -"):
            m = _HUNK.match(line)
            if m is None:
                raise PatchError(f"line {lineno}: malformed hunk header")
            if cur is None:
                raise PatchError(f"line {lineno}: a hunk without a file header")
            if read_end != i:
                raise PatchError(f"line {lineno}: a hunk after text that is not its file "
                                 "header or the previous hunk (GNU patch would look for "
                                 "other file names there)")
            stretch(lines, gap, i, first_line)
            i += 1
            cur.hunks += 1
            old = 1 if m.group(2) is None else int(m.group(2))
            new = 1 if m.group(4) is None else int(m.group(4))
            while old > 0 or new > 0:
                if i >= n:
                    raise PatchError(f"line {lineno}: hunk ends early (patch truncated)")
                where = i + first_line
                body = lines[i]
                i += 1
                c = body[:1]
                if c in (b" ", b"", b"\r"):
                    old, new = old - 1, new - 1
                elif c == b"-":
                    old -= 1
                elif c == b"+":
                    new -= 1
                elif c == b"\\":
                    continue
                else:
                    raise PatchError(f"line {where}: malformed hunk (line counts do not "
                                     f"match its header at line {lineno})")
                if old < 0 or new < 0:
                    raise PatchError(f"line {where}: malformed hunk (more lines than its "
                                     f"header at line {lineno} says)")
            while i < n and lines[i].startswith(b"\\"):
                i += 1  # "\ No newline at end of file" after the last line
            gap = read_end = i
        else:
            i += 1
            name = index_name(line) if line[:1] in (b"I", b" ", b"\t", b"X", b"-") else None
            if name is not None:
                rec = _Record(lineno, False)
                rec.extra, rec.p0 = (strip_prefix(name),), (name,)
                records.append(rec)
            _header_line(cur, line.rstrip(b"\r"), lineno)
    stretch(lines, gap, n, first_line)
    return records


_GIT_START = re.compile(rb"^diff --git ", re.MULTILINE)
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HUNKS = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", re.MULTILINE)
_EXTENDED = (b"index ", b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ",
             b"similarity index ", b"dissimilarity index ", b"rename from ", b"rename to ",
             b"copy from ", b"copy to ")


def fast_section(sec: bytes, lineno: int) -> _Record | None:
    """One well-formed ``diff --git`` section read without a per-line loop, or None.

    The header lines are read one by one (there are a few); the hunks are
    checked in bulk: every line must be a hunk header, context (`` ``, or
    empty), ``-``, ``+`` or ``\\``, and their counts must add up to what the
    hunk headers announce.  Anything else (binary data, garbage, a
    traditional header after the hunks, a hunk that does not directly follow the
    ``---``/``+++`` pair) returns None and the section is read line by line.  git's
    own parser reads the same bytes (``numstat``), so a hunk structure that adds up
    only in total is refused there.
    """
    at = sec.find(b"\n@@ -")
    header, hunks = (sec, b"") if at < 0 else (sec[:at], sec[at + 1:])
    lines = header.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rec = _Record(lineno, True, git_header_raw(lines[0][11:], lineno))
    k, n = 1, len(lines)
    pair_end = -1  # the line after the ---/+++ pair
    while k < n:
        line = lines[k].rstrip(b"\r")
        if line.startswith(b"--- ") and k + 1 < n and lines[k + 1].startswith(b"+++ ") \
                and not rec.minus_seen:
            rec.traditional(line[4:], lines[k + 1][4:], lineno + k)
            k += 2
            pair_end = k
            continue
        if not line.startswith(_EXTENDED) and not (
                line.startswith(b"Binary files ") and line.endswith(b" differ")):
            return None
        _header_line(rec, line, lineno + k)
        k += 1
    if hunks and pair_end != n:
        return None  # a hunk after other text: the line reading refuses it
    if hunks:
        if hunks.endswith(b"\n"):
            hunks = hunks[:-1]
        region = b"\n" + hunks
        total = region.count(b"\n")
        context, minus, plus = region.count(b"\n "), region.count(b"\n-"), region.count(b"\n+")
        marks, ats = region.count(b"\n\\"), region.count(b"\n@")
        empty = region.split(b"\n").count(b"") - 1
        heads = _HUNKS.findall(hunks)
        if ats != len(heads) or context + minus + plus + marks + ats + empty != total:
            return None
        old = sum(int(b) if b else 1 for b, _ in heads)
        new = sum(int(d) if d else 1 for _, d in heads)
        if old != context + empty + minus or new != context + empty + plus:
            return None
        rec.hunks = len(heads)
    return rec


def _header_line(cur: _Record | None, line: bytes, lineno: int) -> None:
    if line[:1] in (b"r", b"c"):
        _rename_copy_line(cur, line, lineno)
    if cur is None or not cur.git or cur.hunks:
        return
    text = line.decode("ascii", "replace")
    if text.startswith("old mode "):
        cur.old_mode = text[9:].strip()
    elif text.startswith("new mode "):
        cur.new_mode = text[9:].strip()
    elif text.startswith("deleted file mode "):
        cur.deleted, cur.old_mode = True, text[18:].strip()
    elif text.startswith("new file mode "):
        cur.new_file, cur.new_mode = True, text[14:].strip()
    elif text.startswith("index "):
        parts = text.split(" ")
        if len(parts) == 3 and cur.old_mode is None and cur.new_mode is None:
            cur.old_mode = cur.new_mode = parts[2]


def _rename_copy_line(cur: _Record | None, line: bytes, lineno: int) -> None:
    for prefix, attr in ((b"rename from ", "rename_from"), (b"rename to ", "rename_to"),
                         (b"copy from ", "copy_from"), (b"copy to ", "copy_to")):
        if line.startswith(prefix):
            name = quoted_name(line[len(prefix):])
            if name.startswith(b"/"):
                raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(name)!r}")
            if cur is None or not cur.git or cur.hunks or getattr(cur, attr) is not None:
                if cur is None:
                    raise PatchError(f"line {lineno}: '{prefix.decode().strip()}' outside a diff")
                cur.extra = (*cur.extra, name)
            else:
                setattr(cur, attr, name)
            return
