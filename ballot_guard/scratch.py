"""``.ballot_guard/``: ballot-guard's own scratch space in a repository.

It holds the scorecard, the freeze lock, the bytecode cache of runs and each
gate's temporary run directory, and carries its own ``.gitignore`` (``*``) so
a hook never dirties the tree.
"""
from __future__ import annotations

import os

from ballot_guard.atomic import write_text

DIRNAME = ".ballot_guard"


def state_dir(root: str) -> str:
    """``<root>/.ballot_guard``, created with its ``.gitignore`` if missing."""
    path = os.path.join(root, DIRNAME)
    os.makedirs(path, exist_ok=True)
    ignore = os.path.join(path, ".gitignore")
    if not os.path.exists(ignore):
        write_text(ignore, "*\n")
    return path
