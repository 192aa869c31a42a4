"""pytest plugins that are the project's behaviour code may not judge.

A run reports every loaded pytest plugin that is not part of its interpreter's
installation (conftest modules, ``-p`` modules, editable installs), and every
plugin installed from a local directory (``pip install .``, marked ``dist:``).
A plugin hook sees and can rewrite each test's outcome, so a plugin whose file
lies in the repository outside the oracle, or that was installed from the
repository itself, makes the run an ``error``: a behaviour patch could
otherwise change the judge through it.  Conftest files and plugins under
oracle paths (the properties dir, ``oracle_paths``) judge as usual.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from ballot_guard.config import Config
from ballot_guard.oracle.paths import Judge
from ballot_guard.run.runner import Run

K = TypeVar("K")


def _inside(path: str, roots: Sequence[str]) -> tuple[str, str] | None:
    """(root, relative POSIX path) of the first root holding ``path``."""
    for root in roots:
        if path == root or path.startswith(root + os.sep):
            return root, os.path.relpath(path, root).replace(os.sep, "/")
    return None


def offenders(plugins: Iterable[str], roots: Sequence[str], config: Config,
              tree: str) -> list[str]:
    """The reported plugins that are behaviour code of the repository."""
    judge = Judge(tree, config)
    real_roots = [os.path.realpath(r) for r in dict.fromkeys(roots)]
    found = []
    for p in plugins:
        if p.startswith("dist:"):
            where = _inside(p[5:], real_roots)
            if where is not None:
                found.append(f"a plugin installed from this repository ({where[1] or '.'})")
            continue
        where = _inside(p, real_roots)
        if where is not None and judge.kind(where[1]) not in (judge.ORACLE, judge.TABLE):
            found.append(where[1])
    return found


def judge_runs(runs: Mapping[K, Sequence[Run]], roots: Sequence[str], config: Config,
               tree: str) -> dict[K, list[Run]]:
    """The runs, each one that loaded a behaviour plugin turned into an ``error``."""
    judged: dict[K, list[Run]] = {}
    cache: dict[tuple[str, ...], list[str]] = {}
    for key, rs in runs.items():
        out = []
        for run in rs:
            if run.plugins and run.plugins not in cache:
                cache[run.plugins] = offenders(run.plugins, roots, config, tree)
            bad = cache.get(run.plugins, [])
            if bad and run.outcome != "error":  # an error keeps its first reason
                out.append(dataclasses.replace(run, outcome="error", detail=(
                    f"pytest loaded {', '.join(bad)} as a plugin: that is behaviour code, and a "
                    "plugin can rewrite outcomes; move it under the oracle (a conftest.py, the "
                    "properties dir) or add it to oracle_paths")))
            else:
                out.append(run)
        judged[key] = out
    return judged
