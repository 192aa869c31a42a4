"""Which interpreter runs the properties, and whether it can.

The interpreter is the project's, never ballot-guard's own (pre-commit puts
ballot-guard's isolated environment on VIRTUAL_ENV and PATH): ``python`` if
configured (used as given), else ``$VIRTUAL_ENV/bin/python``, else
``.venv/bin/python`` of the main checkout, else ``python3`` on PATH, skipping
at every step the environment ballot-guard runs in.  An interpreter tracked
by git at the judged revision is refused: the judge's runner must not come
from the patch.  One that cannot import pytest is refused too: a missing
runner must not look like a stable failure.

What the runner loads before any run: pytest and the installed plugins always,
Hypothesis only where a file of the checkout names it (``names_hypothesis``).
Loading it in the fork server (so that every run starts with it, and the judge's
snapshot holds it) takes about a fifth of the runner's start; a checkout in which
no file says ``hypothesis`` (tracked or not, ignored files aside) has no property
that imports it by name, and a run that imports it anyway (through an installed
library, or by a computed name) is an error, since the judge could not watch it
(``forkserver._Plugin.late``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.errors import CannotJudge

FORKSERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forkserver.py")
# How the runner's interpreter runs forkserver.py: as its ``__main__``, as ``python
# forkserver.py`` would, but from the bytecode cache beside it, through the loader the
# interpreter has already loaded.  Python never caches the script it is given, and
# compiling this one took 28 ms of every runner start (measured).  ``-c`` puts the
# current directory (the checkout) first on the path: it is taken out before anything
# is imported.  Where bytecode is not written (PYTHONDONTWRITEBYTECODE), it compiles
# each time, as before.
BOOT = ("import sys as _s\n"
        "del _s.path[:0 if getattr(_s.flags, 'safe_path', 0) else 1]\n"
        "del _s.argv[0]\n"
        "__file__ = _s.argv[0]\n"
        "exec(_s.modules['_frozen_importlib_external'].SourceFileLoader("
        "'__main__', __file__).get_code('__main__'))\n")
_BIN = "Scripts" if os.name == "nt" else "bin"
_EXE = "python.exe" if os.name == "nt" else "python"
HANDSHAKE_TIMEOUT = 120.0
# How the runner's interpreter starts: no user site, no ``site`` module at all; the
# forkserver adds site-packages itself without running code of the checkout.
START_FLAGS = ("-s", "-S")
# Hypothesis's pytest plugin, by its entry point's name (``-p no:...`` where the runner
# does not load Hypothesis; forkserver.py makes its template for the same options)
HYPOTHESIS_PLUGIN = "hypothesispytest"


def forkserver_command(python: str, op: str, *, top: str | None = None,
                   tree: str | None = None) -> list[str]:
    """``python -s -S forkserver.py OP [--top DIR] [--tree DIR]`` (through ``BOOT``)."""
    roots = [*(["--top", top] if top else []), *(["--tree", tree] if tree else [])]
    return [python, *START_FLAGS, "-c", BOOT, FORKSERVER, op, *roots]


# How long the search for Hypothesis may take on the runner's start path (it runs while
# the runner imports pytest, which takes about 0.1 s): past it, Hypothesis is loaded.
HYPOTHESIS_SEARCH = 1.0


def names_hypothesis(tree: str, timeout: float = HYPOTHESIS_SEARCH) -> bool:
    """Whether a file of the checkout at ``tree`` holds the word ``hypothesis`` (True
    when git cannot tell in ``timeout`` seconds: then it is loaded, as a run may need
    it)."""
    res = git.run(["grep", "-q", "-I", "-F", "--untracked", "-e", "hypothesis", "--", "."],
                  cwd=tree, check=False, timeout=timeout)
    return res.code != 1


@dataclass(frozen=True)
class RunnerInfo:
    python: str
    pytest: str
    hypothesis: str | None
    randomly: bool
    fork: bool
    site: tuple[str, ...] = ()   # the interpreter's site-packages directories


def _own_prefixes() -> set[str]:
    return {os.path.realpath(sys.prefix)}


def _in_own_env(path: str) -> bool:
    """Whether ``path`` (not resolved: a venv's python links outside it) is in our env."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return any(parent == os.path.join(p, _BIN) or parent == p for p in _own_prefixes())


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _which_all(name: str, path_var: str | None) -> list[str]:
    found = []
    for d in (path_var or "").split(os.pathsep):
        if not d:
            continue
        cand = os.path.join(d, name)
        if _executable(cand):
            found.append(cand)
    return found


def find_interpreter(root: str, config: Config, *, environ: Mapping[str, str] | None = None,
                     run_root: str | None = None) -> str:
    """The interpreter path by the contract's steps (no probing, no tracking check)."""
    env = os.environ if environ is None else environ
    run_root = run_root or root
    if config.python is not None:
        given = os.path.expanduser(config.python)
        if os.sep in given or "/" in given:
            path = given if os.path.isabs(given) else os.path.join(run_root, given)
            if not _executable(path):
                raise CannotJudge(f"[tool.ballot_guard] python = {config.python!r}: "
                                  "no such executable")
            return path
        found = shutil.which(given, path=env.get("PATH"))
        if found is None:
            raise CannotJudge(f"[tool.ballot_guard] python = {config.python!r}: not found on PATH")
        return found
    venv = env.get("VIRTUAL_ENV")
    if venv and os.path.realpath(venv) not in _own_prefixes():
        cand = os.path.join(venv, _BIN, _EXE)
        if _executable(cand):
            return cand
    dotvenv = os.path.join(root, ".venv")
    if os.path.realpath(dotvenv) not in _own_prefixes():
        cand = os.path.join(dotvenv, _BIN, _EXE)
        if _executable(cand):
            return cand
    for cand in _which_all("python3", env.get("PATH")):
        if not _in_own_env(cand):
            return cand
    raise CannotJudge("no interpreter for the properties: set `python` in [tool.ballot_guard] "
                      "(no VIRTUAL_ENV, no .venv, no python3 on PATH outside ballot-guard's own "
                      "environment)")


def _tracked(root: str, rev: str | None, path: str) -> bool:
    top = os.path.realpath(root)
    for given in {os.path.abspath(path), os.path.realpath(path)}:
        cand = os.path.realpath(os.path.dirname(given)) + os.sep + os.path.basename(given)
        if not cand.startswith(top + os.sep):
            continue
        rel = os.path.relpath(cand, top).replace(os.sep, "/")
        snaps = [git.Snapshot(root, rev)] if rev is not None else \
            [git.Snapshot(root, None)] + ([git.Snapshot(root, "HEAD")] if git.head(root) else [])
        if any(s.entry(rel) is not None for s in snaps):
            return True
        env = _env_root(cand)
        if env is not None and env.startswith(top + os.sep):
            # a tracked sitecustomize.py, .pth file or package in the interpreter's own
            # environment runs inside the judge just as a tracked interpreter would
            env_rel = os.path.relpath(env, top).replace(os.sep, "/")
            if any(s.entries(env_rel) for s in snaps):
                return True
    return False


def _env_root(python: str) -> str | None:
    """The virtual environment ``<env>/bin/python`` belongs to (it has pyvenv.cfg), or None."""
    parent = os.path.dirname(python)
    if os.path.basename(parent) not in ("bin", "Scripts"):
        return None
    env = os.path.dirname(parent)
    return env if os.path.isfile(os.path.join(env, "pyvenv.cfg")) else None


def check_not_tracked(root: str, python: str, *, rev: str | None = None,
                      run_root: str | None = None) -> None:
    """Refuse an interpreter that git tracks at the judged revision (it came with the patch)."""
    if _tracked(root, rev, python) or (run_root and run_root != root
                                       and _tracked(run_root, rev, python)):
        raise CannotJudge(f"refusing interpreter {python}: it, or a file of its environment, "
                          "is tracked by git in the judged revision, so the change could "
                          "supply its own judge")


def probe(python: str, *, cwd: str, env: Mapping[str, str] | None = None,
          top: str | None = None) -> RunnerInfo:
    """Ask the interpreter what it has; CannotJudge when it cannot import pytest."""
    try:
        proc = subprocess.run(forkserver_command(python, "describe", top=top or cwd, tree=cwd),
                              cwd=cwd, env=None if env is None
                              else dict(env), capture_output=True, timeout=HANDSHAKE_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CannotJudge(f"cannot start the runner interpreter {python}: {exc}") from exc
    return parse_describe(python, proc.stdout.decode(errors="replace"), proc.stderr)


def parse_describe(python: str, line: str, stderr: bytes = b"") -> RunnerInfo:
    try:
        data = json.loads(line.strip().splitlines()[0] if line.strip() else "")
    except (ValueError, IndexError):
        err = stderr.decode(errors="replace").strip().splitlines()
        raise CannotJudge(f"runner interpreter {python} did not start"
                          + (f": {err[-1]}" if err else "")) from None
    if not data.get("ok"):
        raise CannotJudge(f"runner interpreter {python} cannot run the properties: "
                          f"{data.get('error', 'pytest missing')}; install pytest there or set "
                          "`python` in [tool.ballot_guard]")
    return RunnerInfo(python=python, pytest=str(data.get("pytest")),
                      hypothesis=data.get("hypothesis"), randomly=bool(data.get("randomly")),
                      fork=bool(data.get("fork", True)),
                      site=tuple(str(d) for d in data.get("site") or ()))

def resolve_runner(root: str, config: Config, *, environ: Mapping[str, str] | None = None,
                   rev: str | None = None) -> str:
    """The interpreter path; CannotJudge (4) when none, tracked by git, or without pytest."""
    python = find_interpreter(root, config, environ=environ)
    check_not_tracked(root, python, rev=rev)
    probe(python, cwd=root, env=environ)
    return python
