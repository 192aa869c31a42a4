"""How to run the commands a hint names when ballot-guard came only through pre-commit.

pre-commit installs a hook's package in an environment of its own and puts it on PATH for
the hook only: in the user's shell, ``ballot-guard split`` is "command not found" (127).
So a blocked hook that runs under the framework (``PRE_COMMIT=1``) adds how to reach each
command: the manual-stage hook ids of ``.pre-commit-hooks.yaml``, the hook environment's
own executable, or an install of the CLI.
"""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

# command -> the manual-stage hook id that runs it
MANUAL = {
    "ballot-guard split": "ballot-split",
    "ballot-guard digest --pin": "ballot-pin",
    "ballot-guard unfreeze": "ballot-unfreeze",
    "ballot-guard doctor": "ballot-doctor",
}
INSTALL = "pipx install 'git+<the hooks' repo URL>@<rev>' (the repo: and rev: of your " \
          ".pre-commit-config.yaml)"


def _own_bin(prefix: str) -> str:
    return os.path.join(prefix, "bin")


def on_user_path(environ: Mapping[str, str], prefix: str) -> bool:
    """Whether ``ballot-guard`` is on PATH once the hook environment's own bin is left out."""
    own = os.path.realpath(_own_bin(prefix))
    rest = os.pathsep.join(d for d in environ.get("PATH", "").split(os.pathsep)
                           if d and os.path.realpath(d) != own)
    return shutil.which("ballot-guard", path=rest) is not None


def from_framework(environ: Mapping[str, str], prefix: str) -> bool:
    """Whether this ballot-guard runs from an environment pre-commit made for the hook
    (``.../repoXXXX/py_env-python3.11``), not from one the user has (``language: system``)."""
    return environ.get("PRE_COMMIT") == "1" and os.path.basename(
        os.path.normpath(prefix)).startswith("py_env-")


def lines(environ: Mapping[str, str], prefix: str | None = None) -> list[str]:
    """The lines to add to a blocked hook's output (none outside the framework's env)."""
    prefix = sys.prefix if prefix is None else prefix
    if not from_framework(environ, prefix) or on_user_path(environ, prefix):
        return []
    out = [("ballot-guard: ballot-guard came through pre-commit, so it is not on your PATH; "
            "run the commands above as:")]
    for command, hook in MANUAL.items():
        extra = {"ballot-unfreeze": " (every frozen voter)",
                 "ballot-pin": " (stage the fixtures first: pre-commit stashes the rest)",
                 }.get(hook, "")
        out.append(f"  {command}: pre-commit run {hook} --hook-stage manual{extra}")
    out.append(f"  any command: {os.path.join(_own_bin(prefix), 'ballot-guard')} ...  "
               "(this hook's environment)")
    out.append(f"  or install it: {INSTALL}")
    return out
