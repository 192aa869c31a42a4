"""Deleting the pin: alone and by a human it is an oracle change (0); then nobody votes (2)."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.helpers import Repo, pin, run_cli
from testing.hookutil import make_project

PIN = "fixture_digest.txt"
AGENTS = 'agents = ["*[bot]*"]\n'
BOT = "Helper [bot] <bot@x.example>"


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    repo = make_project(tmp_path / "project")
    (repo.path / "pyproject.toml").write_text(
        (repo.path / "pyproject.toml").read_text() + AGENTS)
    repo.commit_all("agents")
    return repo


def test_a_human_deleting_the_pin_alone_is_ok_and_then_nobody_votes(project: Repo) -> None:
    adopted = project.head()
    project.git("rm", "-q", PIN)
    hook = run_cli(["hook", "pre-commit"], project.path)
    assert hook.code == 0, hook.out + hook.err
    assert f"this change deletes {PIN}" in hook.err
    deletion = project.commit("unpin: the fixtures are being reworked")
    res = run_cli(["scope", "--commit", deletion, "--json"], project.path)
    assert res.code == 0, res.out
    assert res.json() == {"verdict": "ok", "oracle": [PIN], "behavior": [], "neutral": [],
                          "reasons": []}
    gate = run_cli(["gate", "--seed", "1"], project.path)
    assert gate.code == 2, gate.out + gate.err
    assert "no pinned digest" in gate.out and "nobody votes" in gate.out
    ci = run_cli(["ci", "--base", adopted], project.path)
    assert ci.code == 2, ci.out + ci.err
    assert "no pinned digest" in ci.out + ci.err
    # a pin back, and the gate votes again
    pin(project, "cli")
    project.commit_all("pin again")
    assert run_cli(["gate", "--seed", "1"], project.path).code == 0


def test_an_agent_deleting_the_pin_is_blocked_by_rule_2(project: Repo) -> None:
    project.git("rm", "-q", PIN)
    sha = project.commit("unpin", author=BOT)
    res = run_cli(["scope", "--commit", sha, "--json"], project.path)
    assert res.code == 1
    assert [r["rule"] for r in res.json()["reasons"]] == [2]


def test_deleting_the_pin_with_behaviour_is_mixed(project: Repo) -> None:
    project.git("rm", "-q", PIN)
    project.write("billing.py", "def charge(*a, **k):\n    return None\n")
    sha = project.commit_all("unpin and rewrite")
    res = run_cli(["scope", "--commit", sha, "--json"], project.path)
    assert res.code == 1
    assert [r["rule"] for r in res.json()["reasons"]] == [1]
    assert res.json()["behavior"] == ["billing.py"] and res.json()["oracle"] == [PIN]


def test_deleting_the_pin_with_the_fixtures_changed_is_rule_3(project: Repo) -> None:
    project.git("rm", "-q", PIN)
    project.write("fixtures/cards.json", '{"cards": []}\n')
    sha = project.commit_all("unpin and empty the fixtures")
    res = run_cli(["scope", "--commit", sha, "--json"], project.path)
    assert res.code == 1
    [reason] = res.json()["reasons"]
    assert reason["rule"] == 3 and f"{PIN} was deleted in the same change" in reason["message"]


def test_a_staged_pin_deletion_by_the_agent_is_refused_by_the_hook(
        project: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's leniency is for a deletion the scope rules found clean: an agent's is
    refused (2, as the contract orders digest before scope), and scope says rule 2."""
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    project.git("rm", "-q", PIN)
    hook = run_cli(["hook", "pre-commit"], project.path)
    assert hook.code == 2, hook.out + hook.err
    assert "no pinned digest" in hook.out
    res = run_cli(["scope", "--json"], project.path)
    assert res.code == 1 and [r["rule"] for r in res.json()["reasons"]] == [2]


def test_a_pin_emptied_rather_than_deleted_is_still_rule_3(project: Repo) -> None:
    project.write(PIN, "")
    sha = project.commit_all("empty the pin")
    res = run_cli(["scope", "--commit", sha, "--json"], project.path)
    assert res.code == 1 and res.json()["reasons"][0]["rule"] == 3


def test_a_deleted_pin_does_not_take_the_repository_back_to_before_adoption(
        project: Repo) -> None:
    """Adoption is the commit that first adds the pin: after a human deletes it, the
    commits that follow are judged, and so is the one that puts a pin back."""
    adopted = project.head()
    project.git("rm", "-q", PIN)
    project.commit("unpin: the fixtures are being reworked")
    # an agent edits its own property and the code while the pin is gone
    project.write("properties/test_charge.py", "def test_charge():\n    assert True\n")
    project.write("billing.py", "def charge(*a, **k):\n    return None\n")
    mixed = project.commit_all("relax the property with the change", author=BOT)
    res = run_cli(["scope", "--commit", mixed, "--json"], project.path)
    assert res.code == 1, res.out
    assert res.json()["verdict"] == "blocked"
    assert [r["rule"] for r in res.json()["reasons"]] == [1, 2]
    # a pin put back together with a property edit and code is judged, not "adoption"
    project.write("properties/test_charge.py", "def test_charge():\n    assert 1\n")
    project.write("billing.py", "def charge(*a, **k):\n    return 0\n")
    pin(project, "cli")
    repin = project.commit_all("pin again, with the change")
    res = run_cli(["scope", "--commit", repin, "--json"], project.path)
    assert res.code == 1, res.out
    assert res.json()["verdict"] == "blocked" and res.json()["behavior"] == ["billing.py"]
    assert PIN in res.json()["oracle"]
    ci = run_cli(["ci", "--base", adopted], project.path)
    assert ci.code == 1, ci.out + ci.err


def test_the_commit_that_first_adds_the_pin_is_still_unjudged(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "fresh")  # its first commit adds the pin with everything
    res = run_cli(["scope", "--commit", repo.head(), "--json"], repo.path)
    assert res.code == 0 and res.json()["verdict"] == "unjudged", res.out
