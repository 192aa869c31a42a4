"""A unified diff judged before it is applied.

The files a patch touches come from two independent readings, and the change
is their union, so that no path git would apply goes unclassified:

1. ``git apply --numstat -z``: git's own parser, the one that will apply it;
2. a header scan of our own (``ballot_guard.patchscan``; a clean ``git diff``
   is checked in bulk by ``ballot_guard.gitdiff``) that names every path in
   ``diff --git``, ``---``/``+++``, ``rename from/to`` and ``copy from/to``
   lines (hunk bodies are skipped by counting the lines their
   ``@@ -a,b +c,d @@`` header announces, so a removed line reading ``-- x`` is
   not a header).  A traditional diff whose ``---`` and ``+++`` name different
   files counts both.  Names are read by ``ballot_guard.patchnames``.

Hunks are never parsed beyond their line counts.  A malformed diff, or a path
that leaves the repository once normalised (``a/src/../../x``, an absolute
path), cannot be judged (exit 4).  The patch is applied to a temporary index
holding HEAD only when a rule needs the content (``Applied.snapshot``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from ballot_guard import git
from ballot_guard.change import FileChange
from ballot_guard.patchnames import (
    FS_ENCODING,
    FS_ERRORS,
    PatchError,
    normalize,
    unquote,
)
from ballot_guard.patchscan import scan

__all__ = ["Applied", "PatchError", "files", "normalize", "numstat", "scan", "unquote"]


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
    text = out.decode(FS_ENCODING, FS_ERRORS)  # as os.fsdecode, in one call
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


def files(root: str, data: bytes, p0: list[str] | None = None) -> tuple[FileChange, ...]:
    """The union of both readings; an empty (blank) patch touches nothing.

    ``p0``, when given, receives the paths a ``-p0`` reading would touch (see
    ``patchscan.scan``); the caller decides which of them count.

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
        scanned = scan(data, p0)
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
