"""End to end with the real pre-commit framework: ``pre-commit install``, ``git commit``, ``git push``.

pre-commit clones the hook repository at a commit and pip-installs it into a
venv of its own, so the test makes a git copy of this project's working tree
(committed state plus current files) and points ``.pre-commit-config.yaml`` at
it.  The venv is built once per module (a shared PRE_COMMIT_HOME in tmp); pip
uses the configured package index (or its local mirror / cache).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testing.helpers import Repo
from testing.hookutil import (
    BILLING,
    HookSource,
    bare_remote,
    commit,
    hook_source,
    make_project,
    pre_commit,
    push,
    venv_python,
    write_flaky,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    return hook_source(tmp_path_factory.mktemp("framework"))


def _config(path: Path, sha: str) -> str:
    return (f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n"
            "  - id: ballot-guard\n  - id: ballot-gate\n    verbose: true\n")


@pytest.fixture
def framework_project(hook_repo: HookSource, tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch) -> Repo:
    path, sha, home = hook_repo
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))  # one hook venv for the module
    # no `python` in the config: the gate must find the project's .venv, not the hook's venv
    repo = make_project(tmp_path / "project", {".pre-commit-config.yaml": _config(path, sha),
                                               ".gitignore": ".venv/\n"}, python=False)
    venv_python(repo)
    proc = pre_commit(repo, "install", "--hook-type", "pre-commit", "--hook-type", "pre-push")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = pre_commit(repo, "install-hooks")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo


def _out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def test_commit_is_refused_for_a_self_editing_patch_and_passes_when_clean(
        framework_project: Repo) -> None:
    repo = framework_project
    head = repo.head()
    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text().replace("3", "4"))
    repo.stage()
    proc = commit(repo, "-m", "self-editing")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "Failed" in out and "rule 1" in out and "exit 1" in out and "ballot-guard split" in out
    assert repo.head() == head
    repo.git("reset", "-q", "--hard")
    repo.write("billing.py", BILLING + "\n# tidy\n")
    repo.stage()
    proc = commit(repo, "-m", "tidy")
    assert proc.returncode == 0, _out(proc)
    assert repo.head() != head
    # the oracle edit folded into that behaviour commit: through the framework's
    # processes, the hook still finds the amending git above it
    tidy = repo.head()
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text().replace("3", "4"))
    repo.stage()
    proc = commit(repo, "--amend", "--no-edit")
    assert proc.returncode != 0, _out(proc)
    assert "amending HEAD" in _out(proc) and "rule 1" in _out(proc)
    assert repo.head() == tidy


def test_push_is_refused_for_failure_drift_and_freeze_and_accepted_when_clean(
        framework_project: Repo, tmp_path: Path) -> None:
    repo = framework_project
    bare_remote(repo, tmp_path)
    # the first push holds the root commit: pre-commit passes only the branch name
    proc = push(repo, "-u", "origin", "main")
    assert proc.returncode == 0, _out(proc)
    out = _out(proc)
    assert "judging refs/heads/main: 2 commit(s)" in out and "only the first pushed ref" in out
    assert "bounded_retry" in out and "clean (exit 0)" in out
    assert str(repo.path / ".venv" / "bin" / "python") in out  # the project's interpreter
    accepted = repo.head()

    def refused(expect: str) -> None:
        proc = push(repo, "origin", "main")
        out = _out(proc)
        assert proc.returncode != 0, out
        assert expect in out, out
        assert repo.git("ls-remote", "origin", "refs/heads/main").split("\t")[0] == accepted
        repo.git("reset", "-q", "--hard", accepted)
        repo.git("clean", "-q", "-fdx")  # the gate's scorecard and merged freeze records

    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.commit_all("retry four times")
    refused("exit 1")
    repo.write("fixtures/cards.json", "{}\n")
    repo.commit_all("move a fixture")
    refused("exit 2")
    write_flaky(repo, tmp_path / "counter")
    repo.commit_all("a property with a clock in it")
    refused("exit 3")
    repo.write("billing.py", BILLING + "\n# tidy\n")
    repo.commit_all("tidy")
    proc = push(repo, "origin", "main")
    assert proc.returncode == 0, _out(proc)
    assert repo.git("ls-remote", "origin", "refs/heads/main").split("\t")[0] == repo.head()
