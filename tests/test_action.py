"""The GitHub Action (``action.yml``), its shell steps run as scripts against a real
repository with the ``${{ }}`` expressions substituted (no network to GitHub), and
GitHub's limits on annotations and the step summary."""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard import gh_limits
from tests.helpers import run_cli
from tests.hookutil import copy_project, make_project, write_flaky

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(expression: str, context: Mapping[str, Any]) -> str:
    """The ``a.b || c.d || 'x'`` subset of GitHub's expressions that action.yml uses."""
    for operand in (o.strip() for o in expression.split("||")):
        if operand.startswith("'") and operand.endswith("'"):
            value: Any = operand[1:-1]
        else:
            value = context
            for part in operand.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
        if value:
            return str(value)
    return ""


def substitute(text: str, context: Mapping[str, Any]) -> str:
    return _EXPR.sub(lambda m: evaluate(m.group(1), context), text)


def run_steps(context: Mapping[str, Any], workspace: Path, tmp: Path) -> list[tuple[dict[str, Any], subprocess.CompletedProcess[str]]]:
    """Every ``run:`` step of the composite in order, as GitHub runs them (bash, the step's
    env, the workspace as working directory); stops after the first failing one."""
    done = []
    summary, output = tmp / "step_summary.md", tmp / "github_output"
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
               "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        script = substitute(step["run"], context)
        proc = subprocess.run(["bash", "-e", "-c", script], cwd=workspace, env=env,
                              capture_output=True, text=True, check=False, timeout=900)
        done.append((step, proc))
        if proc.returncode != 0:
            break
    return done


def context(action_path: Path, runner_temp: Path, base: str, **inputs: str) -> dict[str, Any]:
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    return {"github": {"action_path": str(action_path), "event": {"pull_request": {
                "base": {"sha": base}, "user": {"login": "octocat"}}}},
            "runner": {"temp": str(runner_temp)}, "inputs": {**defaults, **inputs}}


@pytest.fixture(scope="module")
def action_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This repository as the Action's own checkout (apart from the checkout under test)."""
    base = tmp_path_factory.mktemp("action")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    copy_project(base / "ballot-guard", env)
    return base / "ballot-guard"


def test_the_action_installs_from_its_own_checkout_judges_and_leaves_its_artifacts(
        action_checkout: Path, tmp_path: Path) -> None:
    repo = make_project(tmp_path / "workspace")
    base = repo.head()
    repo.git("checkout", "-q", "-b", "feature")
    write_flaky(repo, tmp_path / "counter")
    repo.commit_all("a property that reads the clock")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    done = run_steps(context(action_checkout, runner_temp, base, repeats="3"), repo.path, tmp_path)
    (_install, installed), (_judge, judged) = done
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert re.search(r"^ballot-guard \d", installed.stdout, re.MULTILINE)
    venv = runner_temp / "ballot-guard-venv"
    site = next(venv.glob("lib/python*/site-packages"))
    assert (site / "ballot_guard" / "ci.py").is_file()  # a real install, not the workspace
    assert judged.returncode == 3, judged.stdout + judged.stderr
    assert "repeats: bounded_retry=3, flaky=3" in judged.stdout  # the repeats input
    assert (tmp_path / "github_output").read_text() == "exit-code=3\n"
    assert "::error file=properties/test_flaky.py," in judged.stdout
    summary = (tmp_path / "step_summary.md").read_text()
    assert "## ballot-guard: abstained (exit 3)" in summary and "### Freeze patch" in summary
    # the artifact step uploads exactly what ci wrote
    [upload] = [s for s in ACTION["runs"]["steps"] if "uses" in s]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    paths = upload["with"]["path"].split()
    assert paths == [".ballot_guard/scorecard.json", ".ballot_guard/junit.xml",
                     ".ballot_guard/freeze.patch"]
    for rel in paths:
        assert (repo.path / rel).is_file(), rel
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""


def test_the_action_refuses_to_install_from_the_checkout_under_test(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "workspace")
    (repo.path / "vendor").mkdir()
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    done = run_steps(context(repo.path / "vendor", runner_temp, repo.head()), repo.path, tmp_path)
    [(_install, proc)] = done
    assert proc.returncode == 4
    assert "::error title=ballot-guard: could not judge (exit 4)::the Action lies inside the " \
        "checkout under test" in proc.stdout
    assert not (runner_temp / "ballot-guard-venv").exists()


def test_no_base_is_4_with_an_annotation(action_checkout: Path, tmp_path: Path) -> None:
    repo = make_project(tmp_path / "workspace")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    steps = ACTION["runs"]["steps"]
    judge = next(s for s in steps if s.get("id") == "judge")
    env = {**os.environ, "GITHUB_OUTPUT": str(tmp_path / "out"),
           **{k: substitute(str(v), context(action_checkout, runner_temp, "")) for k, v in
              judge["env"].items()}}
    proc = subprocess.run(["bash", "-e", "-c", judge["run"]], cwd=repo.path, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 4
    assert "::error title=ballot-guard: could not judge (exit 4)::no base revision" in proc.stdout
    assert (tmp_path / "out").read_text() == "exit-code=4\n"


def test_the_expressions_of_the_run_steps_only_reach_the_script_through_env() -> None:
    """No ``${{ }}`` inside a script: a value from the pull request could inject shell."""
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]


def test_more_than_ten_annotations_go_to_the_summary(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_project(tmp_path / "project")
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(12):
        repo.write(f"src/mod{i:02}.py", "x = 1\n")
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text() + "\n")
    repo.commit_all("mixed")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    res = run_cli(["ci", "--base", "main"], repo.path)
    assert res.code == 1
    errors = [line for line in res.out.splitlines() if line.startswith("::error")]
    assert len(errors) == 10
    text = summary.read_text()
    assert "### 3 more annotation(s)" in text
    for shown in ("properties/test_bounded_retry.py", *(f"src/mod{i:02}.py" for i in range(9))):
        assert any(f"file={shown}," in line for line in errors), shown
        assert f"`{shown}`" not in text.split("more annotation(s)")[1]
    for over in ("src/mod09.py", "src/mod10.py", "src/mod11.py"):
        assert f"- error `{over}`: commit " in text and "rule 1" in text


def test_cap_keeps_ten_of_each_type_in_order() -> None:
    lines = [f"::error::e{i}" for i in range(12)] + [f"::warning file=a.py::w{i}" for i in range(3)]
    capped = gh_limits.cap(lines)
    assert capped.shown == lines[:10] + lines[12:]
    assert capped.over == lines[10:12]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=200), max_size=60),
       st.integers(min_value=5000, max_value=20000))
def test_truncate_stays_below_the_limit_and_cuts_at_a_line(lines: list[str], limit: int) -> None:
    summary = "\n".join(lines) + "\n"
    cut = gh_limits.truncate(summary, limit)
    assert len(cut.encode("utf-8")) < limit
    if len(summary.encode("utf-8")) < limit:
        assert cut == summary
    else:
        kept, _, note = cut.partition("\n\n**The summary was cut here**")
        assert note and summary.startswith(kept)


def test_a_summary_over_a_mebibyte_is_cut() -> None:
    row = "| property | pass | 2 | pass pass |\n"
    cut = gh_limits.truncate(row * 40000)
    assert len(cut.encode()) < 1024 * 1024
    assert cut.endswith("The scorecard artifact holds everything.\n")
    assert cut.startswith(row)
