"""Change records: what a staged index or a commit touches, and who made it.

A ``Change`` is a plain record of the files a change touches (``FileChange``
records of ``ballot_guard.change.raw_diff``, the one reader of git's raw diff
output) and the identities behind it, read from git's machine output (raw diff
records, raw commit headers), never from human output, and without GitPython
(the pre-commit hook runs this on every commit).  Renames are not detected: a
rename is a delete plus an add, so both paths count.  Patches build their
records in ``ballot_guard.change.from_patch``.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from operator import itemgetter
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.change import raw_diff
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.vocabulary import Source

_PATH, _OLD_PATH = itemgetter(1), itemgetter(2)  # FileChange.path, .old_path, at C speed


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
        if not any(map(_OLD_PATH, files)):  # no rename or copy: one path per file
            return tuple(dict.fromkeys(map(_PATH, files)))
        return tuple(dict.fromkeys(
            p for f in files
            for p in ((f.path,) if f.old_path is None else (f.old_path, f.path))))


def agent_env(environ: Mapping[str, str] | None) -> bool:
    """True when ``BALLOT_GUARD_AGENT`` is set to a non-empty value."""
    env = os.environ if environ is None else environ
    return bool(env.get("BALLOT_GUARD_AGENT", ""))


def staged_at(root: str, base: str | None, *, agent: bool = False,
              environ: Mapping[str, str] | None = None) -> Change:
    """The staged index against ``base`` (HEAD's sha, known to the caller; None: unborn)."""
    against = base if base is not None else git.empty_tree(root)
    return Change("staged", "staged change", None, base, raw_diff.index(root, against), (),
                  agent or agent_env(environ))


class CommitInfo(NamedTuple):
    """A commit as ``git cat-file commit`` stores it: raw headers (no format strings, no
    mailmap) and message.  The one reader of commit headers: the scope rules take its
    identities, split its author, message and encoding."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    author: str  # "Name <email>", as identities are matched (UTF-8, bad bytes replaced)
    committer: str
    message: str  # decoded as UTF-8, bad bytes replaced
    raw_message: bytes  # the message's bytes as stored
    encoding: str | None  # the ``encoding`` header, when the message declares one
    author_line: bytes | None  # the raw ``author`` header: name, <email>, date, zone


def _ident(value: bytes) -> str:
    """``Name <email>`` of a raw ``author``/``committer`` header (drop the timestamp)."""
    text = value.decode("utf-8", "replace")
    end = text.rfind(">")
    return (text[:end + 1] if end >= 0 else text).strip()


def commit_info(root: str, sha: str) -> CommitInfo:
    """Read ``git cat-file commit``: its headers up to the first blank line, then the
    message (a header's continuation lines, as in ``gpgsig``, start with a space and
    name no key)."""
    raw = git.out(["cat-file", "commit", sha], cwd=root)
    head, _, body = raw.partition(b"\n\n")
    tree, parents, author, committer = "", [], "", ""
    author_line: bytes | None = None
    encoding: str | None = None
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = value.decode("ascii", "replace")
        elif key == b"parent":
            parents.append(value.decode("ascii", "replace"))
        elif key == b"author":
            author, author_line = _ident(value), value
        elif key == b"committer":
            committer = _ident(value)
        elif key == b"encoding":
            encoding = value.decode("ascii", "replace")
    return CommitInfo(sha, tree, tuple(parents), author, committer,
                      body.decode("utf-8", "replace"), body, encoding, author_line)


_COAUTHOR = r"^[ \t>]*co-authored-by[ \t]*:[ \t]*(.+?)[ \t]*$"


def coauthors(message: str) -> tuple[str, ...]:
    """Every ``Co-authored-by:`` line anywhere in a message (squash merges repeat them)."""
    pattern = re.compile(_COAUTHOR, re.IGNORECASE | re.MULTILINE)
    return tuple(m.group(1) for m in pattern.finditer(message.replace("\r", "")))


def range_all(root: str, base: str, tip: str) -> list[tuple[str, bool]]:
    """Every commit of ``base..tip``, oldest first, with whether it is a merge."""
    b, t = git.resolve(root, base), git.resolve(root, tip)
    data = git.out(["rev-list", "--reverse", "--topo-order", "--parents", t, f"^{b}"],
                   cwd=root)
    return [(line.split()[0], len(line.split()) > 2) for line in data.decode().splitlines()]
