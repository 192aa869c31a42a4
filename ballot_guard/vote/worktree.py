"""A clean temporary worktree of a revision, the commit byte for byte, removed afterwards.

``gate --rev REV`` votes on exactly what REV holds: untracked and unstaged
files of the user's checkout never touch it.  git runs with a scrubbed
``GIT_*`` environment and no hooks (a post-checkout hook is not ours to run).

git's own checkout would pass every file through the repository's filters and
attributes (a smudge filter named in ``.git/info/attributes`` and defined in
``.git/config``, none of them tracked, could hand the vote a property the
commit does not hold), and no configuration turns off every filter driver by
name.  So the worktree is added without a checkout, its index is read from the
commit (``read-tree``: no filter runs), and every blob is written verbatim
from ``git cat-file --batch``, with its mode; a link gets its target, a
submodule an empty directory.  That is also what the pin and the scope rules
read: the objects, with no eol, encoding or ``ident`` conversion, whatever the
committed ``.gitattributes`` says.  Paths git would refuse (``..``, ``.git``,
absolute) are refused here too, and nothing is written through a link.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping

from ballot_guard import git
from ballot_guard.errors import CannotJudge

_NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")


@contextlib.contextmanager
def checkout(root: str, sha: str, *, environ: Mapping[str, str] | None = None) -> Iterator[str]:
    """Yield the path of a detached worktree of ``sha``; remove it on exit (Ctrl-C included)."""
    env = git.scrubbed_env(environ)
    tmp = tempfile.mkdtemp(prefix="ballot-guard-rev-")
    path = os.path.join(tmp, "tree")
    added = False
    try:
        git.run([*_NO_HOOKS, "worktree", "add", "--detach", "--no-checkout", "--quiet", path,
                 sha], cwd=root, env=env)
        added = True
        populate(path, sha, env)
        yield path
    finally:
        if added:
            git.run([*_NO_HOOKS, "worktree", "remove", "--force", "--force", path],
                    cwd=root, env=env, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        git.run(["worktree", "prune"], cwd=root, env=env, check=False)


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(
        p not in ("", ".", "..") and p.lower().rstrip(". ") != ".git" for p in parts)


def populate(tree: str, sha: str, env: Mapping[str, str]) -> None:
    """Write the tree of ``sha`` into the empty work tree ``tree`` from git's objects."""
    git.run([*_NO_HOOKS, "read-tree", sha], cwd=tree, env=env)
    entries = git.Snapshot(tree, rev=sha).entries()
    for e in entries:
        if not _safe(e.path):
            raise CannotJudge(f"commit {sha[:12]} holds a path git would not check out: "
                              f"{e.path!r}")
    base = os.fsencode(tree)
    made = {base}

    def parent_of(rel: str) -> bytes:
        parent = os.path.dirname(os.path.join(base, os.fsencode(rel)))
        missing = []
        d = parent
        while d not in made:
            missing.append(d)
            d = os.path.dirname(d)
        for d in reversed(missing):
            os.mkdir(d)  # fails on anything already there (a link a blob put in the way)
            made.add(d)
        return parent

    blobs = [e for e in entries if e.mode in ("100644", "100755", "120000")]
    with git.BlobReader(tree, env, bulk=True) as reader:
        for e, (_size, chunks) in zip(blobs, reader.stream([e.oid for e in blobs]), strict=True):
            full = os.path.join(parent_of(e.path), os.fsencode(os.path.basename(e.path)))
            if e.mode == "120000":
                os.symlink(b"".join(chunks), full)
                continue
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(full, flags, 0o777 if e.mode == "100755" else 0o666)
            with os.fdopen(fd, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
    for e in entries:
        if e.mode == "160000":
            parent_of(e.path)
            os.mkdir(os.path.join(base, os.fsencode(e.path)))
