"""A unified diff judged before it is applied.

The files a patch touches come from two independent readings, and the change
is their union, so that no path git would apply goes unclassified:

1. ``git apply --numstat -z``: git's own parser, the one that will apply it;
2. a header scan of our own (``ballot_guard.change.patch_lines``; a clean ``git diff``
   is checked in bulk by ``ballot_guard.change.patch_bulk``) that names every path in
   ``diff --git``, ``---``/``+++``, ``rename from/to`` and ``copy from/to``
   lines (hunk bodies are skipped by counting the lines their
   ``@@ -a,b +c,d @@`` header announces, so a removed line reading ``-- x`` is
   not a header).  A traditional diff whose ``---`` and ``+++`` name different
   files counts both.  Names are read by ``ballot_guard.change.patch_names``.

Every line our reading does not consume is scanned as GNU ``patch`` would scan it
(``ballot_guard.change.patch_start``): what ``patch`` could apply there (an indented or
encapsulated section, a context, normal or ed diff) is refused, so that nothing
``patch`` would change goes unjudged.

Hunks are never parsed beyond their line counts.  A malformed diff, or a path
that leaves the repository once normalised (``a/src/../../x``, an absolute
path), cannot be judged (exit 4).  The patch is applied to a temporary index
holding HEAD only when a rule needs the content (``Applied.snapshot``).
"""
from __future__ import annotations

import os
import re
from operator import itemgetter

from ballot_guard import git
from ballot_guard.change import patch_bulk
from ballot_guard.change.patch_lines import (
    _GIT_START,
    _Record,
    fast_section,
    p0_paths,
    record_changes,
    scan_lines,
)
from ballot_guard.change.patch_names import (
    FS_ENCODING,
    FS_ERRORS,
    PatchError,
    normalize,
    unquote,
)
from ballot_guard.change.raw_diff import FileChange

__all__ = ["Applied", "PatchError", "files", "normalize", "numstat", "scan", "unquote"]


_NUMSTAT = ("apply", "--numstat", "-z", "--whitespace=nowarn", "-")


def scan(data: bytes, p0: list[str] | None = None) -> list[FileChange]:
    """Every file a unified diff names, from its headers alone (hunk bodies skipped).

    ``p0``, when given, receives the names as a ``-p0`` reading would take them
    (``p0_paths``): git applies with ``-p1``, but a patch whose names carry no
    ``a/`` ``b/`` prefix may be meant for ``patch -p0``, which would touch other paths."""
    bulk = patch_bulk.read(data, p0)
    if bulk is not None:
        return bulk
    starts = [m.start() for m in _GIT_START.finditer(data)]
    records: list[_Record] = []
    if not starts or starts[0] > 0:  # a plain diff, or text before the first git section
        end = starts[0] if starts else len(data)
        records += scan_lines(data[:end])
    line = data.count(b"\n", 0, starts[0]) + 1 if starts else 1
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(data)
        sec = data[start:end]
        rec = fast_section(sec, line)
        if rec is not None:
            records.append(rec)
        else:
            records += scan_lines(sec, line)
        line += sec.count(b"\n")
    changes: list[FileChange] = []
    for r in records:
        changes.extend(record_changes(r))
    if p0 is not None:
        p0_paths(records, p0)
    return changes


def _numstat_out(res: git.Result) -> bytes:
    if res.code != 0:
        reason = os.fsdecode(res.stderr).strip().splitlines()
        raise PatchError("malformed patch: "
                         + ("; ".join(reason[:3]) or f"git apply exit {res.code}"))
    return res.stdout


def _numstat_raw(root: str, data: bytes) -> bytes:
    return _numstat_out(git.run(_NUMSTAT, cwd=root, input=data, check=False))


# One ``git apply --numstat -z`` record: added, deleted, path (which may hold tabs).
_RECORDS = re.compile(r"(?:[^\t\0]*\t[^\t\0]*\t[^\0]*\0)*")
_RECORD_PATH = re.compile(r"[^\t\0]*\t[^\t\0]*\t([^\0]*)\0")


def _numstat_raw_paths(out: bytes) -> list[str]:
    """The paths of git's numstat records as written (fsdecoded, not normalised)."""
    text = out.decode(FS_ENCODING, FS_ERRORS)  # as os.fsdecode, in one call
    paths = _RECORD_PATH.findall(text)
    # Each match ends at a NUL and none holds one, and a record of fewer than two tabs
    # holds no match: one match per NUL, the last at the end, is every record read.
    if len(paths) != text.count("\0") or text[-1:] not in ("", "\0"):
        whole = _RECORDS.match(text)
        bad = text[whole.end() if whole else 0:]
        raise PatchError(f"unexpected git apply --numstat output {bad[:80]!r}")
    return paths


def _numstat_paths(out: bytes, known: set[str] | frozenset[str]) -> list[str]:
    return _known_or_normal(_numstat_raw_paths(out), known)


def _known_or_normal(paths: list[str], known: set[str] | frozenset[str]) -> list[str]:
    unknown = set(paths).difference(known)
    if not unknown:
        return paths  # every one already read (and normalised) by our own reading
    return [path if path not in unknown else normalize(os.fsencode(path), lineno=0)
            for path in paths]


def numstat(root: str, data: bytes, known: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The paths git's own parser finds (``git apply --numstat -z``), normalised.

    A path already in ``known`` (normal already) is passed through unchecked.
    """
    return _numstat_paths(_numstat_raw(root, data), known)


def files(root: str, data: bytes, p0: list[str] | None = None) -> tuple[FileChange, ...]:
    """The union of both readings; an empty (blank) patch touches nothing.

    ``p0``, when given, receives the paths a ``-p0`` reading would touch (see
    ``ballot_guard.change.patch_lines``); the caller decides which of them count.

    git's reading runs in its own process (``git.Background``) while ours runs
    here, so the two cost about as much as the slower of them.
    """
    if not data.strip():
        return ()
    reading = git.Background(_NUMSTAT, cwd=root, input=data)
    try:
        scanned = scan(data, p0)
    except BaseException:
        reading.close()
        raise
    res = reading.result()
    if not scanned:
        raise PatchError("no diff found in the patch")
    raw = _numstat_raw_paths(_numstat_out(res))
    if raw == list(map(itemgetter(1), scanned)):
        return tuple(scanned)  # the usual case: git read the same files, in the same order

    result = list(scanned)
    seen = set(map(itemgetter(1), scanned)) | set(map(itemgetter(2), scanned))
    seen.discard(None)
    gits = _known_or_normal(raw, seen)
    if seen.issuperset(gits):
        return tuple(result)  # the usual case: git found nothing we had not
    for path in gits:
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
        import tempfile  # noqa: PLC0415 - lazy: rare branch: tempfile (with shutil and random, 5.3 ms) only when a rule needs the patch applied

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
            import shutil  # noqa: PLC0415 - lazy: rare branch: shutil (2.3 ms, loaded with tempfile above) only when snapshot() made the directory

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
