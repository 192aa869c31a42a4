"""What isolates the gate's runs: the sandbox policy handed to the runner, and its record.

The runner (``forkserver.py``, with ``sandbox.py``) enters the OS sandbox where the
kernel allows it and reports the isolation in force; this module builds the
policy from the configuration and the repository, refuses (4) a gate that
asked for ``sandbox = "required"`` and did not get it, and words the record for
the gate's header.

It also takes the gate's own process out of its runs' sight while it votes
(``hide``).  The gate holds the write end of the runner's request pipe, the read
end of its replies and every run's signing key.  At the hermetic level a run is a
process of the same user, and ``/proc/<gate>/fd`` or ``/proc/<gate>/mem`` would hand
it all of that; a process that is not "dumpable" (Linux ``PR_SET_DUMPABLE``) shows
those files to no other process of its user (one with ``CAP_SYS_PTRACE`` aside).
The runner and each keeper make themselves so (``forkserver.py``); the gate does
while it votes, and is as it was afterwards (it may be a library call in a longer
process).
"""
from __future__ import annotations

import ctypes
import os
import sys

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.errors import CannotJudge
from ballot_guard.run.protocol import Isolation, Policy


def policy(config: Config, *, top: str, tree: str, workdir: str | None = None) -> Policy:
    """The sandbox a gate's runs get: the checkouts copy-on-write, every git directory
    of them read-only, and the gate's run directory ``workdir`` hidden: each run sees
    there only its own directory (made writable for it: its log and result go there),
    never another run's, nor what is left of one."""
    trees = sorted({os.path.realpath(top), os.path.realpath(tree)})
    gitdirs = sorted({d for t in trees for d in git.git_dirs(t)})
    return {"mode": config.sandbox, "network": config.network, "overlay": trees,
            "readonly": gitdirs, "hidden": [workdir] if workdir else [], "writable": []}


def check(config: Config, isolation: Isolation | None) -> None:
    """CannotJudge when ``sandbox = "required"`` and the runs would not be sandboxed."""
    got = isolation or None  # a runner that reported nothing, or an empty record
    if config.sandbox != "required" or (got is not None and got.get("level") == "sandbox"):
        return
    why = (got.get("reason") if got is not None else None) or \
        "the runner did not report its isolation"
    raise CannotJudge(f'sandbox = "required" but the runs cannot be sandboxed: {why}')


def describe(isolation: Isolation | None) -> str:
    """One phrase for the gate's header."""
    if not isolation:
        return "isolation unknown"
    if isolation.get("level") == "sandbox":
        names = ", ".join(isolation.get("namespaces") or ())
        net = "network" if isolation.get("network") else "no network"
        return f"sandbox ({names} namespaces; {net})"
    return f"hermetic, no OS sandbox: {isolation.get('reason')}"


PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


def _prctl(option: int, value: int = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, value, 0, 0, 0))


def hide() -> int | None:
    """Make this process not dumpable; what it was, to ``restore`` (None where this
    cannot be done: not Linux, no ``prctl``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        was = _prctl(PR_GET_DUMPABLE)
        if was < 0 or _prctl(PR_SET_DUMPABLE, 0) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return was


def restore(was: int | None) -> None:
    if was is not None:
        try:
            _prctl(PR_SET_DUMPABLE, was)
        except (OSError, AttributeError):
            pass
