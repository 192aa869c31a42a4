"""What isolates the gate's runs: the sandbox policy handed to the runner, and its record.

The runner (``forkserver.py``, with ``sandbox.py``) enters the OS sandbox where the
kernel allows it and reports the isolation in force; this module builds the
policy from the configuration and the repository, refuses (4) a gate that
asked for ``sandbox = "required"`` and did not get it, and words the record for
the gate's header.
"""
from __future__ import annotations

import os

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
