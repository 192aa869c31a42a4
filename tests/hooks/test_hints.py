"""Hints that fit the situation, each on a real repository: the by-hand split names its
paths, ``split --head`` is offered only where it would work, commits get commit-level
advice, a freeze names what its failing run showed, a missing fixtures dir is not called
drift, ``freeze list`` prints no ``seed None``, an empty pre-commit stage says so."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ballot_guard.hooks import framework_hint
from ballot_guard.vote import freeze_hint
from testing.helpers import Repo, run_cli
from testing.hookutil import BILLING, FLAKY, bare_remote, make_project, pyproject

AGENT = "Coding Agent <agent@example.com>"


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    return make_project(tmp_path / "project")


def _mixed(repo: Repo) -> None:
    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text().replace("3", "4"))


def test_the_by_hand_split_names_its_paths(project: Repo) -> None:
    _mixed(project)
    project.stage()
    res = run_cli(["scope"], project.path)
    assert res.code == 1
    assert "    git restore --staged -- billing.py\n" in res.out
    assert "    git add -- billing.py\n" in res.out


def test_no_by_hand_split_without_paths_for_it(project: Repo) -> None:
    """Only the judge table and another table of one file changed: nothing to restore."""
    project.write("pyproject.toml", pyproject("repeats = 3\n") + '\n[tool.ruff]\nline-length = 90\n')
    project.stage()
    res = run_cli(["scope"], project.path)
    assert res.code == 1, res.out
    assert "ballot-guard split -m 'Update the oracle'" in res.out
    assert not re.search(r"git (restore --staged|add) -- *$", res.out, re.MULTILINE), res.out
    assert "or by hand" not in res.out
    assert "pyproject.toml: judge tables and other tables changed" in res.out


def test_split_head_is_offered_for_an_unpushed_head_and_works(project: Repo) -> None:
    _mixed(project)
    project.commit_all("mixed")
    res = run_cli(["scope", "--commit", "HEAD"], project.path)
    assert "    ballot-guard split --head\n" in res.out
    assert "would refuse" not in res.out
    assert run_cli(["split", "--head"], project.path).code == 0


def test_split_head_is_not_offered_for_a_pushed_commit(project: Repo, tmp_path: Path) -> None:
    bare_remote(project, tmp_path)
    _mixed(project)
    sha = project.commit_all("mixed")
    project.git("push", "-q", "origin", "main")
    res = run_cli(["scope", "--commit", "HEAD"], project.path)
    assert "(`ballot-guard split --head` would refuse: it is pushed already (origin/main))" \
        in res.out
    assert f"git revert --no-edit {sha[:12]}" in res.out
    assert f"git restore --source={sha[:12]} --staged --worktree -- " \
        "properties/test_bounded_retry.py" in res.out
    assert run_cli(["split", "--head"], project.path).code == 4  # as the hint said


def test_an_agent_commit_gets_no_split_and_no_unstage(project: Repo) -> None:
    project.write("pyproject.toml", pyproject(f'agents = ["{AGENT}"]\n'))
    project.commit_all("agents")
    _mixed(project)
    sha = project.commit_all("agent work", author=AGENT)
    res = run_cli(["scope", "--commit", "HEAD"], project.path)
    assert res.code == 1
    assert "split --head" not in res.out and "unstage" not in res.out
    assert f"git restore --source={sha[:12]}~1 --staged --worktree -- " \
        "properties/test_bounded_retry.py" in res.out
    assert run_cli(["split", "--head"], project.path).code == 1  # split refuses an agent


def test_ci_gives_commit_level_advice_in_its_summary(
        project: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("pyproject.toml", pyproject(f'agents = ["{AGENT}"]\n'))
    project.commit_all("agents")
    project.git("checkout", "-q", "-b", "feature")
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text() + "\n")
    project.commit_all("agent edits its judge", author=AGENT)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 1
    text = summary.read_text()
    nxt = text.split("**Next:**", 1)[1].split("\n", 1)[0]
    assert "unstage" not in nxt and "git restore --staged PATH" not in nxt
    assert "a human takes its oracle part out in a new commit" in nxt


def test_a_freeze_names_its_flip_pattern_and_what_the_failing_run_showed(
        project: Repo, tmp_path: Path) -> None:
    project.git("checkout", "-q", "-b", "feature")
    project.write("properties/test_flaky.py",
                  FLAKY.replace('os.environ["BG_FLAKY_COUNTER"]', repr(str(tmp_path / "n"))))
    project.write("pyproject.toml", (project.path / "pyproject.toml").read_text()
                  + 'sandbox = "off"\n')  # the counter is state between runs
    project.commit_all("flaky")
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 3
    nxt = res.out.split("  next: ", 1)[1].split("\n", 1)[0]
    assert nxt.startswith("flaky flipped on identical inputs (pass, fail); a failing run "
                          "showed `assert (1 % 2) == 0`; the first run passed and every later "
                          "one failed: state one run leaves for the next"), nxt
    assert "fake clock" not in nxt
    assert nxt.endswith("then `ballot-guard unfreeze flaky` in a reviewed commit")


@pytest.mark.parametrize(("outcomes", "words"), [
    (["pass", "fail", "fail"], "the first run passed and every later one failed"),
    (["fail", "pass", "pass"], "a warm-up"),
    (["pass", "fail", "pass", "fail"], "the runs alternate"),
    (["pass", "pass", "fail", "pass"], "no order"),
    (["pass", "timeout"], "a run timed out"),
])
def test_the_flip_pattern_is_read_from_the_outcomes(outcomes: list[str], words: str) -> None:
    assert words in freeze_hint.cause(outcomes)


def test_a_failure_that_names_time_suggests_a_fake_clock() -> None:
    prop = {"ballot": "freeze", "runs": [
        {"outcome": "pass"}, {"outcome": "fail", "failure": "assert time.time() < deadline"}]}
    assert "(it names time: a fake clock may be what it needs)" in \
        freeze_hint.describe("retry", prop)


def test_the_excerpt_is_pytests_E_line() -> None:
    output = "F\n___ test_x ___\n    def test_x():\n>       assert 1 == 2\nE       assert 1 == 2\n" \
             "E        +  where ...\nFAILED test_x.py::test_x\n"
    assert freeze_hint.excerpt(output) == "assert 1 == 2"
    assert freeze_hint.excerpt("") == ""


def test_a_missing_fixtures_dir_is_not_called_drift(project: Repo) -> None:
    project.write("pyproject.toml", pyproject('fixtures_dir = "fixture"\n'))
    project.write("fixture_digest.txt", (project.path / "fixture_digest.txt").read_text())
    res = run_cli(["digest", "--check"], project.path)
    assert res.code == 2
    assert "the fixtures dir fixture/ does not exist in the working tree, but " \
        "fixture_digest.txt pins sha256-v2:" in res.out
    assert "check `fixtures_dir` in [tool.ballot_guard]" in res.out
    assert "fixture drift" not in res.out
    project.commit_all("a wrong fixtures_dir")
    res = run_cli(["digest", "--check", "--rev", "HEAD"], project.path)
    assert res.code == 2 and "the fixtures dir fixture/ does not exist at this revision" in res.out


def test_freeze_list_prints_no_seed_none(project: Repo) -> None:
    project.write("freeze_set.json", '{"frozen": ["bounded_retry"]}\n')  # the seed's format
    res = run_cli(["freeze", "list"], project.path)
    assert res.code == 0
    assert "seed" not in res.out
    assert res.out == "bounded_retry: frozen (no record), ballots -, owner -, note - [needs review]\n"


def test_pre_commit_with_nothing_staged_says_it_judged_nothing(project: Repo) -> None:
    res = run_cli(["hook", "pre-commit"], project.path)
    assert res.code == 0
    assert "ballot-guard: nothing is staged, so this stage judged nothing" in res.out


def test_under_the_framework_a_blocked_hook_says_how_to_reach_each_command(
        tmp_path: Path) -> None:
    """The real framework run is in test_manual_hooks; here the rule of when to say it."""
    hook_env = "/home/u/.cache/pre-commit/repo1a2b/py_env-python3.11"
    bare = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "ballot-guard").exists())
    said = framework_hint.lines({"PRE_COMMIT": "1", "PATH": bare}, hook_env)
    assert said[0] == ("ballot-guard: ballot-guard came through pre-commit, so it is not on "
                       "your PATH; run the commands above as:")
    assert "  ballot-guard split: pre-commit run ballot-split --hook-stage manual" in said
    assert "  ballot-guard digest --pin: pre-commit run ballot-pin --hook-stage manual (stage " \
        "the fixtures first: pre-commit stashes the rest)" in said
    assert f"  any command: {hook_env}/bin/ballot-guard ...  (this hook's environment)" in said
    assert said[-1].startswith("  or install it: pipx install")
    # not under the framework, or from an environment of the user's (language: system)
    assert framework_hint.lines({"PATH": bare}, hook_env) == []
    assert framework_hint.lines({"PRE_COMMIT": "1", "PATH": bare}, "/work/project/.venv") == []
    user_bin = tmp_path / "bin"
    user_bin.mkdir()
    (user_bin / "ballot-guard").write_text("#!/bin/sh\n")
    (user_bin / "ballot-guard").chmod(0o755)
    assert framework_hint.lines({"PRE_COMMIT": "1", "PATH": str(user_bin)}, hook_env) == []
