"""Bad input around the gate is one line and the right exit code, never an internal
error: a freeze file or config nested beyond Python's recursion limit, a property file
whose name is not UTF-8, such a path in the GitHub step summary."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from testing.gate_support import PASS, _shared_pycache, make_project, project
from testing.helpers import Repo, run_cli
from testing.hookutil import make_project as adopted

__all__ = ["_shared_pycache", "project"]

DEEP = 100_000


def test_a_freeze_file_nested_100000_deep_is_4_in_one_line(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    project.write("freeze_set.json", '{"frozen": ' + "[" * DEEP + "]" * DEEP + "}\n")
    for args in (["gate"], ["freeze", "list"]):
        res = run_cli(args, project.path)
        assert res.code == 4, res.out + res.err
        assert "freeze_set.json: corrupt freeze file: nested too deeply" in res.err
        assert "internal error" not in res.err and len(res.err.strip().splitlines()) == 1


def test_a_config_nested_100000_deep_is_4_in_one_line(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    with open(project.path / "pyproject.toml", "a") as f:
        f.write("deep = " + "[" * DEEP + "]" * DEEP + "\n")
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "pyproject.toml: invalid TOML: nested too deeply" in res.err
    assert "internal error" not in res.err


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses non-UTF-8 names")
def test_a_property_whose_name_is_not_utf8_votes_and_is_recorded(project: Repo,
                                                                tmp_path: Path) -> None:
    make_project(project, {"ok": PASS}, commit=False)
    name = os.fsdecode(b"test_\xff.py")
    (project.path / "properties" / name).write_text("def test_bad():\n    assert 1 == 2\n")
    project.commit_all("a property with an odd name")
    junit = tmp_path / "junit.xml"
    res = run_cli(["gate", "--junit-xml", str(junit)], project.path)
    assert res.code == 1, res.out + res.err  # it fails honestly; nothing crashed
    card = json.loads((project.path / ".ballot_guard" / "scorecard.json").read_bytes())
    assert card["properties"]["\udcff"]["ballot"] == "fail"
    assert card["properties"]["ok"]["ballot"] == "pass"
    assert "testcase" in junit.read_text(encoding="utf-8")


def test_a_non_utf8_oracle_path_in_the_step_summary_does_not_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pr = adopted(tmp_path / "project")
    pr.git("checkout", "-q", "-b", "feature")
    (pr.path / "properties" / os.fsdecode(b"test_\xff.py")).write_text("def test_x():\n    pass\n")
    pr.write("billing.py", (pr.path / "billing.py").read_text() + "\n# and behaviour\n")
    pr.commit_all("mixed, with an odd name")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    assert "internal error" not in res.err
    text = summary.read_text(encoding="utf-8")
    assert "## ballot-guard: blocked (exit 1)" in text and "test_\\udcff.py" in text
