"""The GitHub Action (``action.yml``), its shell steps run as scripts against a real
repository with the ``${{ }}`` expressions substituted (no network to GitHub), and
GitHub's limits on annotations and the step summary."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.ci import limits
from testing.helpers import run_cli
from testing.hookutil import copy_project, make_project, write_flaky

ROOT = Path(__file__).resolve().parents[2]
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
    assert (site / "ballot_guard" / "ci" / "judge.py").is_file()  # a real install, not the workspace
    assert judged.returncode == 3, judged.stdout + judged.stderr
    assert "repeats: bounded_retry=3, flaky=3" in judged.stdout  # the repeats input
    assert (tmp_path / "github_output").read_text() == "artifact=ballot-guard\nexit-code=3\n"
    assert "::error file=properties/test_flaky.py," in judged.stdout
    summary = (tmp_path / "step_summary.md").read_text()
    assert "## ballot-guard: abstained (exit 3)" in summary and "### Freeze patch" in summary
    # the artifact step uploads exactly what ci wrote
    [upload] = [s for s in ACTION["runs"]["steps"] if "upload-artifact" in s.get("uses", "")]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    assert upload["with"]["name"] == "${{ steps.judge.outputs.artifact || 'ballot-guard' }}"
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
    assert (tmp_path / "out").read_text() == "artifact=ballot-guard\nexit-code=4\n"


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
    capped = limits.cap(lines)
    assert capped.shown == lines[:10] + lines[12:]
    assert capped.over == lines[10:12]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=200), max_size=60),
       st.integers(min_value=5000, max_value=20000))
def test_truncate_stays_below_the_limit_and_cuts_at_a_line(lines: list[str], limit: int) -> None:
    summary = "\n".join(lines) + "\n"
    cut = limits.truncate(summary, limit)
    assert len(cut.encode("utf-8")) < limit
    if len(summary.encode("utf-8")) < limit:
        assert cut == summary
    else:
        kept, _, note = cut.partition("\n\n**The summary was cut here**")
        assert note and summary.startswith(kept)


def test_a_summary_over_a_mebibyte_is_cut() -> None:
    row = "| property | pass | 2 | pass pass |\n"
    cut = limits.truncate(row * 40000)
    assert len(cut.encode()) < 1024 * 1024
    assert cut.endswith("The scorecard artifact holds everything.\n")
    assert cut.startswith(row)


# --- the sharded form: N shard jobs (a matrix), one merge job (the one required check) ----

def judge_step(context: Mapping[str, Any], workspace: Path, tmp: Path,
               ) -> tuple[subprocess.CompletedProcess[str], dict[str, str], Path]:
    """The judge step alone, as one job runs it (its own output and summary files)."""
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "judge")
    tmp.mkdir(parents=True, exist_ok=True)
    summary, output = tmp / "step_summary.md", tmp / "github_output"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
           "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output)}
    env.update({k: substitute(str(v), context) for k, v in step["env"].items()})
    proc = subprocess.run(["bash", "-e", "-c", substitute(step["run"], context)], cwd=workspace,
                          env=env, capture_output=True, text=True, check=False, timeout=900)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return proc, outputs, summary


@pytest.fixture(scope="module")
def installed(action_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runner.temp with ballot-guard installed by the Action's own install step."""
    runner_temp = tmp_path_factory.mktemp("runner-temp")
    step = ACTION["runs"]["steps"][0]
    ctx = context(action_checkout, runner_temp, "")
    env = {**os.environ, **{k: substitute(str(v), ctx) for k, v in step["env"].items()}}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=runner_temp, env=env,
                          capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return runner_temp


def shard_jobs(repo: Any, base: str, action: Path, runner_temp: Path, tmp: Path, n: int,
               ) -> list[tuple[subprocess.CompletedProcess[str], dict[str, str]]]:
    """N matrix jobs, each on its own machine (a worktree of the pull request's head);
    what each uploads lands where download-artifact puts it for the merge job."""
    done = []
    for k in range(1, n + 1):
        machine = tmp / f"machine{k}"
        repo.git("worktree", "add", "-q", "--detach", str(machine), "HEAD")
        proc, outputs, _ = judge_step(context(action, runner_temp, base, shard=f"{k}/{n}"),
                                      machine, tmp / f"job{k}")
        card = machine / ".ballot_guard" / "scorecard.json"
        if card.is_file():  # upload-artifact, then download-artifact: <path>/<name>/<file>
            into = runner_temp / "ballot-guard-shards" / outputs["artifact"]
            into.mkdir(parents=True, exist_ok=True)
            shutil.copy(card, into / "scorecard.json")
        done.append((proc, outputs))
    return done


@pytest.fixture
def sharded_pr(tmp_path: Path) -> tuple[Any, str]:
    repo = make_project(tmp_path / "workspace")
    base = repo.head()
    repo.git("checkout", "-q", "-b", "feature")
    write_flaky(repo, tmp_path / "counter")
    repo.commit_all("a property that reads the clock")
    return repo, base


def test_the_sharded_form_gives_one_verdict_from_its_shard_jobs(
        sharded_pr: tuple[Any, str], action_checkout: Path, installed: Path,
        tmp_path: Path) -> None:
    repo, base = sharded_pr
    shutil.rmtree(installed / "ballot-guard-shards", ignore_errors=True)
    jobs = shard_jobs(repo, base, action_checkout, installed, tmp_path, 2)
    assert [o["artifact"] for _, o in jobs] == ["ballot-guard-shard-1", "ballot-guard-shard-2"]
    codes = {o["artifact"]: int(o["exit-code"]) for _, o in jobs}
    assert sorted(codes.values()) == [0, 3]  # one shard passed, the flaky voter's shard froze
    for proc, _ in jobs:
        assert "--shard" not in proc.stderr and "recorded in freeze_set.json" not in proc.stdout
    cards = sorted((installed / "ballot-guard-shards").glob("*/scorecard.json"))
    assert [json.loads(c.read_text())["shard"]["k"] for c in cards] == [1, 2]

    proc, outputs, summary = judge_step(
        context(action_checkout, installed, base, merge="true"), repo.path, tmp_path / "merge")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert outputs == {"artifact": "ballot-guard", "exit-code": "3"}
    assert "merged 2 shard(s) at commit" in proc.stdout
    assert "::error file=properties/test_flaky.py," in proc.stdout
    merged = json.loads((repo.path / ".ballot_guard" / "scorecard.json").read_text())
    assert {n: p["ballot"] for n, p in merged["properties"].items()} == {
        "bounded_retry": "pass", "flaky": "freeze"}
    assert [s["k"] for s in merged["shards"]] == [1, 2] and merged["exit"] == 3
    text = summary.read_text()
    assert "## ballot-guard: abstained (exit 3)" in text and "### Freeze patch" in text
    assert "| `flaky` | freeze | 2 | pass fail |" in text
    assert "+    \"flaky\"" in (repo.path / ".ballot_guard" / "freeze.patch").read_text()


def test_the_merge_job_refuses_a_missing_shard_and_shards_of_another_tip(
        sharded_pr: tuple[Any, str], action_checkout: Path, installed: Path,
        tmp_path: Path) -> None:
    repo, base = sharded_pr
    shutil.rmtree(installed / "ballot-guard-shards", ignore_errors=True)
    shard_jobs(repo, base, action_checkout, installed, tmp_path, 2)
    merge = context(action_checkout, installed, base, merge="true")

    # a shard job that uploaded nothing (cancelled, crashed, never started)
    shutil.rmtree(installed / "ballot-guard-shards" / "ballot-guard-shard-2")
    proc, outputs, summary = judge_step(merge, repo.path, tmp_path / "missing")
    assert proc.returncode == 4 and outputs["exit-code"] == "4"
    assert "shard 2/2 is missing: merge needs all 2 shards' scorecards" in proc.stderr
    assert "## ballot-guard: could not judge (exit 4)" in summary.read_text()
    assert not (repo.path / "freeze_set.json").exists()

    # no shard at all
    shutil.rmtree(installed / "ballot-guard-shards")
    proc, outputs, _ = judge_step(merge, repo.path, tmp_path / "none")
    assert proc.returncode == 4 and "no shard scorecard to merge" in proc.stderr

    # every shard, but voted at an earlier tip than the merge job's checkout
    shard_jobs(repo, base, action_checkout, installed, tmp_path / "old", 2)
    voted = repo.head()
    repo.write("billing.py", (repo.path / "billing.py").read_text() + "# later\n")
    repo.commit_all("a later push")
    proc, outputs, _ = judge_step(merge, repo.path, tmp_path / "other-tip")
    assert proc.returncode == 4 and outputs["exit-code"] == "4"
    assert f"the shards voted on commit {voted[:12]}, but this checkout is at " \
        f"{repo.head()[:12]}" in proc.stderr
    assert not (repo.path / "freeze_set.json").exists()


def test_a_scope_block_is_the_merge_jobs_verdict_even_with_no_shard(
        action_checkout: Path, installed: Path, tmp_path: Path) -> None:
    """Scope comes before the gate: the shards stopped there (nothing uploaded), and the
    merge job's verdict is the block, not a missing shard."""
    repo = make_project(tmp_path / "workspace")
    base = repo.head()
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("billing.py", (repo.path / "billing.py").read_text() + "# and\n")
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text() + "\n")
    repo.commit_all("mixed")
    shutil.rmtree(installed / "ballot-guard-shards", ignore_errors=True)
    jobs = shard_jobs(repo, base, action_checkout, installed, tmp_path, 2)
    assert [o["exit-code"] for _, o in jobs] == ["1", "1"]
    assert not (installed / "ballot-guard-shards").exists()
    proc, outputs, _ = judge_step(context(action_checkout, installed, base, merge="true"),
                                  repo.path, tmp_path / "merge")
    assert proc.returncode == 1 and outputs["exit-code"] == "1", proc.stdout + proc.stderr
    assert "rule 1" in proc.stdout


@pytest.mark.parametrize("inputs, says", [
    ({"shard": "x/2"}, "shard wants K/N"),
    ({"shard": "1/2", "merge": "true"}, "shard and merge are two jobs"),
    ({"merge": "yes"}, "merge wants true, or nothing"),
])
def test_bad_sharding_inputs_are_4_with_an_annotation(action_checkout: Path, installed: Path,
                                                      tmp_path: Path, inputs: dict[str, str],
                                                      says: str) -> None:
    repo = make_project(tmp_path / "workspace")
    proc, outputs, _ = judge_step(context(action_checkout, installed, repo.head(), **inputs),
                                  repo.path, tmp_path / "job")
    assert proc.returncode == 4 and outputs["exit-code"] == "4"
    assert f"::error title=ballot-guard: could not judge (exit 4)::{says}" in proc.stdout


def test_init_writes_the_sharded_workflow_and_its_jobs_give_one_verdict(
        action_checkout: Path, installed: Path, tmp_path: Path) -> None:
    """`init --ci github --shards 3`: its matrix jobs and its merge job, each run through the
    Action's judge step with the inputs the workflow gives it."""
    repo = make_project(tmp_path / "workspace")
    res = run_cli(["init", "--ci", "github", "--shards", "3", "--hooks-repo",
                   "https://github.com/acme/ballot-guard", "--hooks-rev", "v9.9.9"], repo.path)
    assert res.code == 0, res.err
    repo.commit_all("the sharded workflow")
    base = repo.head()
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("properties/test_second.py", "def test_ok():\n    assert True\n")
    repo.commit_all("a second voter")
    workflow = yaml.safe_load((repo.path / ".github/workflows/ballot-guard.yml").read_text())
    shard, verdict = workflow["jobs"]["shard"], workflow["jobs"]["ballot-guard"]
    assert shard["strategy"] == {"fail-fast": False, "matrix": {"shard": [1, 2, 3]}}
    assert verdict["needs"] == "shard" and verdict["if"] == "always()"
    [use] = [s for s in shard["steps"] if s.get("uses", "").startswith("acme/ballot-guard@")]
    [merge_use] = [s for s in verdict["steps"]
                   if s.get("uses", "").startswith("acme/ballot-guard@")]
    assert use["uses"] == merge_use["uses"] == "acme/ballot-guard@v9.9.9"
    assert set(use["with"]) | set(merge_use["with"]) <= set(ACTION["inputs"])
    assert any(".venv/bin/python -m pip install" in s.get("run", "") for s in shard["steps"])

    shutil.rmtree(installed / "ballot-guard-shards", ignore_errors=True)
    for k in shard["strategy"]["matrix"]["shard"]:
        inputs = {name: substitute(str(v), {"matrix": {"shard": k}})
                  for name, v in use["with"].items()}
        assert inputs == {"shard": f"{k}/3"}
        machine = tmp_path / f"machine{k}"
        repo.git("worktree", "add", "-q", "--detach", str(machine), "HEAD")
        proc, outputs, _ = judge_step(context(action_checkout, installed, base, **inputs),
                                      machine, tmp_path / f"job{k}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        into = installed / "ballot-guard-shards" / outputs["artifact"]
        into.mkdir(parents=True)
        shutil.copy(machine / ".ballot_guard" / "scorecard.json", into / "scorecard.json")
    proc, outputs, summary = judge_step(
        context(action_checkout, installed, base, **{k: str(v) for k, v in
                                                     merge_use["with"].items()}),
        repo.path, tmp_path / "merge")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "merged 3 shard(s)" in proc.stdout
    assert "## ballot-guard: clean (exit 0)" in summary.read_text()
    assert outputs == {"artifact": "ballot-guard", "exit-code": "0"}
    merged = json.loads((repo.path / ".ballot_guard" / "scorecard.json").read_text())
    assert sorted(merged["properties"]) == ["bounded_retry", "second"]
    assert [s["voters"] for s in merged["shards"]] == [["bounded_retry"], ["second"], []]
