"""Agent patterns and identities: one folding on both sides, full matches, no dead patterns."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.change import identity
from ballot_guard.change.identity import AgentMatch, agent_match, fold, matches, unmatchable
from testing.helpers import Repo, run_cli
from testing.scope_support import adopt

PROP = "properties/test_retry.py"


@pytest.mark.parametrize("pattern, who, hit", [
    ("Coding Agent *", "Coding Agent <a@x.example>", True),
    ("Coding Agent *", "Coding Agent<a@x.example>", True),
    ("Coding Agent *", "coding  agent   <a@x.example>", True),
    ("Coding Agent *", "Coding Agents <a@x.example>", False),
    ("Coding Agent *", "Coding Agent Two <b@x.example>", True),
    ("Coding Agent <*>", "Coding Agent<a@x.example>", True),
    ("Coding Agent<*>", "Coding Agent <a@x.example>", True),
    ("Coding Agent < * >", "Coding Agent <a@x.example>", True),
    ("* <bot@x.example>", "Bot <bot@x.example>", True),
    ("*<bot@x.example>", "Bot <bot@x.example>", True),
    ("Bot <bot@x.example>", "Bot\t<bot@x.example>", True),
    ("Bot <bot@x.example>", "Bot <bot@x.example>x", False),
    ("Codex <codex@openai.example>", "Codex <codex@openai.example> extra", False),
    ("Codex <codex@openai.example>", "Mr Codex <codex@openai.example>", False),
])
def test_patterns_and_identities_fold_alike(pattern: str, who: str, hit: bool) -> None:
    assert matches(pattern, who) is hit


def test_agent_match_names_the_identity_and_the_pattern() -> None:
    patterns = ["*[bot]*", "Coding Agent *"]
    found = agent_match(patterns, ["Human <h@x.example>", "Coding  Agent <a@x.example>"])
    assert found == AgentMatch("Coding  Agent <a@x.example>", "Coding Agent *")
    assert agent_match(patterns, ["Human <h@x.example>"]) is None
    assert agent_match([], ["Coding Agent <a@x.example>"]) is None
    assert agent_match(["Codex <codex@openai.example>"],
                       ["Codex <codex@openai.example> extra"]) is None


# --- Hypothesis: folding is the same on both sides ---------------------------------------------

_TEXT = st.text(st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)),
                max_size=12)
_SPACE = st.text(st.sampled_from(" \t\n\u00a0\u2003"), max_size=3)


@st.composite
def _identities(draw: st.DrawFn) -> str:
    return f"{draw(_TEXT)} <{draw(_TEXT)}>"


def _respace(text: str, data: st.DataObject) -> str:
    """``text`` with white space added or removed around ``<``/``>`` and runs widened."""
    out = []
    for ch in text:
        if ch in "<>":
            out.append(data.draw(_SPACE) + ch + data.draw(_SPACE))
        elif ch.isspace():
            out.append(ch + data.draw(_SPACE))
        else:
            out.append(ch)
    return "".join(out).replace(" <", "<" if data.draw(st.booleans()) else " <")


@settings(max_examples=300, deadline=None)
@given(who=_identities())
def test_a_pattern_made_from_an_identity_by_the_normaliser_matches_it(who: str) -> None:
    assert fold(fold(who)) == fold(who)
    assert matches(fold(who), who)
    assert matches(who, who)
    assert unmatchable(who) is None and unmatchable(fold(who)) is None


@settings(max_examples=300, deadline=None)
@given(who=_identities(), pattern=st.one_of(_identities(), st.builds(
    lambda a, b: f"{a}*{b}", _TEXT, _TEXT), st.sampled_from(
        ["Coding Agent *", "* <*>", "*[bot]*", "?* <a@x>", "a b <*>"])), data=st.data())
def test_white_space_around_brackets_or_in_runs_never_changes_the_result(
        who: str, pattern: str, data: st.DataObject) -> None:
    want = matches(pattern, who)
    assert matches(_respace(pattern, data), who) is want
    assert matches(pattern, _respace(who, data)) is want
    assert matches(pattern.upper(), who.lower()) is matches(pattern.lower(), who.upper())


@settings(max_examples=300, deadline=None)
@given(pattern=st.text(st.sampled_from("ab <>*? "), max_size=8),
       who=st.lists(st.sampled_from(["a", "b", " ", "ab", "*", "?"]), max_size=4).map("".join),
       email=st.text(st.sampled_from("ab*? "), max_size=4))
def test_a_pattern_refused_as_unmatchable_matches_no_identity(pattern: str, who: str,
                                                              email: str) -> None:
    suggestion = unmatchable(pattern)
    if suggestion is not None:
        assert not matches(pattern, f"{who} <{email}>")
        assert unmatchable(suggestion) is None


@pytest.mark.parametrize("pattern, suggestion", [
    ("Coding Agent", "Coding Agent <*>"),
    ("codex", "codex <*>"),
    ("*bot", "*bot <*>"),
    ("Bot <bot@x.example", "Bot <bot@x.example>"),
    ("Bot <bot@x.example> extra", "Bot <bot@x.example>"),
    ("   ", "Name <*>"),
])
def test_patterns_that_can_match_no_identity(pattern: str, suggestion: str) -> None:
    assert unmatchable(pattern) == suggestion
    assert unmatchable(suggestion) is None


@pytest.mark.parametrize("pattern", ["Coding Agent *", "*[bot]*", "*", "Codex*", "<*>",
                                     "*@agents.example>", "Agent <agent@x.example?"])
def test_patterns_that_can_match(pattern: str) -> None:
    assert unmatchable(pattern) is None


# --- through real commits ----------------------------------------------------------------------

def test_a_bare_name_pattern_is_a_config_error_suggesting_the_fix(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\nagents = ['*[bot]*', 'Coding Agent']\n")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    sha = repo.commit_all("edit", author="Coding Agent <a@x.example>")
    res = run_cli(["scope", "--commit", sha], repo.path)
    assert res.code == 4, res.out + res.err
    assert res.err.count("\n") == 1
    assert "agents: 'Coding Agent' can match no 'Name <email>' identity; did you mean " \
           "'Coding Agent <*>'?" in res.err


def test_the_space_before_the_bracket_does_not_hide_an_agent(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\nagents = ['Coding Agent *']\n")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    sha = repo.commit_all("edit", author="Coding Agent <a@x.example>")
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1, res.out
    [reason] = res.json()["reasons"]
    assert reason["rule"] == 2
    assert reason["message"] == ("an agent change (identity 'Coding Agent <a@x.example>' "
                                 "matches agents pattern 'Coding Agent *') touches oracle paths")
    text = run_cli(["scope", "--commit", sha], repo.path).out
    assert "identity 'Coding Agent <a@x.example>' matches agents pattern 'Coding Agent *'" \
        in text


def test_a_coauthor_is_named_when_it_is_the_agent(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\nagents = ['*[bot]*']\n")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    sha = repo.commit_all("edit\n\nCo-authored-by: helper[bot] <h@x.example>\n",
                          author="Human <h@example.com>")
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1
    assert "identity 'helper[bot] <h@x.example>' matches agents pattern '*[bot]*'" in \
        res.json()["reasons"][0]["message"]


def test_a_human_whose_identity_extends_an_agent_pattern_is_no_agent(repo: Repo) -> None:
    """Patterns match in full: a pattern that matches the start of a human's identity
    (here ``?`` stands for the agent's last letter or for ``>``) does not make them one."""
    adopt(repo, "[tool.ballot_guard]\nagents = ['Agent <agent@x.example?']\n")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    human = repo.commit_all("tighten", author="Agent <agent@x.examples>")
    res = run_cli(["scope", "--commit", human, "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["verdict"] == "ok" and res.json()["oracle"] == [PROP]
    repo.write(PROP, "def test_retry():\n    assert 2\n")
    agent = repo.commit_all("tighten", author="Agent <agent@x.example>")
    res = run_cli(["scope", "--commit", agent, "--json"], repo.path)
    assert res.code == 1 and res.json()["reasons"][0]["rule"] == 2


def test_the_flag_is_named_when_it_makes_the_agent(repo: Repo) -> None:
    adopt(repo)
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.stage()
    res = run_cli(["scope", "--agent", "--json"], repo.path)
    assert res.code == 1
    assert res.json()["reasons"][0]["message"] == (
        "an agent change (--agent or BALLOT_GUARD_AGENT) touches oracle paths")


def test_any_agent_is_agent_match() -> None:
    assert identity.any_agent(["*[bot]*"], ["x[bot] <y>"])
    assert not identity.any_agent(["*[bot]*"], ["x <y>"])
