"""The repository runs its own hooks and the linters CI runs, at the versions CI pins.

`.ci/run` installs the `dev` extra and `.pre-commit-config.yaml` installs each hook's
`additional_dependencies`: if the two named different versions, a commit could pass one
and fail the other.  And every hook this repository offers runs here as it is offered.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _local_hooks() -> dict[str, dict[str, Any]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    [repo] = config["repos"]
    assert repo["repo"] == "local"
    return {hook["id"]: hook for hook in repo["hooks"]}


def _pins(requirements: list[str]) -> dict[str, str]:
    out = {}
    for text in requirements:
        req = Requirement(text)
        [spec] = req.specifier
        assert spec.operator == "==", f"{text} is not pinned"
        out[req.name.lower()] = spec.version
    return out


def test_the_linters_are_pinned_alike_in_the_dev_extra_and_the_hooks() -> None:
    dev = _pins(_pyproject()["project"]["optional-dependencies"]["dev"])
    hooks = _local_hooks()
    assert _pins(hooks["ruff"]["additional_dependencies"]) == {"ruff": dev["ruff"]}
    mypy = _pins(hooks["mypy"]["additional_dependencies"])
    assert {k: mypy[k] for k in dev if k != "ruff"} == {k: v for k, v in dev.items()
                                                         if k != "ruff"}
    assert set(dev) == {"ruff", "mypy", "types-pyyaml"}


@pytest.mark.parametrize("hook", ["ballot-guard", "ballot-gate", "mypy"])
def test_the_hooks_runtime_dependencies_satisfy_the_package(hook: str) -> None:
    """The hooks' environments hold versions the package accepts."""
    wanted = {Requirement(r).name.lower(): Requirement(r)
              for r in _pyproject()["project"]["dependencies"]}
    pins = _pins(_local_hooks()[hook]["additional_dependencies"])
    for name, req in wanted.items():
        if req.marker is not None and not req.marker.evaluate():
            continue
        assert name in pins, f"{hook} lacks {name}"
        assert req.specifier.contains(pins[name]), f"{hook}: {name}=={pins[name]} vs {req}"


def test_every_offered_hook_runs_here_as_offered() -> None:
    offered = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = _local_hooks()
    for hook in offered:
        mine = local[hook["id"]]
        assert mine["entry"] == hook["entry"].replace("ballot-guard", "python -m ballot_guard", 1)
        for key in ("stages", "pass_filenames", "always_run", "require_serial"):
            assert mine[key] == hook[key], (hook["id"], key)
