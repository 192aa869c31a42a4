"""``.ballot_guard/``: ballot-guard's own scratch space in a repository.

It holds the scorecard, the freeze lock, the bytecode cache of runs and each
gate's temporary run directory, and carries its own ``.gitignore`` (``*``) so
a hook never dirties the tree.

A gate's run directory (``run-*``) is held by the gate through an exclusive
lock on its ``.owner`` file, which the kernel releases when the gate's process
ends, however it ends.  A gate removes its own directory when it finishes; one
killed (SIGKILL, the OOM killer, a cancelled CI job) cannot, so each gate first
removes the run directories no live process holds.
"""
from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import time
from typing import Any

from ballot_guard.atomic import write_text

if sys.platform != "win32":
    import fcntl

DIRNAME = ".ballot_guard"
RUN_PREFIX = "run-"
OWNER = ".owner"
# a run directory without its owner file is a gate's between making it and locking it
# (microseconds), or an older version's: only one this old is taken as left behind
UNOWNED_AGE = 600.0


def state_dir(root: str) -> str:
    """``<root>/.ballot_guard``, created with its ``.gitignore`` if missing."""
    path = os.path.join(root, DIRNAME)
    os.makedirs(path, exist_ok=True)
    ignore = os.path.join(path, ".gitignore")
    if not os.path.exists(ignore):
        write_text(ignore, "*\n")
    return path


def new_run_dir(sdir: str) -> tuple[str, int]:
    """A fresh run directory under ``sdir`` and the descriptor that holds it (close it
    once the directory is removed); the directories of gates gone are removed first."""
    remove_left_behind(sdir)
    path = tempfile.mkdtemp(prefix=RUN_PREFIX, dir=sdir)
    fd = os.open(os.path.join(path, OWNER), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if sys.platform != "win32":
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # a filesystem without locks: nothing here is ever taken as left behind
    return path, fd


def remove_left_behind(sdir: str) -> None:
    """Remove every run directory under ``sdir`` that no live process holds."""
    try:
        names = [n for n in os.listdir(sdir) if n.startswith(RUN_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(sdir, name)
        if _left_behind(path):
            remove_tree(path)


def _left_behind(path: str) -> bool:
    if sys.platform == "win32":  # pragma: no cover - not POSIX: no lock to ask
        return False
    try:
        fd = os.open(os.path.join(path, OWNER), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        try:
            return time.time() - os.lstat(path).st_mtime > UNOWNED_AGE
        except OSError:
            return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its gate is running
    finally:
        os.close(fd)
    return True


def remove_tree(path: str) -> None:
    """Remove ``path`` and everything below it, directories a run made unreadable or
    unwritable (the gate's own trash, mode 0o300, among them) included; what still
    cannot be removed is left."""

    def opened(func: Any, name: str, exc: Any) -> None:
        parent = os.path.dirname(name)
        try:
            for where in (parent, name):
                if os.path.isdir(where) and not os.path.islink(where):
                    os.chmod(where, stat.S_IRWXU)
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)
        except OSError:
            pass

    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.chmod(path, stat.S_IRWXU)
        except OSError:
            pass
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=opened)
    else:
        shutil.rmtree(path, onerror=opened)
