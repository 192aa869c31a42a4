"""Did a run change what the runner's interpreter executes at start-up?

A run may write anywhere the user can: a ``.pth`` file or a ``sitecustomize.py``
planted in the runner's site-packages would run inside every later run and gate.
The gate takes this signature of the interpreter's site directories (the names
and contents of their ``.pth``, ``sitecustomize`` and ``usercustomize`` files)
before the first run and after each one; a difference makes that run an
``error`` naming the file.  (The runner itself starts without ``site`` and
runs no ``.pth`` import line from the checkout, see ``forkserver.py``.)
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

Signature = dict[str, str]
_STARTUP = ("sitecustomize", "usercustomize")


def _startup_file(name: str) -> bool:
    return name.endswith(".pth") or name.partition(".")[0] in _STARTUP


def signature(dirs: Sequence[str]) -> Signature:
    """``{path: sha256 of its bytes, or "dir"}`` for every start-up file in ``dirs``."""
    found: Signature = {}
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if not _startup_file(name):
                continue
            path = os.path.join(d, name)
            try:
                with open(path, "rb") as f:
                    found[path] = hashlib.sha256(f.read()).hexdigest()
            except IsADirectoryError:
                found[path] = "dir"
            except OSError:
                found[path] = "?"
    return found


def changed(before: Signature, after: Signature) -> list[str]:
    """Every start-up file added, removed or rewritten, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
