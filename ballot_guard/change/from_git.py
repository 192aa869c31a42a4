"""Change records: what a staged index, a commit or a patch touches.

A ``Change`` is a plain record of the files a change touches (status, paths,
modes) and the identities behind it.  It is built here from git's ``-z`` raw
diff output (one pass gives modes and statuses), never from human output, and
without GitPython (the pre-commit hook runs this on every commit).  Renames
are not detected (``--no-renames``): a rename is a delete plus an add, so both
paths count.  Patches build their records in ``ballot_guard.change.from_patch``.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.errors import CannotJudge
from ballot_guard.vocabulary import Source


class FileChange(NamedTuple):
    status: str  # git letter A M D T R C (R/C have old_path)
    path: str  # the new path (for D: the deleted path)
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None


class Change(NamedTuple):
    source: Source
    label: str  # "staged change", "commit 1a2b3c4d5e6f", "patch fix.diff"
    commit: str | None  # the commit's sha (source == "commit")
    base: str | None  # base commit sha (HEAD or first parent); None: unborn / root
    files: tuple[FileChange, ...]
    identities: tuple[str, ...]  # "Name <email>": author, committer, Co-authored-by
    agent_flag: bool  # --agent / BALLOT_GUARD_AGENT (staged, patch)

    def paths(self) -> tuple[str, ...]:
        """Every touched path, both sides of renames and copies, in order, once each."""
        files = self.files
        if all(f[2] is None for f in files):  # no rename or copy: one path per file
            return tuple(dict.fromkeys([f[1] for f in files]))
        return tuple(dict.fromkeys(
            p for f in files
            for p in ((f.path,) if f.old_path is None else (f.old_path, f.path))))


_DIFF_OPTS = ("-r", "-z", "--no-ext-diff", "--no-renames", "--no-textconv",
              "--ignore-submodules=none", "--full-index")


def parse_raw(data: bytes) -> tuple[FileChange, ...]:
    """Parse ``git diff-* -z`` raw output (no renames): ``:m1 m2 o1 o2 S\\0path\\0``.

    Paths are decoded as ``os.fsdecode`` does.  Written for speed: a
    20,000-file change goes through it on every commit, so the common case (every
    record of one layout, as ``--full-index`` gives) is cut apart by C-level
    ``map``s, with no Python step per file.
    """
    from itertools import repeat
    from operator import itemgetter

    enc, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    metas, raw_paths = parts[0::2], parts[1::2]
    if not metas:
        return () if not raw_paths else _parse_raw_slow(parts, enc, errors)
    width = len(metas[0])
    if len(metas) != len(raw_paths) or width < 17 or set(map(len, metas)) != {width} \
            or b"".join(map(itemgetter(slice(0, 1)), metas)) != b":" * len(metas):
        return _parse_raw_slow(parts, enc, errors)
    olds = list(map(itemgetter(slice(1, 7)), metas))
    news = list(map(itemgetter(slice(8, 14)), metas))
    letters = list(map(itemgetter(slice(width - 2, width)), metas))  # " M"
    kinds = set(letters)
    if not kinds <= _LETTERS.keys():
        return _parse_raw_slow(parts, enc, errors)
    modes = {m: None if m == b"000000" else m.decode() for m in {*olds, *news}}
    if not all(len(m) == 6 and m.isdigit() for m in modes):
        return _parse_raw_slow(parts, enc, errors)
    paths = b"\0".join(raw_paths).decode(enc, errors).split("\0")
    rows = zip(map(_LETTERS.__getitem__, letters), paths, repeat(None),
               map(modes.__getitem__, olds), map(modes.__getitem__, news))
    return tuple(map(tuple.__new__, repeat(FileChange), rows))


# Status letters of a raw record without a score (no renames or copies asked for).
_LETTERS = {b" " + c.encode(): c for c in "AMDTUX"}


def _parse_raw_slow(parts: list[bytes], enc: str, errors: str) -> tuple[FileChange, ...]:
    files: list[FileChange] = []
    i, n = 0, len(parts)
    while i < n:
        meta = parts[i]
        if meta[:1] != b":" or i + 1 >= n:
            raise CannotJudge(f"unexpected git diff output near {meta[:60]!r}")
        old_mode, new_mode = meta[1:7].decode(), meta[8:14].decode()
        status = meta[meta.rfind(b" ") + 1:][:1].decode()
        path = parts[i + 1].decode(enc, errors)
        i += 2
        if status in ("R", "C"):
            files.append(FileChange(status, parts[i].decode(enc, errors), path, old_mode,
                                    new_mode))
            i += 1
            continue
        files.append(FileChange(status, path, None,
                                None if old_mode == "000000" else old_mode,
                                None if new_mode == "000000" else new_mode))
    return tuple(files)


def _file_change(old_mode: str | None, new_mode: str | None, status: str,
                 path: str) -> FileChange:
    """FileChange(status, path, None, old_mode, new_mode), built directly as the tuple
    it is (a 20,000-file change makes 20,000 of these)."""
    return tuple.__new__(FileChange, (status, path, None, old_mode, new_mode))


def agent_env(environ: Mapping[str, str] | None) -> bool:
    """True when ``BALLOT_GUARD_AGENT`` is set to a non-empty value."""
    env = os.environ if environ is None else environ
    return bool(env.get("BALLOT_GUARD_AGENT", ""))


def staged(root: str, *, agent: bool = False, environ: Mapping[str, str] | None = None) -> Change:
    """The staged index (honouring GIT_INDEX_FILE) against HEAD, or the empty tree."""
    return staged_at(root, git.head(root), agent=agent, environ=environ)


def staged_at(root: str, base: str | None, *, agent: bool = False,
              environ: Mapping[str, str] | None = None) -> Change:
    """The staged index against ``base`` (HEAD's sha, known to the caller; None: unborn)."""
    against = base if base is not None else git.empty_tree(root)
    data = git.out(["diff-index", "--cached", *_DIFF_OPTS, against, "--"], cwd=root)
    return Change("staged", "staged change", None, base, parse_raw(data), (),
                  agent or agent_env(environ))


class CommitInfo(NamedTuple):
    sha: str
    tree: str
    parents: tuple[str, ...]
    author: str
    committer: str
    message: str


def _ident(value: str) -> str:
    """``Name <email>`` of a raw ``author``/``committer`` header (drop the timestamp)."""
    end = value.rfind(">")
    return (value[:end + 1] if end >= 0 else value).strip()


def commit_info(root: str, sha: str) -> CommitInfo:
    """Parse ``git cat-file commit`` (raw headers: no format strings, no mailmap)."""
    raw = git.out(["cat-file", "commit", sha], cwd=root)
    head, _, body = raw.partition(b"\n\n")
    tree, parents, author, committer = "", [], "", ""
    for line in head.decode("utf-8", "replace").split("\n"):
        key, _, value = line.partition(" ")
        if key == "tree":
            tree = value
        elif key == "parent":
            parents.append(value)
        elif key == "author":
            author = _ident(value)
        elif key == "committer":
            committer = _ident(value)
    return CommitInfo(sha, tree, tuple(parents), author, committer,
                      body.decode("utf-8", "replace"))


_COAUTHOR = r"^[ \t>]*co-authored-by[ \t]*:[ \t]*(.+?)[ \t]*$"


def coauthors(message: str) -> tuple[str, ...]:
    """Every ``Co-authored-by:`` line anywhere in a message (squash merges repeat them)."""
    import re

    pattern = re.compile(_COAUTHOR, re.IGNORECASE | re.MULTILINE)
    return tuple(m.group(1) for m in pattern.finditer(message.replace("\r", "")))


def commit(root: str, rev: str) -> Change:
    """A commit against its first parent (a root commit against the empty tree)."""
    sha = git.resolve(root, rev)
    info = commit_info(root, sha)
    base = info.parents[0] if info.parents else None
    against = base if base is not None else git.empty_tree(root)
    data = git.out(["diff-tree", *_DIFF_OPTS, against, sha, "--"], cwd=root)
    identities = (info.author, info.committer, *coauthors(info.message))
    return Change("commit", f"commit {sha[:12]}", sha, base, parse_raw(data),
                  identities, False)


def range_all(root: str, base: str, tip: str) -> list[tuple[str, bool]]:
    """Every commit of ``base..tip``, oldest first, with whether it is a merge."""
    b, t = git.resolve(root, base), git.resolve(root, tip)
    data = git.out(["rev-list", "--reverse", "--topo-order", "--parents", t, f"^{b}"],
                   cwd=root)
    return [(line.split()[0], len(line.split()) > 2) for line in data.decode().splitlines()]
