"""Rules 1 and 2, agent identity, the base's config, adoption."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.change import identity
from ballot_guard.change.from_git import Change, coauthors
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.git import Snapshot
from ballot_guard.scope.judge import judge_change, judge_staged
from testing.helpers import Repo, init_repo, run_cli
from testing.scope_support import BOT, adopt, scope_json
from testing.scope_support import scope as run_scope

AGENTS = "[tool.ballot_guard]\nagents = ['*[bot]*', 'Codex <codex@openai.example>']\n"


def _oracle_edit(repo: Repo) -> None:
    repo.write("properties/test_retry.py", "def test_retry():\n    assert False\n")
    repo.stage()


# --- identity patterns -----------------------------------------------------------------------

@pytest.mark.parametrize("pattern, who, hit", [
    ("*[bot]*", "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>", True),
    ("*[bot]*", "bob <bob@example.com>", False),
    ("*[bot]*", "Robot Tom <t@example.com>", False),
    ("*[BOT]*", "renovate[bot] <r@x>", True),
    ("Codex <codex@openai.example>", "codex <CODEX@openai.example>", True),
    ("Codex <codex@openai.example>", "Codex <codex@openai.example> extra", False),
    ("Codex*", "Codex <c@x>", True),
    ("?odex <c@x>", "Codex <c@x>", True),
    ("?odex <c@x>", "CCodex <c@x>", False),
    ("a.b <c@x>", "axb <c@x>", False),
    ("(bot) <*>", "(bot) <x@y>", True),
    ("*+*", "a+b <c>", True),
    ("*\\*", "a\\ <b>", True),  # a backslash is literal, not an escape
    ("*\\*", "a <b>", False),
])
def test_agent_patterns_only_star_and_question_are_wildcards(pattern: str, who: str,
                                                             hit: bool) -> None:
    assert identity.matches(pattern, who) is hit


def test_coauthor_lines_anywhere_in_the_message() -> None:
    msg = ("Squash of three\n\n* fix\n\nCo-authored-by: Bot [bot] <b@x>\n\n* more\n"
           "  co-authored-by:   Other <o@x>  \n\nSigned-off-by: Me <me@x>\n")
    assert coauthors(msg) == ("Bot [bot] <b@x>", "Other <o@x>")


# --- rule 2 by each way an agent is known ----------------------------------------------------

def test_agent_by_author(repo: Repo) -> None:
    adopt(repo, AGENTS)
    _oracle_edit(repo)
    sha = repo.commit("tighten", author=BOT)
    code, out = scope_json(repo, "--commit", sha)
    assert code == 1 and [r["rule"] for r in out["reasons"]] == [2]
    res = run_scope(repo, "--commit", sha)
    assert "rule 2" in res.out and "agent" in res.out


def test_agent_by_committer(repo: Repo) -> None:
    adopt(repo, AGENTS)
    _oracle_edit(repo)
    sha = repo.commit("tighten", committer=BOT)
    assert scope_json(repo, "--commit", sha)[0] == 1


@pytest.mark.parametrize("message", [
    "tighten\n\nCo-authored-by: Claude Bot [bot] <bot@example.com>\n",
    "squash\n\n* one\nCo-authored-by: Claude Bot [bot] <bot@example.com>\n* two\n\nmore text\n",
], ids=["trailer", "mid-message"])
def test_agent_by_coauthor_line(repo: Repo, message: str) -> None:
    adopt(repo, AGENTS)
    _oracle_edit(repo)
    sha = repo.commit(message)
    assert scope_json(repo, "--commit", sha)[0] == 1


def test_human_commit_touching_only_oracle_is_ok(repo: Repo) -> None:
    adopt(repo, AGENTS)
    _oracle_edit(repo)
    sha = repo.commit("tighten", author="bob <bob@example.com>")
    assert scope_json(repo, "--commit", sha) == (0, {
        "verdict": "ok", "oracle": ["properties/test_retry.py"], "behavior": [],
        "neutral": [], "reasons": []})


def test_agent_behaviour_only_change_is_ok(repo: Repo) -> None:
    adopt(repo, AGENTS)
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    sha = repo.commit("behaviour", author=BOT)
    assert scope_json(repo, "--commit", sha)[0] == 0


def test_agent_staged_by_env_and_flag(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    adopt(repo)  # no agents configured: env and flag need no pattern
    _oracle_edit(repo)
    assert scope_json(repo)[0] == 0
    assert scope_json(repo, "--agent")[1]["reasons"][0]["rule"] == 2
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "")
    assert scope_json(repo)[0] == 0
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    assert scope_json(repo)[0] == 1
    res = run_scope(repo)
    assert "An agent may not change the oracle" in res.out
    assert "git restore --staged -- properties/test_retry.py" in res.out


def test_agent_patch_by_env_and_flag(repo: Repo, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    adopt(repo)
    _oracle_edit(repo)
    f = tmp_path / "p.diff"
    f.write_text(repo.git("diff", "--cached"))
    repo.git("reset", "-q", "--hard")
    assert scope_json(repo, "--patch", str(f))[0] == 0
    assert scope_json(repo, "--patch", str(f), "--agent")[0] == 1
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "yes")
    assert scope_json(repo, "--patch", str(f))[0] == 1


def test_agent_by_the_identity_git_would_commit_with(repo: Repo,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    adopt(repo, AGENTS)
    _oracle_edit(repo)
    assert scope_json(repo)[0] == 0
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Claude Bot [bot]")
    assert scope_json(repo)[0] == 1


def test_environment_is_a_parameter(repo: Repo) -> None:
    adopt(repo)
    _oracle_edit(repo)
    root = str(repo.path)
    assert judge_staged(root, environ={"BALLOT_GUARD_AGENT": "1"}).status == "blocked"
    assert judge_staged(root, environ={}).status == "ok"


# --- the base's config judges ----------------------------------------------------------------

def test_change_cannot_loosen_the_agents_it_is_judged_by(repo: Repo) -> None:
    adopt(repo, AGENTS)
    repo.write("pyproject.toml", "[tool.ballot_guard]\nagents = []\n")
    _oracle_edit(repo)
    sha = repo.commit("loosen and edit", author=BOT)
    code, out = scope_json(repo, "--commit", sha)
    assert code == 1 and 2 in [r["rule"] for r in out["reasons"]]


def test_change_cannot_loosen_its_oracle_paths(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\noracle_paths = ['ci/**']\n")
    repo.write("ci/run", "old\n")
    repo.commit_all("ci")
    repo.write("pyproject.toml", "[tool.ballot_guard]\noracle_paths = []\n"
               "neutral_paths = ['ci/**']\n")
    repo.write("ci/run", "new\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    code, out = scope_json(repo)
    assert code == 1 and "ci/run" in out["oracle"] and "pyproject.toml" in out["oracle"]


def test_change_cannot_move_its_properties_dir(repo: Repo) -> None:
    adopt(repo)
    repo.write("pyproject.toml", "[tool.ballot_guard]\nproperties_dir = 'elsewhere'\n")
    repo.write("properties/test_retry.py", "# weakened\n")
    repo.stage()
    code, out = scope_json(repo, "--agent")
    assert code == 1 and out["oracle"] == ["properties/test_retry.py", "pyproject.toml"]


def test_patch_is_judged_by_heads_config(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, AGENTS)
    repo.write("pyproject.toml", "[tool.ballot_guard]\nneutral_paths = ['properties/**']\n")
    _oracle_edit(repo)
    f = tmp_path / "p.diff"
    f.write_text(repo.git("diff", "--cached"))
    repo.git("reset", "-q", "--hard")
    code, out = scope_json(repo, "--patch", str(f), "--agent")
    assert code == 1 and "properties/test_retry.py" in out["oracle"]


# --- adoption --------------------------------------------------------------------------------

def test_unjudged_until_the_base_holds_the_digest_file(repo: Repo) -> None:
    repo.write("src/app.py", "x\n")
    repo.commit_all("before")
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/app.py", "y\n")
    repo.stage()
    code, out = scope_json(repo, "--agent")
    assert code == 0 and out["verdict"] == "unjudged" and out["reasons"] == []
    repo.write("fixture_digest.txt", "pin\n")
    repo.commit_all("adopt with the pin")  # the pin's own commit: unjudged
    assert scope_json(repo, "--commit", "HEAD")[1]["verdict"] == "unjudged"
    repo.write("properties/test_a.py", "z\n")
    repo.write("src/app.py", "z\n")
    repo.stage()
    assert scope_json(repo)[1]["verdict"] == "blocked"


def test_adoption_uses_the_base_configs_digest_file(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.ballot_guard]\ndigest_file = 'pins/digest.txt'\n")
    repo.write("fixture_digest.txt", "not the configured pin\n")
    repo.commit_all("configured")
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/app.py", "y\n")
    repo.stage()
    assert scope_json(repo)[1]["verdict"] == "unjudged"
    repo.git("reset", "-q")
    repo.write("pins/digest.txt", "pin\n")
    repo.stage("pins/digest.txt")
    repo.commit("pin")
    repo.stage()
    assert scope_json(repo)[1]["verdict"] == "blocked"


def test_deleting_the_pin_is_an_oracle_change(repo: Repo) -> None:
    adopt(repo)
    repo.git("rm", "-q", "fixture_digest.txt")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    code, out = scope_json(repo)
    assert code == 1 and out["oracle"] == ["fixture_digest.txt"]


# --- Hypothesis: one oracle plus one behaviour path is blocked, whatever else ----------------

_SEG = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"),
               min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
_ANY = st.lists(st.one_of(_SEG, st.sampled_from(
    ["properties", "fixtures", "src", "docs", "README.md", "pyproject.toml", "conftest.py"])),
    min_size=1, max_size=3).map("/".join)
_ORACLE = st.one_of(
    st.builds(lambda s: f"properties/{s}", _SEG), st.builds(lambda s: f"FIXTURES/{s}", _SEG),
    st.sampled_from(["fixture_digest.txt", "freeze_set.json", "conftest.py", "PYTEST.INI",
                     ".pre-commit-config.yaml", ".venv/bin/python", "Properties/x.py"]))
_BEHAVIOUR = st.builds(lambda s: f"src/{s}.py", _SEG)


@pytest.fixture(scope="module")
def adopted_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    env_backup = dict(os.environ)
    repo = init_repo(tmp_path_factory.mktemp("adopted"))
    os.environ.update(GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="T",
                      GIT_COMMITTER_EMAIL="t@e")
    try:
        sha = adopt(repo)
    finally:
        os.environ.clear()
        os.environ.update(env_backup)
    return str(repo.path), sha


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(oracle_path=_ORACLE, behaviour_path=_BEHAVIOUR, others=st.lists(_ANY, max_size=5),
       statuses=st.lists(st.sampled_from("AMDT"), min_size=8, max_size=8),
       order=st.randoms())
def test_one_oracle_and_one_behaviour_path_is_always_blocked(
        adopted_root: tuple[str, str], oracle_path: str, behaviour_path: str,
        others: list[str], statuses: list[str], order: object) -> None:
    root, sha = adopted_root
    paths = [oracle_path, behaviour_path, *others]
    order.shuffle(paths)  # type: ignore[attr-defined]
    files = tuple(FileChange(statuses[i % 8], p) for i, p in enumerate(paths))
    change = Change("commit", "generated", sha, sha, files, (), False)
    verdict = judge_change(root, change, lambda: Snapshot(root, sha))
    assert verdict.status == "blocked"
    assert 1 in [r.rule for r in verdict.reasons]
    assert oracle_path in verdict.oracle and behaviour_path in verdict.behavior


def test_help_lists_scope(tmp_path: Path) -> None:
    res = run_cli(["--help"], tmp_path)
    assert res.code == 0 and "scope" in res.out
