"""Git plumbing for split: read a change, build a tree in a temporary index, commit, move HEAD.

Every call goes through ``ballot_guard.git`` and none of them writes the
working tree or the user's index: trees are built in a temporary index
(``GIT_INDEX_FILE``), commits with ``commit-tree`` (which runs no hook), and
HEAD moves with ``update-ref``'s old-value check.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from ballot_guard import git
from ballot_guard.change import raw_diff
from ballot_guard.change.from_git import commit_info
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.errors import CannotJudge


@dataclass(frozen=True)
class Update:
    """One entry the oracle commit takes: a path with its mode and object, or a deletion."""

    path: str
    mode: str | None  # None: delete
    oid: str | None

    def index_info(self, null_oid: str) -> bytes:
        if self.mode is None:
            return b"0 " + null_oid.encode() + b"\t" + os.fsencode(self.path) + b"\0"
        assert self.oid is not None
        return f"{self.mode} {self.oid}\t".encode() + os.fsencode(self.path) + b"\0"


# ---- reading the change -------------------------------------------------------------------

def staged_changes(root: str, base: str) -> tuple[FileChange, ...]:
    """The staged change against ``base``, as git commit would record it."""
    files = raw_diff.index(root, base)
    for f in files:
        if f.status == "U":
            raise CannotJudge(f"cannot split: {f.path} is unmerged; resolve the conflict first")
    return files


# ---- building the oracle tree -------------------------------------------------------------

def build_tree(root: str, base: str, updates: Sequence[Update]) -> str:
    """The tree of ``base`` with ``updates`` applied, built in a temporary index."""
    null_oid = "0" * len(base)
    with tempfile.TemporaryDirectory(prefix="ballot-guard-split-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        plain = ("-c", "core.splitIndex=false")  # no shared index file left in .git
        git.run([*plain, "read-tree", base], cwd=root, env=env)
        if updates:
            payload = b"".join(u.index_info(null_oid) for u in updates)
            git.run([*plain, "update-index", "-z", "--index-info"], cwd=root, env=env,
                    input=payload)
        tree = git.out([*plain, "write-tree"], cwd=root, env=env).decode().strip()
    _check_tree(root, base, tree, updates)
    return tree


def _check_tree(root: str, base: str, tree: str, updates: Sequence[Update]) -> None:
    """The new tree must differ from ``base`` in exactly the planned entries.

    A file replaced by a directory (or the reverse) across the oracle/behaviour
    boundary cannot be split: the index would drop the other side silently.
    """
    got = {f.path: (None if f.new_mode is None else (f.new_mode, f.new_oid))
           for f in raw_diff.trees(root, base, tree)}
    want = {u.path: (None if u.mode is None else (u.mode, u.oid)) for u in updates}
    if got != want:
        odd = sorted(p for p in set(got) | set(want) if got.get(p, 0) != want.get(p, 0))
        raise CannotJudge(
            "cannot split: the oracle part cannot be committed without the behaviour part "
            f"(a file and a directory swap places at {', '.join(odd[:3])})")


def blob(root: str, data: bytes) -> str:
    """Write ``data`` as a blob object (no filters) and return its name."""
    return git.out(["hash-object", "-w", "--no-filters", "--stdin"], cwd=root,
                   input=data).decode().strip()


# ---- committing ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Author:
    name: str
    email: str
    date: str  # git's internal format: "<seconds> <+zone>"

    def env(self) -> dict[str, str]:
        return {"GIT_AUTHOR_NAME": self.name, "GIT_AUTHOR_EMAIL": self.email,
                "GIT_AUTHOR_DATE": self.date}


def read_commit(root: str, sha: str) -> tuple[Author, list[str], bytes, str | None]:
    """A commit's author, parents, raw message bytes and declared encoding."""
    info = commit_info(root, sha)
    if info.author_line is None:
        raise CannotJudge(f"commit {sha[:12]} has no author line")
    who, _, when = info.author_line.rpartition(b"> ")
    name, _, email = who.partition(b" <")
    author = Author(os.fsdecode(name), os.fsdecode(email), when.decode())
    return author, list(info.parents), info.raw_message, info.encoding


def commit_tree(root: str, tree: str, parent: str, message: bytes, *,
                author: Author | None = None, encoding: str | None = None) -> str:
    """A commit object; identity and signing as git commit would choose them.

    No hook runs (commit-tree has none).  ``encoding`` keeps a message's
    declared non-UTF-8 encoding header.
    """
    env: dict[str, str] | None = None
    if author is not None:
        env = dict(os.environ, **author.env())
    opts = ["-c", f"i18n.commitEncoding={encoding}"] if encoding else []
    return git.out([*opts, "commit-tree", tree, "-p", parent], cwd=root, env=env,
                   input=message).decode().strip()


def move_head(root: str, new: str, old: str, reason: str) -> None:
    """Point HEAD (or the branch it names) at ``new`` only if it still is ``old``."""
    res = git.run(["update-ref", "-m", f"ballot-guard split: {reason}", "HEAD", new, old],
                  cwd=root, check=False)
    if res.code != 0:
        raise CannotJudge("cannot split: HEAD could not be moved (it moved meanwhile, or its "
                          "ref is locked); nothing was changed "
                          f"({git.describe_failure(['update-ref'], res)})")


# ---- guards -------------------------------------------------------------------------------

_IN_PROGRESS = {"MERGE_HEAD": "a merge", "CHERRY_PICK_HEAD": "a cherry-pick",
                "REVERT_HEAD": "a revert"}


def refuse_in_progress(root: str) -> None:
    args = [a for name in _IN_PROGRESS for a in ("--git-path", name)]
    paths = git.out(["rev-parse", *args], cwd=root).splitlines()
    for what, path in zip(_IN_PROGRESS.values(), paths, strict=True):
        if os.path.exists(os.path.join(root, os.fsdecode(path))):
            raise CannotJudge(f"cannot split: {what} is in progress; finish or abort it first")


def pushed_to(root: str, sha: str) -> list[str]:
    """Remote-tracking refs that already contain ``sha`` (ref names hold no newline)."""
    data = git.out(["for-each-ref", "--contains", sha, "--format=%(refname)", "refs/remotes/"],
                   cwd=root)
    return [os.fsdecode(r) for r in data.splitlines() if r]


def cat_blob(root: str, oid: str) -> bytes:
    return git.out(["cat-file", "blob", oid], cwd=root)
