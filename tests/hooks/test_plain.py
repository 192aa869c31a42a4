"""End to end with plain git hooks (``ballot-guard install``): real ``git commit`` and ``git push``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from testing.helpers import Repo, init_repo, run_cli
from testing.hookutil import (
    BILLING,
    bare_remote,
    commit,
    env_with,
    make_project,
    push,
    write_flaky,
)


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    repo = make_project(tmp_path / "project")
    assert run_cli(["install"], repo.path).code == 0
    return repo


def _out(proc: object) -> str:
    return f"{getattr(proc, 'stdout', '')}{getattr(proc, 'stderr', '')}"


# --- pre-commit -------------------------------------------------------------------------------

def test_a_self_editing_commit_is_refused(project: Repo) -> None:
    head = project.head()
    project.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text()
                  .replace("== 3", "== 4"))
    project.stage()
    proc = commit(project, "-m", "retry once more")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "rule 1" in out and "exit 1" in out and "ballot-guard split" in out
    assert "properties/test_bounded_retry.py" in out and "billing.py" in out
    assert project.head() == head


@pytest.mark.parametrize("flag", ["--amend", "--amen"])
def test_an_oracle_edit_amended_into_a_behaviour_commit_is_refused(project: Repo,
                                                                   flag: str) -> None:
    """The hook judges the index against HEAD; on an amend HEAD is the commit being
    replaced, so it judges against HEAD's parent, as the amended commit will be."""
    project.write("billing.py", BILLING + "\n# tidy\n")
    project.stage()
    assert commit(project, "-m", "tidy").returncode == 0
    head = project.head()
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text()
                  .replace("== 3", "== 4"))
    project.stage()
    assert run_cli(["hook", "pre-commit"], project.path).code == 0  # alone: oracle-only
    proc = commit(project, flag, "--no-edit")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "amending HEAD" in out and "rule 1" in out and "billing.py" in out
    assert project.head() == head
    project.git("reset", "-q", "--hard")
    proc = commit(project, "--amend", "-m", "tidy, reworded")  # a plain amend still works
    assert proc.returncode == 0, _out(proc)


def test_a_clean_commit_passes(project: Repo) -> None:
    project.write("billing.py", BILLING + "\n# tidy\n")
    project.stage()
    proc = commit(project, "-m", "tidy")
    assert proc.returncode == 0, _out(proc)


def test_an_agent_may_not_touch_the_oracle(project: Repo) -> None:
    project.write("properties/test_bounded_retry.py", "def test_bounded_retry():\n    pass\n")
    project.stage()
    proc = commit(project, "-m", "relax", env=env_with(BALLOT_GUARD_AGENT="1"))
    out = _out(proc)
    assert proc.returncode != 0 and "rule 2" in out and "exit 1" in out, out


def test_fixtures_without_a_re_pin_are_exit_2(project: Repo) -> None:
    project.write("fixtures/cards.json", '{"cards": [1, 2, 3, 4]}\n')
    project.stage()
    proc = commit(project, "-m", "more cards")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "exit 2" in out and "ballot-guard digest --pin" in out


def test_fixtures_with_their_re_pin_pass(project: Repo) -> None:
    project.write("fixtures/cards.json", '{"cards": [1, 2, 3, 4]}\n')
    assert run_cli(["digest", "--pin"], project.path).code == 0
    project.stage()
    proc = commit(project, "-m", "more cards, re-pinned")
    assert proc.returncode == 0, _out(proc)


def test_a_staged_pin_that_does_not_match_is_exit_2(project: Repo) -> None:
    project.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    project.stage()
    proc = commit(project, "-m", "bad pin")
    out = _out(proc)
    assert proc.returncode != 0 and "exit 2" in out, out


# --- pre-push ----------------------------------------------------------------------------------

@pytest.fixture
def pushed(project: Repo, tmp_path: Path) -> Repo:
    bare_remote(project, tmp_path)
    proc = push(project, "-u", "origin", "main")
    assert proc.returncode == 0, _out(proc)
    return project


def _remote_head(repo: Repo, branch: str = "main") -> str:
    return repo.git("ls-remote", "origin", f"refs/heads/{branch}").split("\t")[0]


def test_first_push_judges_every_commit_and_runs_the_gate(project: Repo, tmp_path: Path) -> None:
    bare_remote(project, tmp_path)
    proc = push(project, "origin", "main")
    out = _out(proc)
    assert proc.returncode == 0, out
    assert "2 commit(s)" in out and "bounded_retry" in out
    assert _remote_head(project) == project.head()


def test_a_clean_push_is_accepted(pushed: Repo) -> None:
    pushed.write("billing.py", BILLING + "\n# tidy\n")
    pushed.commit_all("tidy")
    proc = push(pushed, "origin", "main")
    assert proc.returncode == 0, _out(proc)
    assert _remote_head(pushed) == pushed.head()


def _refused(pushed: Repo, before: str, *said: str) -> None:
    """The push fails, its output says each of ``said``, and the remote stays at ``before``."""
    proc = push(pushed, "origin", "main")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert all(text in out for text in said), out
    assert _remote_head(pushed) == before


def test_a_stable_failure_is_refused(pushed: Repo) -> None:
    before = _remote_head(pushed)
    pushed.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    pushed.commit_all("retry four times")
    _refused(pushed, before, "bounded_retry", "exit 1")


def test_fixture_drift_is_refused(pushed: Repo) -> None:
    before = _remote_head(pushed)
    pushed.write("fixtures/cards.json", '{"cards": []}\n')
    pushed.commit_all("move a fixture")  # committed without the hook
    _refused(pushed, before, "exit 2")


def test_a_frozen_voter_is_refused(pushed: Repo, tmp_path: Path) -> None:
    before = _remote_head(pushed)
    write_flaky(pushed, tmp_path / "flaky-counter")
    pushed.commit_all("a property with a clock in it")
    _refused(pushed, before, "flaky", "exit 3")


def test_a_mixed_commit_blocks_the_push_before_the_gate(pushed: Repo) -> None:
    before = _remote_head(pushed)
    pushed.write("billing.py", BILLING + "\n# tidy\n")
    pushed.write("properties/test_bounded_retry.py",
                 (pushed.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pushed.commit_all("mixed")  # committed without the hook
    _refused(pushed, before, "rule 1", "the gate did not run")


def test_a_new_branch_is_judged_on_its_own_commits(pushed: Repo) -> None:
    pushed.git("checkout", "-q", "-b", "topic")
    pushed.write("billing.py", BILLING + "\n# tidy\n")
    pushed.commit_all("tidy on a branch")
    proc = push(pushed, "origin", "topic")
    out = _out(proc)
    assert proc.returncode == 0, out
    assert "refs/heads/topic: 1 commit(s)" in out


def test_a_deletion_is_skipped(pushed: Repo) -> None:
    pushed.git("push", "-q", "--no-verify", "origin", "main:refs/heads/old")
    proc = push(pushed, "origin", ":old")
    out = _out(proc)
    assert proc.returncode == 0 and "nothing to judge" in out, out


def test_every_ref_of_a_multi_ref_push_is_judged(pushed: Repo) -> None:
    pushed.git("checkout", "-q", "-b", "good")
    pushed.write("README.md", "# billing\nnotes\n")
    pushed.commit_all("docs")
    pushed.git("checkout", "-q", "-b", "bad", "main")
    pushed.write("billing.py", BILLING + "\n# x\n")
    pushed.write("properties/test_bounded_retry.py",
                 (pushed.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pushed.commit_all("mixed")
    proc = push(pushed, "origin", "good", "bad")
    out = _out(proc)
    assert proc.returncode != 0 and "refs/heads/bad" in out and "rule 1" in out, out
    assert pushed.git("ls-remote", "origin", "refs/heads/good") == ""


def test_dropping_a_frozen_name_by_hand_is_refused(project: Repo) -> None:
    project.write("freeze_set.json", json.dumps({
        "frozen": ["bounded_retry"], "records": {},
        "history": [{"event": "frozen", "name": "bounded_retry", "at": "2026-01-01T00:00:00Z"}],
    }, indent=2) + "\n")
    project.commit_all("freeze")
    project.write("freeze_set.json", json.dumps({"frozen": []}, indent=2) + "\n")
    project.stage()
    proc = commit(project, "-m", "paint the badge green")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "rule 4" in out and "exit 1" in out and "ballot-guard unfreeze" in out


def test_the_first_commit_of_a_new_repository_passes(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "fresh")
    assert run_cli(["install"], repo.path).code == 0
    repo.write("billing.py", BILLING)
    repo.write("properties/test_x.py", "def test_x():\n    pass\n")
    repo.stage()
    proc = commit(repo, "-m", "import")
    assert proc.returncode == 0, _out(proc)
    assert "not judged" in _out(proc)


def test_a_legacy_pre_push_hook_sees_the_same_stdin(pushed: Repo, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    hooks = pushed.path / ".git" / "hooks"
    assert run_cli(["install", "--uninstall"], pushed.path).code == 0
    (hooks / "pre-push").write_text(f"#!/bin/sh\necho \"$1 $2\" > {seen}\ncat >> {seen}\n")
    (hooks / "pre-push").chmod(0o755)
    assert run_cli(["install"], pushed.path).code == 0
    pushed.write("README.md", "# billing\nmore\n")
    pushed.commit_all("docs")
    proc = push(pushed, "origin", "main")
    assert proc.returncode == 0, _out(proc)
    lines = seen.read_text().splitlines()
    assert lines[0].startswith("origin ") and lines[1].startswith(f"refs/heads/main {pushed.head()} ")
    assert "refs/heads/main: 1 commit(s)" in _out(proc)


# --- pre-push, in process: what a hook can be handed --------------------------------------------

def test_malformed_stdin_is_4(project: Repo) -> None:
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path, stdin="garbage\n")
    assert res.code == 4 and "malformed pre-push line" in res.err


def test_an_unknown_pushed_sha_is_4(project: Repo) -> None:
    line = f"refs/heads/main {'1' * 40} refs/heads/main {'0' * 40}\n"
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path, stdin=line)
    assert res.code == 4 and "is not a commit here" in res.err


def test_only_deletions_pass(project: Repo) -> None:
    line = f"(delete) {'0' * 40} refs/heads/x {project.head()}\n"
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path, stdin=line)
    assert res.code == 0 and "nothing to judge" in res.out


def test_pre_commit_passing_no_ref_fails_closed(project: Repo,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_COMMIT", "1")
    res = run_cli(["hook", "pre-push"], project.path, stdin="")
    assert res.code == 4 and "refusing to pass the push unjudged" in res.err


def test_pre_commit_root_push_judges_the_branch(project: Repo,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_COMMIT", "1")
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_NAME", "origin")
    project.write("billing.py", BILLING + "\n# x\n")
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text() + "\n")
    project.commit_all("mixed")
    res = run_cli(["hook", "pre-push"], project.path)
    assert res.code == 1, res.out + res.err
    assert "refs/heads/main: 3 commit(s)" in res.out and "rule 1" in res.out


def test_pre_commit_from_and_to_refs(project: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    base = project.head()
    project.write("fixtures/cards.json", "{}\n")
    project.commit_all("move a fixture")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", project.head())
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path)
    assert res.code == 2 and "exit 2" in res.out, res.out + res.err


def test_commit_all_judges_the_index_git_hands_the_hook(project: Repo) -> None:
    """``git commit -a`` / ``--only`` judge a temporary index (GIT_INDEX_FILE), not .git/index."""
    project.write("billing.py", BILLING + "\n# tidy\n")
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text() + "\n")
    proc = commit(project, "-a", "-m", "everything")
    assert proc.returncode != 0 and "rule 1" in _out(proc), _out(proc)
    proc = commit(project, "-m", "only the code", "--", "billing.py")
    assert proc.returncode == 0, _out(proc)
    assert project.git("show", "--name-only", "--format=", "HEAD").split() == ["billing.py"]


def test_a_tag_on_a_pushed_commit_is_not_judged_again(pushed: Repo) -> None:
    pushed.git("tag", "v1")
    proc = push(pushed, "origin", "v1")
    out = _out(proc)
    assert proc.returncode == 0, out
    assert "no new commit" in out and "ballot-guard gate" not in out


def test_a_remote_tip_unknown_here_falls_back_to_the_remote_tracking_refs(
        pushed: Repo, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git_out = pushed.git("remote", "get-url", "origin").strip()
    Repo(tmp_path).git("clone", "-q", git_out, str(other))
    clone = Repo(other)
    clone.write("README.md", "# billing\nfrom elsewhere\n")
    clone.commit_all("docs from elsewhere")
    clone.git("push", "-q", "--no-verify", "origin", "main")
    pushed.write("billing.py", BILLING + "\n# x\n")
    pushed.write("properties/test_bounded_retry.py",
                 (pushed.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pushed.commit_all("mixed")
    proc = push(pushed, "--force", "origin", "main")  # the remote's tip is not known here
    out = _out(proc)
    assert proc.returncode != 0 and "refs/heads/main: 1 commit(s)" in out and "rule 1" in out, out


def test_a_broken_config_at_the_pushed_tip_is_4_before_anything_else(project: Repo) -> None:
    base = project.head()
    project.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 1\n")
    project.write("fixtures/cards.json", "{}\n")  # drift too: config is reached first
    project.commit_all("break the config")
    line = f"refs/heads/main {project.head()} refs/heads/main {base}\n"
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path, stdin=line)
    assert res.code == 4, res.out + res.err
    assert "CANNOT JUDGE (exit 4)" in res.out and "repeats" in res.out


def test_a_broken_config_at_head_is_4_at_commit_time(project: Repo) -> None:
    project.write("pyproject.toml", "[tool.ballot_guard]\nbogus = 1\n")
    project.commit_all("break the config")
    project.write("billing.py", BILLING + "\n# x\n")
    project.stage()
    res = run_cli(["hook", "pre-commit"], project.path)
    assert res.code == 4 and "bogus" in res.err


def test_an_unpinned_fixture_commit_is_2_even_when_a_later_commit_re_pins(project: Repo) -> None:
    base = project.head()
    project.write("fixtures/cards.json", "{}\n")
    project.commit_all("move a fixture")
    run_cli(["digest", "--pin"], project.path)
    project.commit_all("re-pin later")
    line = f"refs/heads/main {project.head()} refs/heads/main {base}\n"
    res = run_cli(["hook", "pre-push", "origin", "url"], project.path, stdin=line)
    assert res.code == 2, res.out + res.err
    assert "rule 3" in res.out and "FIXTURE PIN (exit 2)" in res.out


def test_a_missing_runner_is_4_before_a_scope_block(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "p")
    repo.write("pyproject.toml", (repo.path / "pyproject.toml").read_text().replace(
        sys.executable, str(tmp_path / "no-such-python")))
    repo.commit_all("point the runner nowhere")
    base = repo.head()
    repo.write("billing.py", BILLING + "\n# x\n")
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text() + "\n")
    repo.commit_all("mixed")
    line = f"refs/heads/main {repo.head()} refs/heads/main {base}\n"
    res = run_cli(["hook", "pre-push", "origin", "url"], repo.path, stdin=line)
    assert res.code == 4, res.out + res.err
    assert "CANNOT JUDGE (exit 4): runner" in res.out


def test_a_merge_of_pushed_branches_still_faces_the_gate(pushed: Repo) -> None:
    pushed.git("checkout", "-q", "-b", "docs")
    pushed.write("README.md", "# billing\nnotes\n")
    pushed.commit_all("docs")
    assert push(pushed, "--no-verify", "origin", "docs").returncode == 0
    pushed.git("checkout", "-q", "-b", "merged", "main")
    pushed.git("merge", "-q", "--no-ff", "-m", "merge docs", "docs")  # new: the merge alone
    proc = push(pushed, "origin", "merged")
    out = _out(proc)
    assert proc.returncode == 0, out
    assert "refs/heads/merged: 0 commit(s)" in out and "ballot-guard gate" in out


def test_committing_a_conflicted_merge_is_not_blocked_as_mixed(project: Repo) -> None:
    project.git("checkout", "-q", "-b", "side")
    project.write("properties/test_bounded_retry.py",
                  (project.path / "properties/test_bounded_retry.py").read_text() + "\n# side\n")
    project.commit_all("oracle on the side")
    project.write("billing.py", BILLING + "\n# side\n")
    project.write("README.md", "# billing\nside\n")
    project.commit_all("code and docs on the side")
    project.git("checkout", "-q", "main")
    project.write("README.md", "# billing\nmain\n")
    project.commit_all("docs on main")
    project.git("merge", "-q", "side", check=False)  # README conflicts
    project.write("README.md", "# billing\nboth\n")
    project.stage()
    proc = commit(project, "--no-edit")
    out = _out(proc)
    assert proc.returncode == 0, out
    assert "committing a merge" in out
    # the same staged change outside a merge is blocked
    project.git("reset", "-q", "--soft", "HEAD~1")
    proc = commit(project, "-m", "squashed")
    assert proc.returncode != 0 and "rule 1" in _out(proc)
