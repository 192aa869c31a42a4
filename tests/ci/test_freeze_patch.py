"""A freeze found in CI survives the checkout CI throws away: ``ci`` prints the freeze
record as a patch, writes ``.ballot_guard/freeze.patch`` and puts it in the step summary;
applied to a fresh clone and committed, every later run abstains (3) on the frozen voter."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testing.helpers import Repo, git, run_cli
from testing.hookutil import bare_remote, make_project, write_flaky


def clone(remote: Path, dest: Path, branch: str) -> Repo:
    subprocess.run(["git", "clone", "-q", "-b", branch, str(remote), str(dest)], check=True,
                   capture_output=True)
    git(dest, "branch", "-q", "main", "origin/main")
    return Repo(dest)


@pytest.fixture
def flaky_pr(tmp_path: Path) -> Path:
    """A remote whose branch `feature` adds a property that passes, then fails."""
    repo = make_project(tmp_path / "project")
    remote = bare_remote(repo, tmp_path)
    repo.git("push", "-q", "origin", "main")
    repo.git("checkout", "-q", "-b", "feature")
    write_flaky(repo, tmp_path / "counter")
    repo.commit_all("a property that reads the clock")
    repo.git("push", "-q", "origin", "feature")
    return remote


def test_the_freeze_patch_applies_to_a_fresh_clone_and_the_voter_stays_frozen(
        flaky_pr: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    ci = clone(flaky_pr, tmp_path / "ci-checkout", "feature")
    res = run_cli(["ci", "--base", "main"], ci.path)
    assert res.code == 3, res.out + res.err
    patch = (ci.path / ".ballot_guard" / "freeze.patch").read_text()
    assert patch.startswith("diff --git a/freeze_set.json b/freeze_set.json\nnew file mode")
    assert "ballot-guard: froze flaky: this checkout is thrown away after CI" in res.out
    assert "".join(f"    {line}\n" for line in patch.splitlines()) in res.out
    hint = "git apply --index freeze.patch && git commit -m 'Freeze flaky' -- freeze_set.json"
    assert f"in a reviewed commit: {hint}\n" in res.out
    text = summary.read_text()
    assert "### Freeze patch" in text and f"```diff\n{patch}```\n" in text
    assert ci.git("status", "--porcelain", "--untracked-files=no") == ""  # nothing tracked moved

    mine = clone(flaky_pr, tmp_path / "mine", "feature")
    (mine.path / "freeze.patch").write_text(patch)  # saved from the log or the artifact
    proc = subprocess.run(["bash", "-c", hint], cwd=mine.path, capture_output=True, text=True,
                          check=False)  # exactly what ci printed
    assert proc.returncode == 0, proc.stderr
    (mine.path / "freeze.patch").unlink()
    assert mine.git("show", "--name-only", "--format=%s", "HEAD").split() == [
        "Freeze", "flaky", "freeze_set.json"]
    frozen = json.loads((mine.path / "freeze_set.json").read_text())
    assert frozen["frozen"] == ["flaky"]
    assert frozen["records"]["flaky"]["ballots"] == ["pass", "fail"]
    mine.git("push", "-q", "origin", "feature")
    for attempt in range(3):  # CI on the same commit, each time a fresh checkout: 3 every time
        again = clone(flaky_pr, tmp_path / f"ci-{attempt}", "feature")
        res = run_cli(["ci", "--base", "main"], again.path)
        assert res.code == 3, res.out + res.err
        card = json.loads((again.path / ".ballot_guard" / "scorecard.json").read_text())
        assert card["properties"]["flaky"]["ballot"] == "frozen"
        assert card["properties"]["flaky"].get("runs", []) == []
        assert card["properties"]["bounded_retry"]["ballot"] == "pass"
        assert not (again.path / ".ballot_guard" / "freeze.patch").exists()
        assert "ballot-guard: froze" not in res.out


def test_no_freeze_no_patch_and_a_stale_one_is_removed(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("billing.py", (repo.path / "billing.py").read_text() + "\n# tidy\n")
    repo.commit_all("tidy")
    stale = repo.path / ".ballot_guard" / "freeze.patch"
    stale.parent.mkdir(exist_ok=True)
    stale.write_text("old\n")
    res = run_cli(["ci", "--base", "main"], repo.path)
    assert res.code == 0, res.out + res.err
    assert not stale.exists()
    junit = (repo.path / ".ballot_guard" / "junit.xml").read_text()
    assert 'name="bounded_retry"' in junit
