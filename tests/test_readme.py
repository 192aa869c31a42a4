"""The README is what a newcomer reads first: the two commands, a quick start, the exit
codes; the manifest it points to is sound."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
README = (ROOT / "README.md").read_text(encoding="utf-8")

DEMO = ("python3 -m venv .venv && .venv/bin/pip install -q '.[demo]' && "
        ".venv/bin/ballot-guard demo")
TESTS = ("python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && "
         ".venv/bin/python -m pytest -q -n 2")


def test_the_two_commands_come_first() -> None:
    block = re.search(r"```sh\n(.*?)```", README, re.DOTALL)
    assert block is not None
    assert block.group(1).splitlines() == [DEMO, TESTS]
    assert README.index(DEMO) < README.index("## ")


def test_ci_runs_the_second_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q -n 2" in ci


def test_a_five_step_quick_start_with_init() -> None:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. ", section, re.MULTILINE)
    assert steps == ["1", "2", "3", "4", "5"]
    assert "ballot-guard init" in section and "pre-commit install" in section


def test_the_exit_codes_table() -> None:
    for code in range(5):
        assert re.search(rf"^\| {code} \| \w", README, re.MULTILINE), code


@pytest.mark.parametrize("hook", MANIFEST, ids=[h["id"] for h in MANIFEST])
def test_hook_runs_the_whole_repository(hook: dict[str, object]) -> None:
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert hook["require_serial"] is True
    assert str(hook["entry"]).startswith("ballot-guard ")
    version = tuple(int(n) for n in str(hook["minimum_pre_commit_version"]).split("."))
    assert version >= (3, 2, 0)  # the stage names pre-commit / pre-push


def test_stages() -> None:
    stages = {h["id"]: h["stages"] for h in MANIFEST}
    assert stages["ballot-guard"] == ["pre-commit"]
    assert stages["ballot-gate"] == ["pre-push"]
