"""Config that would silently mean nothing is refused (exit 4, one line naming the key)."""
from __future__ import annotations

import pytest

from ballot_guard.config import Config, ConfigError, near_miss, parse_pyproject
from testing.helpers import Repo, run_cli
from testing.scope_support import adopt


def _refused(body: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_pyproject(body.encode())
    return str(info.value)


@pytest.mark.parametrize("header", [
    "[tool.ballot-guard]", "[tool.ballotguard]", "[tool.Ballot_Guard]", "[tool.BALLOT_GUARD]",
    "[tool.BallotGuard]", "[tool.ballot.guard]", "[tool.ballot_gaurd]", "[tool.balot_guard]",
    "[tool.ballot_guards]", "[tool.\"ballot guard\"]", "[ballot_guard]", "[ballot-guard]",
    "[tools.ballot_guard]",
])
def test_a_near_miss_of_the_table_is_refused_naming_the_real_one(header: str) -> None:
    message = _refused(f"{header}\nagents = ['*[bot]*']\n")
    assert "[tool.ballot_guard]" in message and "not read" in message
    assert "\n" not in message


def test_a_near_miss_beside_the_real_table_is_still_refused() -> None:
    message = _refused("[tool.ballot_guard]\nrepeats = 3\n[tool.ballot-guard]\nrepeats = 9\n")
    assert "[tool.ballot-guard]" in message


@pytest.mark.parametrize("doc", [
    {"tool": {"ballot_guard": {"repeats_for": {"a": 2}}}},
    {"tool": {"black": {}, "pytest": {"ini_options": {}}, "setuptools": {"package-data": {
        "ballot_guard": ["py.typed"]}}}},
    {"project": {"name": "ballot-guard"}, "tool": {"ballot": {"x": 1}}},
    {"tool": {"bandit": {}, "ballista": {}, "pylint": {"messages_control": {}}}},
], ids=["real", "others", "project-name", "unrelated"])
def test_what_is_not_a_near_miss(doc: dict[str, object]) -> None:
    assert near_miss(doc) is None


@pytest.mark.parametrize("body, key, hint", [
    ("repeat = 3", "repeat", "did you mean 'repeats'?"),
    ("Repeats = 3", "Repeats", "did you mean 'repeats'?"),
    ("neutral-paths = []", "neutral-paths", "did you mean 'neutral_paths'?"),
    ("agent = []", "agent", "did you mean 'agents'?"),
    ("timout = 3", "timout", "did you mean 'timeout'?"),
    ("zzz = 1", "zzz", "unknown key"),
])
def test_unknown_keys_get_did_you_mean(body: str, key: str, hint: str) -> None:
    message = _refused(f"[tool.ballot_guard]\n{body}\n")
    assert f"] {key}: unknown key" in message and message.endswith(hint), message


@pytest.mark.parametrize("body, key, why", [
    ("repeats = 100000000000000", "repeats", "at most 1000"),
    ("repeats = 1001", "repeats", "at most 1000"),
    ("repeats_for = { a = 5000 }", "repeats_for.a", "at most 1000"),
    ("timeout = 1e300", "timeout", "at most 86400"),
    ("timeout = 86401", "timeout", "at most 86400"),
    ("timeout = inf", "timeout", "at most 86400"),
    ("timeout = nan", "timeout", "positive number"),
    ("timeout = -inf", "timeout", "positive number"),
    ("timeout = true", "timeout", "positive number"),
    ("repeats = true", "repeats", "integer"),
    ("review_days = 99999999999", "review_days", "at most 3650"),
    ("review_days = false", "review_days", "integer"),
    ("sandbox = 'on'", "sandbox", "must be one of 'auto', 'required', 'off'"),
    ("sandbox = true", "sandbox", "must be one of"),
    ("network = 'yes'", "network", "true or false"),
    ("network = 1", "network", "true or false"),
])
def test_numbers_beyond_sense_are_config_errors(body: str, key: str, why: str) -> None:
    message = _refused(f"[tool.ballot_guard]\n{body}\n")
    assert f"] {key}: " in message and why in message, message
    assert len(message) < 200


def test_sandbox_and_network_keys() -> None:
    assert (Config().sandbox, Config().network) == ("auto", False)
    c = parse_pyproject(b"[tool.ballot_guard]\nsandbox = 'required'\nnetwork = true\n")
    assert (c.sandbox, c.network) == ("required", True)
    assert parse_pyproject(b"[tool.ballot_guard]\nsandbox = 'off'\n").sandbox == "off"


def test_limits_themselves_are_accepted() -> None:
    c = parse_pyproject(b"[tool.ballot_guard]\nrepeats = 1000\ntimeout = 86400\n"
                        b"review_days = 3650\n")
    assert (c.repeats, c.timeout, c.review_days) == (1000, 86400.0, 3650)


def test_repeats_for_naming_no_listed_voter_is_refused() -> None:
    message = _refused("[tool.ballot_guard]\nproperties = ['retry']\n"
                       "repeats_for = { retyr = 5 }\n")
    assert "repeats_for.retyr" in message and "names no voter" in message


# --- through the command line: one line, exit 4 ------------------------------------------------

@pytest.mark.parametrize("body, words", [
    ("[tool.ballot-guard]\nagents = ['*[bot]*']\n", "[tool.ballot-guard] is not read"),
    ("[tool.ballot_guard]\nrepeats = 100000000000000\n", "repeats: must be at most 1000"),
    ("[tool.ballot_guard]\ntimeout = 1e300\n", "timeout: must be at most 86400"),
    ("[tool.ballot_guard]\nrepaets = 3\n", "did you mean 'repeats'?"),
])
def test_scope_refuses_a_base_with_such_a_config(repo: Repo, body: str, words: str) -> None:
    adopt(repo, body)
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    res = run_cli(["scope"], repo.path)
    assert res.code == 4, res.out + res.err
    assert words in res.err and res.err.count("\n") == 1, res.err
    assert "Traceback" not in res.err


def test_gate_refuses_repeats_for_naming_no_voter(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\nrepeats_for = { retyr = 5 }\n")
    res = run_cli(["gate", "--seed", "1"], repo.path)
    assert res.code == 4, res.out + res.err
    assert "repeats_for.retyr: names no voter (voters: retry)" in res.err
