"""git's raw diff output, read in one place: ``FileChange`` records with both sides'
modes and blob ids.

Every diff of two trees, or of a tree and the index, is asked for with the same
options (``OPTIONS``) and read here: the staged change and a commit
(``ballot_guard.change.from_git``, the scope rules), a merge's own paths
(``ballot_guard.change.merges``) and the change split takes apart
(``ballot_guard.split``).  A raw record is ``:old_mode new_mode old_oid new_oid
STATUS\\0path\\0`` (with ``-z``: a path is bytes up to the NUL, newlines, tabs and
any encoding included, never quoted); a rename or copy (``R100``, ``C075``: a score)
has a second path, the new one; a combined record of a merge (``-c``) has one mode
and one id per parent before the result's, behind one colon per parent.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.errors import CannotJudge

Content = tuple[str, str] | None  # (mode, blob id) of one side; None: the path is absent


class FileChange(NamedTuple):
    """One path a change touches.  Modes and blob ids are None on a side where the path
    is absent (an add's old side, a delete's new side), and the ids are None too where
    nobody can know them (a patch file's records)."""

    status: str  # git letter A M D T R C U X (R/C have old_path)
    path: str  # the new path (for D: the deleted path)
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    old_oid: str | None = None
    new_oid: str | None = None

    @property
    def old(self) -> Content:
        return None if self.old_mode is None else (self.old_mode, self.old_oid or "")

    @property
    def new(self) -> Content:
        return None if self.new_mode is None else (self.new_mode, self.new_oid or "")


# The one set of options: recursive, NUL-terminated raw records, no external diff or
# textconv (nothing of the user's config runs), submodules compared by their commit,
# full object ids (split writes them into an index; rule 5 compares them with the
# checkout's bytes), and no rename detection: a rename is a delete plus an add, so both
# paths count, and the records of a change do not depend on a similarity guess.
OPTIONS = ("-r", "-z", "--raw", "--no-ext-diff", "--no-renames", "--no-textconv",
           "--ignore-submodules=none", "--full-index")


def index(root: str, base: str) -> tuple[FileChange, ...]:
    """The index (honouring GIT_INDEX_FILE) against the tree of ``base``, as ``git
    commit`` would record it."""
    return read(git.out(["diff-index", "--cached", *OPTIONS, base, "--"], cwd=root))


def trees(root: str, old: str, new: str,
          env: Mapping[str, str] | None = None) -> tuple[FileChange, ...]:
    """The tree of ``new`` against the tree of ``old`` (commits or trees)."""
    return read(git.out(["diff-tree", *OPTIONS, old, new, "--"], cwd=root, env=env))


def each_commit(root: str, commits: Sequence[str]) -> list[tuple[str, tuple[FileChange, ...]]]:
    """What each of ``commits`` wrote itself: against its parent, a root commit against
    nothing, and a merge only the paths that differ from every parent (``-c``: combined
    records, whose old side is the first parent's)."""
    if not commits:
        return []
    data = git.out(["diff-tree", "--stdin", "-c", "--root", *OPTIONS], cwd=root,
                   input="".join(f"{c}\n" for c in commits).encode())
    return read_commits(data)


# ---- the reader -------------------------------------------------------------------------

def read(data: bytes) -> tuple[FileChange, ...]:
    """The records of raw ``-z`` output (one parent or combined, scores or not).

    Written for speed: a 20,000-file change goes through it on every commit, so the
    common case (every record of one layout, as ``--full-index`` without renames
    gives) is cut apart by C-level ``map``s, with no Python step per file; anything
    else is read record by record.  Malformed output is CannotJudge.
    """
    enc, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    parts = data.split(b"\0")
    if parts[-1] == b"":
        parts.pop()
    found = _read_bulk(parts, enc, errors)
    if found is not None:
        return found
    records, _ = _read_records(parts, enc, errors, commit_lines=False)
    return tuple(records)


def read_commits(data: bytes) -> list[tuple[str, tuple[FileChange, ...]]]:
    """``diff-tree --stdin`` output: each commit id line, then that commit's records."""
    enc, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    parts = data.split(b"\0")
    if parts[-1] == b"":
        parts.pop()
    records, commits = _read_records(parts, enc, errors, commit_lines=True)
    bounds = [*commits, (len(records), "")]
    return [(sha, tuple(records[start:bounds[k + 1][0]]))
            for k, (start, sha) in enumerate(commits)]


# Status letters of a record without a score (no renames or copies asked for).
_PLAIN = frozenset("ADMTUX")
_SCORED = frozenset("RCM")  # R and C always carry a score; M may (-B)
_HEX = frozenset(b"0123456789abcdef")
_META_BYTES = b"0123456789abcdef :\0" + "".join(sorted(_PLAIN)).encode()
_ID_LENGTHS = (40, 64)  # SHA-1, SHA-256


def _read_bulk(parts: list[bytes], enc: str, errors: str) -> tuple[FileChange, ...] | None:
    """Every record at once when all have one layout (one parent, no score, full ids
    of one length); None when they do not."""
    metas, raw_paths = parts[0::2], parts[1::2]
    if not metas:
        return None if raw_paths else ()
    width = len(metas[0])
    size = (width - 18) // 2  # ":" 6 " " 6 " " id " " id " " letter
    if size not in _ID_LENGTHS or width != 18 + 2 * size or len(metas) != len(raw_paths) \
            or set(map(len, metas)) != {width}:
        return None
    joined = b"\0".join(metas)
    if joined.translate(None, _META_BYTES):  # a byte no such record holds
        return None
    # every record is ``width`` bytes and a NUL: one column of all of them is a stride
    step, count, a, b = width + 1, len(metas), 15 + size, 16 + 2 * size
    if joined[0::step] != b":" * count \
            or any(joined[k::step] != b" " * count for k in (7, 14, a, b)):
        return None
    letters = joined[width - 1::step].decode("ascii")
    rows = joined.decode("ascii").split("\0")
    olds = list(map(itemgetter(slice(1, 7)), rows))
    news = list(map(itemgetter(slice(8, 14)), rows))
    if not set(letters) <= _PLAIN or not all(m.isdigit() for m in {*olds, *news}):
        return None
    old_ids = list(map(itemgetter(slice(15, a)), rows))
    new_ids = list(map(itemgetter(slice(a + 1, b)), rows))
    absent_mode: dict[str, str | None] = {"000000": None}
    absent_id: dict[str, str | None] = {"0" * size: None}
    paths = b"\0".join(raw_paths).decode(enc, errors).split("\0")
    records = zip(letters, paths, repeat(None),
                  map(absent_mode.get, olds, olds), map(absent_mode.get, news, news),
                  map(absent_id.get, old_ids, old_ids), map(absent_id.get, new_ids, new_ids))
    return tuple(map(tuple.__new__, repeat(FileChange), records))


def _side(mode: bytes, oid: bytes) -> tuple[str | None, str | None]:
    """A side's mode and id, None where the path is absent (all zeros), as in bulk."""
    return (None if mode == b"000000" else mode.decode(),
            None if not oid.strip(b"0") else oid.decode())


def _bad(meta: bytes) -> CannotJudge:
    return CannotJudge(f"unexpected git diff output near {meta[:60]!r}")


def _is_id(part: bytes) -> bool:
    return len(part) in _ID_LENGTHS and set(part) <= _HEX


def _read_records(parts: list[bytes], enc: str, errors: str, *, commit_lines: bool
                  ) -> tuple[list[FileChange], list[tuple[int, str]]]:
    """Record by record; with ``commit_lines``, a commit id standing where a record would
    start opens that commit's records (``--stdin``).  Returns the records and, for each
    commit line, where its records start."""
    files: list[FileChange] = []
    commits: list[tuple[int, str]] = []
    i, n = 0, len(parts)
    while i < n:
        meta = parts[i]
        if commit_lines and _is_id(meta):
            commits.append((len(files), meta.decode()))
            i += 1
            continue
        colons = len(meta) - len(meta.lstrip(b":"))
        fields = meta[colons:].split(b" ")
        if colons < 1 or len(fields) != 2 * (colons + 1) + 1 or i + 1 >= n:
            raise _bad(meta)
        modes, ids, status = fields[:colons + 1], fields[colons + 1:-1], fields[-1]
        if not all(len(m) == 6 and m.isdigit() for m in modes) \
                or len({len(x) for x in ids}) != 1 or not all(_is_id(x) for x in ids):
            raise _bad(meta)
        letter, score = status[:1].decode("ascii", "replace"), status[1:]
        # a combined record's status has a letter a parent: its first (the first parent's)
        if colons > 1 and not set(status.decode("ascii", "replace")) <= _PLAIN | {"R", "C"}:
            raise _bad(meta)
        if colons == 1 and not ((letter in _PLAIN and not score)
                                or (letter in _SCORED and score.isdigit())):
            raise _bad(meta)
        old_mode, old_oid = _side(modes[0], ids[0])
        new_mode, new_oid = _side(modes[-1], ids[-1])
        path = parts[i + 1].decode(enc, errors)
        i += 2
        if colons == 1 and letter in ("R", "C"):
            if i >= n:
                raise _bad(meta)
            files.append(FileChange(letter, parts[i].decode(enc, errors), path, old_mode,
                                    new_mode, old_oid, new_oid))
            i += 1
            continue
        files.append(FileChange(letter, path, None, old_mode, new_mode, old_oid, new_oid))
    return files, commits

