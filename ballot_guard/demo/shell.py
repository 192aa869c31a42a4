"""How the demo runs things: git and ballot-guard as subprocesses, in a controlled environment.

The demo repository gets its own identities (repository config and ``-c``
options), never the user's global ones; variables that would point git
elsewhere, set identities, mark a change as an agent's, or add pytest options
are removed, so the user's shell cannot change a verdict.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ballot_guard import git as _git

HUMAN = ("Dana Reviewer", "dana@example.com")
AGENT = ("Coding Agent", "agent@example.com")

_DROP = (
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
    "BALLOT_GUARD_AGENT", "PYTEST_ADDOPTS", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF",
    "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_URL", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY",
)


@dataclass(frozen=True)
class Ran:
    code: int
    output: str  # stdout and stderr, interleaved as printed


def demo_env(repo: Path | None = None) -> dict[str, str]:
    """The environment every demo subprocess gets (the framework's cache kept in ``repo``'s
    .git, not the user's home)."""
    env = _git.scrubbed_env()
    for name in _DROP:
        env.pop(name, None)
    if repo is not None:
        env["PRE_COMMIT_HOME"] = str(repo / ".git" / "pre-commit-home")
    # `python -m ballot_guard` must find this very package, even from a source tree.
    here = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    return env


def git(repo: Path, args: Sequence[str], *, agent: bool = False) -> str:
    """Run git in the demo repository (as the agent when ``agent``); its stdout."""
    name, email = AGENT if agent else HUMAN
    who = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
    res = _git.run([*who, *args], cwd=str(repo), env=demo_env(repo))
    return os.fsdecode(res.stdout)


def git_hooked(repo: Path, args: Sequence[str], *, agent: bool = False,
               timeout: float = 600) -> Ran:
    """A real ``git commit`` or ``git push``, its hooks running; output as printed."""
    name, email = AGENT if agent else HUMAN
    proc = subprocess.run(["git", "-c", f"user.name={name}", "-c", f"user.email={email}", *args],
                          cwd=repo, env=demo_env(repo), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                          check=False)
    return Ran(proc.returncode, proc.stdout.decode("utf-8", "replace"))


def python_module(repo: Path, args: Sequence[str], *, timeout: float = 600) -> Ran:
    """``python -m ARGS`` (pre-commit, for one) in the demo repository."""
    proc = subprocess.run([sys.executable, "-m", *args], cwd=repo, env=demo_env(repo),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout, check=False)
    return Ran(proc.returncode, proc.stdout.decode("utf-8", "replace"))


def ballot_guard(repo: Path, args: Sequence[str], *, timeout: float = 600) -> Ran:
    """Run ``python -m ballot_guard ARGS`` in the demo repository, as a user would."""
    proc = subprocess.run([sys.executable, "-m", "ballot_guard", *args], cwd=repo,
                          env=demo_env(repo), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, check=False)
    return Ran(proc.returncode, proc.stdout.decode("utf-8", "replace"))


def missing_modules(*modules: str) -> list[str]:
    """The modules among ``modules`` that ``sys.executable`` cannot import."""
    probe = ("import importlib.util, sys\n"
             "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))")
    proc = subprocess.run([sys.executable, "-c", probe, *modules], env=demo_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        return list(modules)
    return proc.stdout.decode().split()
