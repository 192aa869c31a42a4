"""Change records: what a staged index, a commit or a patch touches.

A ``Change`` is a plain record of the files a change touches (status, paths,
modes) and the identities behind it.  It is built here from git's ``-z`` raw
diff output (one pass gives modes and statuses), never from human output, and
without GitPython (the pre-commit hook runs this on every commit).  Renames
are not detected (``--no-renames``): a rename is a delete plus an add, so both
paths count.  Patches build their records in ``ballot_guard.patch``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping

from ballot_guard import git
from ballot_guard.errors import CannotJudge


@dataclass(frozen=True)
class FileChange:
    status: str  # git letter A M D T R C (R/C have old_path)
    path: str  # the new path (for D: the deleted path)
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None


@dataclass(frozen=True)
class Change:
    source: str  # "staged" | "commit" | "patch"
    label: str  # "staged change", "commit 1a2b3c4d5e6f", "patch fix.diff"
    commit: str | None  # the commit's sha (source == "commit")
    base: str | None  # base commit sha (HEAD or first parent); None: unborn / root
    files: tuple[FileChange, ...]
    identities: tuple[str, ...]  # "Name <email>": author, committer, Co-authored-by
    agent_flag: bool  # --agent / BALLOT_GUARD_AGENT (staged, patch)

    def paths(self) -> tuple[str, ...]:
        """Every touched path, both sides of renames and copies, in order, once each."""
        seen: dict[str, None] = {}
        for f in self.files:
            if f.old_path is not None:
                seen.setdefault(f.old_path, None)
            seen.setdefault(f.path, None)
        return tuple(seen)


_DIFF_OPTS = ("-r", "-z", "--no-ext-diff", "--no-renames", "--no-textconv",
              "--ignore-submodules=none", "--full-index")


def parse_raw(data: bytes) -> tuple[FileChange, ...]:
    """Parse ``git diff-* -z`` raw output (no renames): ``:m1 m2 o1 o2 S\\0path\\0``."""
    parts = git.split_z(data)
    files: list[FileChange] = []
    i = 0
    while i < len(parts):
        meta = parts[i]
        if not meta.startswith(":") or i + 1 >= len(parts):
            raise CannotJudge(f"unexpected git diff output near {meta[:60]!r}")
        fields = meta[1:].split(" ")
        old_mode, new_mode, status = fields[0], fields[1], fields[4][:1]
        path = parts[i + 1]
        i += 2
        if status in ("R", "C"):  # only if a user config forces renames on
            new_path = parts[i]
            i += 1
            files.append(FileChange(status, new_path, path, old_mode, new_mode))
            continue
        files.append(FileChange(
            status, path, None,
            None if old_mode == "000000" else old_mode,
            None if new_mode == "000000" else new_mode,
        ))
    return tuple(files)


def agent_env(environ: Mapping[str, str] | None) -> bool:
    """True when ``BALLOT_GUARD_AGENT`` is set to a non-empty value."""
    env = os.environ if environ is None else environ
    return bool(env.get("BALLOT_GUARD_AGENT", ""))


def staged(root: str, *, agent: bool = False, environ: Mapping[str, str] | None = None) -> Change:
    """The staged index (honouring GIT_INDEX_FILE) against HEAD, or the empty tree."""
    base = git.head(root)
    against = base if base is not None else git.empty_tree(root)
    data = git.out(["diff-index", "--cached", *_DIFF_OPTS, against, "--"], cwd=root)
    return Change("staged", "staged change", None, base, parse_raw(data), (),
                  agent or agent_env(environ))


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author: str
    committer: str
    message: str


_IDENT = re.compile(r"^(.*>)\s+\d+\s+[-+]\d{4}$")


def _ident(value: str) -> str:
    m = _IDENT.match(value)
    return (m.group(1) if m else value).strip()


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


_COAUTHOR = re.compile(r"^[ \t>]*co-authored-by[ \t]*:[ \t]*(.+?)[ \t]*$",
                       re.IGNORECASE | re.MULTILINE)


def coauthors(message: str) -> tuple[str, ...]:
    """Every ``Co-authored-by:`` line anywhere in a message (squash merges repeat them)."""
    return tuple(m.group(1) for m in _COAUTHOR.finditer(message.replace("\r", "")))


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


def range_commits(root: str, base: str, tip: str) -> list[str]:
    """The non-merge commits of ``base..tip``, oldest first."""
    b, t = git.resolve(root, base), git.resolve(root, tip)
    data = git.out(["rev-list", "--reverse", "--topo-order", "--no-merges", f"{t}", f"^{b}"],
                   cwd=root)
    return data.decode().split()


def merge_commits(root: str, base: str, tip: str) -> list[str]:
    """The merge commits of ``base..tip``, oldest first."""
    b, t = git.resolve(root, base), git.resolve(root, tip)
    data = git.out(["rev-list", "--reverse", "--topo-order", "--merges", f"{t}", f"^{b}"],
                   cwd=root)
    return data.decode().split()
