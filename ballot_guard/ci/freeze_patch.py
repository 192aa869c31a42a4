"""The freeze-file change a CI run made, as a patch a human can ``git apply``.

CI throws its checkout away, so a voter it froze would be frozen again, or not, on the
next run.  The gate merges new freeze records into the working tree's freeze file;
this is that file's change against HEAD, in git's own diff format, written to
``.ballot_guard/freeze.patch``.
"""
from __future__ import annotations

import os

from ballot_guard import git
from ballot_guard.atomic import write_text
from ballot_guard.scratch import state_dir

PATCH = "freeze.patch"
# settings of the user's git config that would change the diff's form
_PLAIN = ("--text", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames",
          "--src-prefix=a/", "--dst-prefix=b/")


def diff(root: str, freeze_file: str) -> str:
    """The working tree's freeze file against HEAD's ('' when they are the same)."""
    head = git.head(root)
    tracked = head is not None and git.Snapshot(root, head).read(freeze_file) is not None
    if not os.path.exists(os.path.join(root, freeze_file)):
        return ""
    if tracked:
        args = ["diff", *_PLAIN, "HEAD", "--", freeze_file]
    else:
        args = ["diff", "--no-index", *_PLAIN, "--", "/dev/null", freeze_file]
    res = git.run(args, cwd=root, check=False)
    if res.code not in (0, 1):
        raise git.GitError(git.describe_failure(args, res))
    return res.stdout.decode("utf-8")


def write(root: str, patch: str) -> str:
    """Write ``patch`` to ``.ballot_guard/freeze.patch``, or remove a stale one; its path."""
    path = os.path.join(state_dir(root), PATCH)
    if patch:
        write_text(path, patch)
    elif os.path.exists(path):
        os.unlink(path)
    return path
