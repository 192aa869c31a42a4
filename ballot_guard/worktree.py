"""A clean temporary worktree of a revision, removed afterwards whatever happens.

``gate --rev REV`` votes on exactly what REV holds: untracked and unstaged
files of the user's checkout never touch it.  git runs with a scrubbed
``GIT_*`` environment and no hooks (a post-checkout hook is not ours to run).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator, Mapping

from ballot_guard import git

_NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")


@contextlib.contextmanager
def checkout(root: str, sha: str, *, environ: Mapping[str, str] | None = None) -> Iterator[str]:
    """Yield the path of a detached worktree of ``sha``; remove it on exit (Ctrl-C included)."""
    env = git.scrubbed_env(environ)
    tmp = tempfile.mkdtemp(prefix="ballot-guard-rev-")
    path = os.path.join(tmp, "tree")
    added = False
    try:
        git.run([*_NO_HOOKS, "worktree", "add", "--detach", "--quiet", path, sha],
                cwd=root, env=env)
        added = True
        yield path
    finally:
        if added:
            git.run([*_NO_HOOKS, "worktree", "remove", "--force", "--force", path],
                    cwd=root, env=env, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        git.run(["worktree", "prune"], cwd=root, env=env, check=False)
