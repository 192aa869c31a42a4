"""``ci`` and pre-push on merges, the target's config, the base, and the actor: real
repositories, real GitHub-style merge refs, real pushes to a bare remote."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ballot_guard.change.identity import any_agent, login_identities
from ballot_guard.scope import baseline
from ballot_guard.scope.judge import Judging, judge_commit
from testing.helpers import Repo, run_cli
from testing.hookutil import BILLING, bare_remote, make_project, push, pyproject
from testing.merge_support import merge_taking

PROP = "properties/test_bounded_retry.py"
HUMAN = "Human <h@example.com>"
BOT = "Helper [bot] <helper@example.com>"
AGENTS = 'agents = ["*[bot]*", "Coding Agent <*>"]\n'


def _strengthen(repo: Repo) -> str:
    """A reviewed property change on main (oracle only, by a human); returns the commit
    before it, whose property is the old one."""
    before = repo.head()
    repo.write(PROP, (repo.path / PROP).read_text() + "\n\ndef test_no_retry_on_zero():\n"
               "    pass\n")
    repo.commit_all("a second property test", author=HUMAN)
    return before


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    """Adopted, with ``agents`` configured (a human's oracle-only commit)."""
    repo = make_project(tmp_path / "project")
    repo.write("pyproject.toml", pyproject(AGENTS))
    repo.commit_all("name the agents", author=HUMAN)
    return repo


def _merge_ref(repo: Repo, base: str, head: str, number: int = 1) -> str:
    """What GitHub makes of a pull request: ``refs/pull/N/merge``, a merge of the head
    into the base (first parent: the base), checked out detached as actions/checkout does."""
    repo.git("checkout", "-q", "--detach", base)
    repo.git("merge", "-q", "--no-ff", "-m", f"Merge {head} into {base}", head)
    repo.git("update-ref", f"refs/pull/{number}/merge", "HEAD")
    repo.git("checkout", "-q", f"refs/pull/{number}/merge")
    return repo.head()


# --- merges in ci and pre-push ----------------------------------------------------------------

def test_ci_judges_an_ancestor_merge_that_takes_the_old_property(project: Repo) -> None:
    old = _strengthen(project)
    project.git("checkout", "-q", "-b", "feature")
    merge_taking(project, [project.head(), old], {PROP: old}, author=BOT, branch="feature")
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 1, res.out + res.err
    assert (f"rule 2: an agent change (identity {BOT!r} matches agents pattern '*[bot]*') "
            "touches oracle paths") in res.out
    assert PROP in res.out and "the gate did not run" in res.out


def test_ci_on_githubs_merge_ref_judges_the_pull_requests_merge(project: Repo) -> None:
    old = _strengthen(project)
    project.git("checkout", "-q", "-b", "feature")
    merge_taking(project, [project.head(), old], {PROP: old}, author=BOT, branch="feature")
    project.git("checkout", "-q", "main")
    project.write("README.md", "# billing, moved on\n")
    project.commit_all("main moves on", author=HUMAN)
    _merge_ref(project, "main", "feature")
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 1, res.out + res.err
    assert "rule 2" in res.out and PROP in res.out


def test_a_clean_pull_request_merge_ref_is_clean(project: Repo) -> None:
    project.git("checkout", "-q", "-b", "feature")
    project.write("billing.py", BILLING + "\n# tidy\n")
    project.commit_all("tidy", author=HUMAN)
    project.git("checkout", "-q", "main")
    project.write("README.md", "# billing, moved on\n")
    project.commit_all("main moves on", author=HUMAN)
    _merge_ref(project, "main", "feature")
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 0, res.out + res.err
    assert "1 commit(s) judged" in res.out


def test_pre_push_refuses_an_ancestor_merge(project: Repo, tmp_path: Path) -> None:
    assert run_cli(["install"], project.path).code == 0
    bare_remote(project, tmp_path)
    old = _strengthen(project)
    assert push(project, "-q", "origin", "main").returncode == 0
    merge_taking(project, [project.head(), old], {PROP: old}, author=BOT)
    proc = push(project, "origin", "main")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert (f"rule 2: an agent change (identity {BOT!r} matches agents pattern '*[bot]*') "
            "touches oracle paths") in out and PROP in out
    assert project.git("ls-remote", "origin", "refs/heads/main").split()[0] != project.head()


# --- the target's config ----------------------------------------------------------------------

def test_a_branch_forked_before_agents_existed_is_judged_by_the_targets_config(
        tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(PROP, (repo.path / PROP).read_text() + "\n# the agent's edit\n")
    repo.commit_all("loosen", author=BOT)  # no agents at its base: a human change there
    assert run_cli(["scope", "--commit", "HEAD"], repo.path).code == 0
    repo.git("checkout", "-q", "main")
    repo.write("pyproject.toml", pyproject(AGENTS))
    repo.commit_all("name the agents", author=HUMAN)
    repo.git("checkout", "-q", "feature")
    res = run_cli(["ci", "--base", "main"], repo.path)  # feature: not on main's tip
    assert res.code == 4 and "not an ancestor of HEAD" in res.err
    _merge_ref(repo, "main", "feature")
    res = run_cli(["ci", "--base", "main"], repo.path)
    assert res.code == 1, res.out + res.err
    main = repo.git("rev-parse", "main").strip()
    assert (f"rule 2: by the target's config (at {main[:12]}): an agent change (identity "
            f"{BOT!r} matches agents pattern '*[bot]*') touches oracle paths") in res.out


def test_pre_push_judges_by_the_remote_tips_config_too(project: Repo, tmp_path: Path) -> None:
    """A human loosens ``agents`` (an oracle-only change, fine on its own); an agent's
    property edit after it is judged by the remote's config as well."""
    assert run_cli(["install"], project.path).code == 0
    bare_remote(project, tmp_path)
    assert push(project, "-q", "origin", "main").returncode == 0
    remote = project.head()
    project.write("pyproject.toml", pyproject())
    project.commit_all("no agents", author=HUMAN)
    project.write(PROP, (project.path / PROP).read_text() + "\n# the agent's edit\n")
    project.commit_all("loosen", author=BOT)
    proc = push(project, "origin", "main")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"rule 2: by the target's config (at {remote[:12]})" in out
    assert "1 commit(s) blocked by rule 2" in out


def test_the_targets_config_does_not_block_what_it_allows(project: Repo) -> None:
    project.git("checkout", "-q", "-b", "feature")
    project.write(PROP, (project.path / PROP).read_text() + "\n# reviewed\n")
    project.commit_all("a human's property edit", author=HUMAN)
    res = run_cli(["scope", "--range", "main..HEAD", "--json"], project.path)
    assert res.code == 0
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 0, res.out + res.err


# --- the base -----------------------------------------------------------------------------------

def test_a_shallow_clone_says_so_in_one_line(project: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{project.path}",
                    str(clone)], check=True)
    assert (clone / ".git" / "shallow").exists()
    for base in ("origin/main", "HEAD~1", "0" * 40):
        res = run_cli(["ci", "--base", base], clone)
        assert res.code == 4 and res.out == "", res.out
        assert res.err.startswith("ballot-guard: error: shallow clone: fetch-depth 0")
        assert res.err.count("\n") == 1 and "bad object" not in res.err


# --- the actor ----------------------------------------------------------------------------------

def _human_oracle_edit(project: Repo) -> None:
    project.git("checkout", "-q", "-b", "feature")
    project.write(PROP, (project.path / PROP).read_text() + "\n# by a human, proposed by?\n")
    project.commit_all("edit the property", author=HUMAN)


@pytest.mark.parametrize("actor,identity,pattern", [
    ("dependabot[bot]", "dependabot[bot]", "*[bot]*"),
    ("coding agent", "coding agent <>", "Coding Agent <*>"),
    ("Coding  Agent", "Coding  Agent <>", "Coding Agent <*>"),
])
def test_an_agent_actor_makes_every_commit_an_agent_change(project: Repo, actor: str,
                                                           identity: str, pattern: str) -> None:
    _human_oracle_edit(project)
    res = run_cli(["ci", "--base", "main", "--actor", actor], project.path)
    assert res.code == 1, res.out + res.err
    assert (f"rule 2: an agent change (identity {identity!r} matches agents pattern "
            f"{pattern!r}) touches oracle paths") in res.out


@pytest.mark.parametrize("actor", ["octocat", "dependabot", "Coding Agents"])
def test_a_human_actor_changes_nothing(project: Repo, actor: str) -> None:
    _human_oracle_edit(project)
    res = run_cli(["ci", "--base", "main", "--actor", actor], project.path)
    assert res.code == 0, res.out + res.err


def _event(tmp_path: Path, payload: object | str) -> Path:
    path = tmp_path / "event.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def test_under_github_the_pull_request_author_is_the_actor(
        project: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _human_oracle_edit(project)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_ACTOR", "octocat")  # who re-ran the workflow
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, {
        "action": "synchronize", "pull_request": {"user": {"login": "renovate[bot]"}}})))
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 1, res.out + res.err
    assert "actor renovate[bot]" in res.out and "rule 2" in res.out
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, {
        "action": "synchronize", "pull_request": {"user": {"login": "octocat"}}})))
    assert run_cli(["ci", "--base", "main"], project.path).code == 0


def test_under_github_without_a_pull_request_the_actor_is_github_actor(
        project: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _human_oracle_edit(project)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_ACTOR", "github-actions[bot]")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, {"ref": "refs/heads/x"})))
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 1 and "actor github-actions[bot]" in res.out, res.out + res.err
    res = run_cli(["ci", "--base", "main", "--actor", "octocat"], project.path)
    assert res.code == 0, res.out + res.err  # given on the command line, it wins


@pytest.mark.parametrize("payload,why", [
    ("{not json", "is not JSON"),
    ("[1, 2]", "holds no JSON object"),
    ({"pull_request": {"user": {}}}, "without user.login"),
    ({"pull_request": "x"}, "without user.login"),
    (None, "cannot read the GitHub event file"),
])
def test_a_bad_event_file_is_one_line_and_4(project: Repo, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             payload: object, why: str) -> None:
    _human_oracle_edit(project)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    path = tmp_path / "missing.json" if payload is None else _event(tmp_path, payload)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    res = run_cli(["ci", "--base", "main"], project.path)
    assert res.code == 4, res.out + res.err
    assert res.err.count("\n") == 1 and why in res.err and "Traceback" not in res.err
    assert not (project.path / ".ballot_guard" / "scorecard.json").exists()


def test_an_empty_actor_is_a_usage_error(project: Repo) -> None:
    res = run_cli(["ci", "--base", "main", "--actor", " "], project.path)
    assert res.code == 4 and res.err == "ballot-guard: error: --actor wants an account name\n"


def test_login_identities_match_as_documented() -> None:
    assert any_agent(["*[bot]*"], login_identities("dependabot[bot]"))
    assert any_agent(["Coding Agent <*>"], login_identities("coding agent"))
    assert not any_agent(["* <agent@example.com>"], login_identities("agent"))
    assert not any_agent(["*[bot]*"], login_identities("bob"))


def test_a_finding_of_both_configs_is_given_once_and_the_targets_own_is_labelled(
        tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    fork = repo.head()
    repo.write("pyproject.toml", pyproject(AGENTS))
    target = repo.commit_all("name the agents", author=HUMAN)
    repo.git("checkout", "-q", "-b", "feature", fork)
    repo.write(PROP, (repo.path / PROP).read_text() + "\n# the agent's edit\n")
    repo.write("billing.py", BILLING + "\n# and code\n")
    sha = repo.commit_all("mixed", author=BOT)
    root = str(repo.path)
    alone = judge_commit(root, sha)
    assert [(r.rule, r.message) for r in alone.reasons] == [
        (1, "the change touches oracle paths and behaviour paths together")]
    both = judge_commit(root, sha, judging=Judging(baseline.at(root, target)))
    assert [(r.rule, r.message) for r in both.reasons] == [
        (1, "the change touches oracle paths and behaviour paths together"),
        (2, (f"by the target's config (at {target[:12]}): an agent change (identity "
             f"{BOT!r} matches agents pattern '*[bot]*') touches oracle paths"))]
