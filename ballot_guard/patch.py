"""A unified diff judged before it is applied.

The files a patch touches come from two independent readings, and the change
is their union, so that no path git would apply goes unclassified:

1. ``git apply --numstat -z``: git's own parser, the one that will apply it;
2. a header scan of our own that names every path in ``diff --git``,
   ``---``/``+++``, ``rename from/to`` and ``copy from/to`` lines (hunk bodies
   are skipped by counting the lines their ``@@ -a,b +c,d @@`` header
   announces, so a removed line reading ``-- x`` is not a header).  A
   traditional diff whose ``---`` and ``+++`` name different files counts both.

Hunks are never parsed beyond their line counts.  A malformed diff, or a path
that leaves the repository once normalised (``a/src/../../x``, an absolute
path), cannot be judged (exit 4).  The patch is applied to a temporary index
holding HEAD only when a rule needs the content (``Applied.snapshot``).
"""
from __future__ import annotations

import os
import posixpath
import re
import shutil
import sys
import tempfile
from typing import Any

from ballot_guard import git
from ballot_guard.change import FileChange
from ballot_guard.errors import CannotJudge

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
            ord("r"): 13, ord('"'): 34, ord("\\"): 92}


class PatchError(CannotJudge):
    """The patch is malformed, names a path outside the repository, or does not apply."""


def unquote(text: bytes) -> tuple[bytes, bytes]:
    """Parse a git C-quoted name at the start of ``text``; return (name, rest)."""
    if not text.startswith(b'"'):
        raise PatchError("expected a quoted path")
    out = bytearray()
    i = 1
    while i < len(text):
        c = text[i]
        if c == 34:  # closing quote
            return bytes(out), text[i + 1:]
        if c == 92:  # backslash
            i += 1
            if i >= len(text):
                break
            e = text[i]
            if 48 <= e <= 55:  # octal \ooo
                digits = text[i:i + 3]
                if len(digits) != 3 or not all(48 <= d <= 55 for d in digits):
                    raise PatchError(f"bad octal escape in quoted path {text[:80]!r}")
                out.append(int(digits, 8) & 0xFF)
                i += 3
                continue
            if e not in _ESCAPES:
                raise PatchError(f"bad escape in quoted path {text[:80]!r}")
            out.append(_ESCAPES[e])
            i += 1
            continue
        out.append(c)
        i += 1
    raise PatchError(f"unterminated quoted path {text[:80]!r}")


def _strip_prefix(name: bytes) -> bytes:
    """Drop the first path component, as ``git apply -p1`` does."""
    slash = name.find(b"/")
    return name[slash + 1:] if slash >= 0 else name


_ENC, _ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def normalize(name: bytes, *, lineno: int) -> str:
    """A repository-relative path, or PatchError when it escapes or is absolute."""
    text = name.decode(_ENC, _ERRORS)
    if text and text[0] not in "./" and "/." not in text and "//" not in text \
            and "\0" not in text and text[-1] != "/":
        return text  # already normal: the common case, checked cheaply
    if not text or "\0" in text:
        raise PatchError(f"line {lineno}: empty or invalid path in patch")
    if text.startswith("/"):
        raise PatchError(f"line {lineno}: absolute path in patch: {text!r}")
    norm = posixpath.normpath(text)
    if norm == ".." or norm.startswith(("../", "/")):
        raise PatchError(f"line {lineno}: path escapes the repository: {text!r}")
    if norm in (".", ".git") or norm.startswith(".git/"):
        raise PatchError(f"line {lineno}: invalid path in patch: {text!r}")
    return norm


def _traditional_name(rest: bytes, lineno: int) -> bytes | None:
    """The name after ``--- `` / ``+++ ``; None for /dev/null."""
    rest = rest.rstrip(b"\r")
    if rest.startswith(b'"'):
        name, _ = unquote(rest)
    else:
        name = rest.split(b"\t", 1)[0].rstrip(b" ")
    if name == b"/dev/null":
        return None
    if name.startswith(b"/"):
        raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(name)!r}")
    return _strip_prefix(name)


def _git_header_names(rest: bytes, lineno: int) -> list[bytes]:
    """The two names of ``diff --git A B`` (prefix stripped), when they can be told apart."""
    rest = rest.rstrip(b"\r")
    half = (len(rest) - 1) // 2
    first, second = rest[:half], rest[half + 1:]
    if rest[half:half + 1] == b" " and first[:1] not in (b'"', b"/") and b"/" in first \
            and b"/" in second and first.partition(b"/")[2] == second.partition(b"/")[2]:
        return [first.partition(b"/")[2]] * 2  # "a/X b/X": the common case
    if rest.startswith(b'"'):
        first, tail = unquote(rest)
        tail = tail.lstrip(b" ")
        second = unquote(tail)[0] if tail.startswith(b'"') else tail
        names = [first, second]
    else:
        quoted = rest.find(b' "')
        if quoted >= 0:
            names = [rest[:quoted], unquote(rest[quoted + 1:])[0]]
        else:
            names = []
            for m in re.finditer(rb" ", rest):  # a b with spaces: the split where both agree
                a, b = rest[:m.start()], rest[m.end():]
                if _strip_prefix(a) == _strip_prefix(b):
                    names = [a, b]
                    break
            if not names and rest.count(b" b/") == 1:
                a, b = rest.split(b" b/")
                names = [a, b"b/" + b]
    for n in names:
        if n.startswith(b"/"):
            raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(n)!r}")
    return [_strip_prefix(n) for n in names]


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

    def __init__(self, lineno: int, git: bool, header_names: list[bytes] | None = None) -> None:
        self.lineno, self.git, self.header_names = lineno, git, header_names or []


def _record_changes(r: _Record) -> list[FileChange]:
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
        path = r.plus if r.plus is not None else (r.header_names[-1] if r.header_names else names[0])
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


def _scan_lines(data: bytes, first_line: int = 1) -> list[_Record]:
    """The precise reading, line by line, counting every hunk's lines."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    records: list[_Record] = []
    cur: _Record | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        lineno = i + first_line
        i += 1
        if line.startswith(b"diff --git "):
            cur = _Record(lineno, True, _git_header_names(line[11:], lineno))
            records.append(cur)
        elif line.startswith(b"--- ") and i < n and lines[i].startswith(b"+++ "):
            if cur is None or not cur.git or cur.minus_seen or cur.hunks:
                cur = _Record(lineno, False)
                records.append(cur)
            cur.minus, cur.minus_seen = _traditional_name(line[4:], lineno), True
            cur.plus, cur.plus_seen = _traditional_name(lines[i][4:], lineno + 1), True
            i += 1
        elif line.startswith(b"@@ -"):
            m = _HUNK.match(line)
            if m is None:
                raise PatchError(f"line {lineno}: malformed hunk header")
            if cur is None:
                raise PatchError(f"line {lineno}: a hunk without a file header")
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
        else:
            _header_line(cur, line.rstrip(b"\r"), lineno)
    return records


_GIT_START = re.compile(rb"^diff --git ", re.MULTILINE)
_HUNKS = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", re.MULTILINE)
_EXTENDED = (b"index ", b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ",
             b"similarity index ", b"dissimilarity index ", b"rename from ", b"rename to ",
             b"copy from ", b"copy to ")


def _fast_section(sec: bytes, lineno: int) -> _Record | None:
    """One well-formed ``diff --git`` section read without a per-line loop, or None.

    The header lines are read one by one (there are a few); the hunks are
    checked in bulk: every line must be a hunk header, context (`` ``, or
    empty), ``-``, ``+`` or ``\\``, and their counts must add up to what the
    hunk headers announce.  Anything else (binary data, garbage, a
    traditional header after the hunks) returns None and the section is read
    line by line.  git's own parser reads the same bytes (``numstat``), so a
    hunk structure that adds up only in total is refused there.
    """
    at = sec.find(b"\n@@ -")
    header, hunks = (sec, b"") if at < 0 else (sec[:at], sec[at + 1:])
    lines = header.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rec = _Record(lineno, True, _git_header_names(lines[0][11:], lineno))
    k, n = 1, len(lines)
    while k < n:
        line = lines[k].rstrip(b"\r")
        if line.startswith(b"--- ") and k + 1 < n and lines[k + 1].startswith(b"+++ ") \
                and not rec.minus_seen:
            rec.minus, rec.minus_seen = _traditional_name(line[4:], lineno + k), True
            rec.plus, rec.plus_seen = _traditional_name(lines[k + 1][4:], lineno + k + 1), True
            k += 2
            continue
        if not line.startswith(_EXTENDED) and not (
                line.startswith(b"Binary files ") and line.endswith(b" differ")):
            return None
        _header_line(rec, line, lineno + k)
        k += 1
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


def scan(data: bytes) -> list[FileChange]:
    """Every file a unified diff names, from its headers alone (hunk bodies skipped)."""
    from ballot_guard import gitdiff

    bulk = gitdiff.read(data)
    if bulk is not None:
        return bulk
    starts = [m.start() for m in _GIT_START.finditer(data)]
    records: list[_Record] = []
    if not starts or starts[0] > 0:  # a plain diff, or text before the first git section
        end = starts[0] if starts else len(data)
        records += _scan_lines(data[:end])
    line = data.count(b"\n", 0, starts[0]) + 1 if starts else 1
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(data)
        sec = data[start:end]
        rec = _fast_section(sec, line)
        if rec is not None:
            records.append(rec)
        else:
            records += _scan_lines(sec, line)
        line += sec.count(b"\n")
    changes: list[FileChange] = []
    for r in records:
        changes.extend(_record_changes(r))
    return changes


def _name(rest: bytes) -> bytes:
    return unquote(rest)[0] if rest.startswith(b'"') else rest


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
            name = _name(line[len(prefix):])
            if name.startswith(b"/"):
                raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(name)!r}")
            if cur is None or not cur.git or cur.hunks or getattr(cur, attr) is not None:
                if cur is None:
                    raise PatchError(f"line {lineno}: '{prefix.decode().strip()}' outside a diff")
                cur.extra = (*cur.extra, name)
            else:
                setattr(cur, attr, name)
            return


def _numstat_raw(root: str, data: bytes) -> bytes:
    res = git.run(["apply", "--numstat", "-z", "--whitespace=nowarn", "-"], cwd=root,
                  input=data, check=False)
    if res.code != 0:
        reason = os.fsdecode(res.stderr).strip().splitlines()
        raise PatchError("malformed patch: "
                         + ("; ".join(reason[:3]) or f"git apply exit {res.code}"))
    return res.stdout


def _numstat_paths(out: bytes, known: set[str] | frozenset[str]) -> list[str]:
    paths = []
    text = out.decode(_ENC, _ERRORS)  # as os.fsdecode, in one call
    for rec in text.split("\0")[:-1] if text else []:
        parts = rec.split("\t", 2)
        if len(parts) != 3:
            raise PatchError(f"unexpected git apply --numstat output {rec[:80]!r}")
        path = parts[2]
        paths.append(path if path in known else normalize(os.fsencode(path), lineno=0))
    return paths


def numstat(root: str, data: bytes, known: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The paths git's own parser finds (``git apply --numstat -z``), normalised.

    A path already in ``known`` (normal already) is passed through unchecked.
    """
    return _numstat_paths(_numstat_raw(root, data), known)


def files(root: str, data: bytes) -> tuple[FileChange, ...]:
    """The union of both readings; an empty (blank) patch touches nothing.

    git's reading runs in a thread (git works in its own process) while ours
    runs here, so the two cost about as much as the slower of them.
    """
    import threading

    if not data.strip():
        return ()
    box: dict[str, Any] = {}

    def git_reading() -> None:
        try:
            box["out"] = _numstat_raw(root, data)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            box["error"] = exc

    worker = threading.Thread(target=git_reading, name="git apply --numstat", daemon=True)
    worker.start()
    try:
        scanned = scan(data)
    finally:
        worker.join()
    if not scanned:
        raise PatchError("no diff found in the patch")
    if "error" in box:
        raise box["error"]
    result = list(scanned)
    seen = {p for f in scanned for p in (f.path, f.old_path) if p is not None}
    for path in _numstat_paths(box["out"], seen):
        if path not in seen:
            seen.add(path)
            result.append(FileChange("M", path))
    return tuple(result)


class Applied:
    """HEAD with the patch applied, in a temporary index, built on first use."""

    def __init__(self, root: str, base: str | None, data: bytes) -> None:
        self.root, self.base, self.data = root, base, data
        self._dir: str | None = None
        self._snapshot: git.Snapshot | None = None

    def snapshot(self) -> git.Snapshot:
        if self._snapshot is not None:
            return self._snapshot
        self._dir = tempfile.mkdtemp(prefix="ballot-guard-patch-")
        index = os.path.join(self._dir, "index")
        env = dict(os.environ, GIT_INDEX_FILE=index)
        git.run(["read-tree", self.base] if self.base else ["read-tree", "--empty"],
                cwd=self.root, env=env)
        if self.data.strip():
            res = git.run(["apply", "--cached", "--whitespace=nowarn", "-"], cwd=self.root,
                          env=env, input=self.data, check=False)
            if res.code != 0:
                reason = os.fsdecode(res.stderr).strip().splitlines()
                raise PatchError("the patch does not apply to HEAD: "
                                 + ("; ".join(reason[:3]) or f"git apply exit {res.code}"))
        self._snapshot = git.Snapshot(self.root, None, index)
        return self._snapshot

    def close(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
