from __future__ import annotations

import pytest

from ballot_guard.config import Config, ConfigError, load_at, parse_pyproject
from testing.helpers import Repo


def test_no_file_and_no_table_give_the_seed_layout() -> None:
    assert parse_pyproject(None) == Config()
    assert parse_pyproject(b"[project]\nname='x'\n") == Config()
    c = Config()
    assert (c.properties_dir, c.fixtures_dir, c.digest_file, c.freeze_file, c.repeats) == (
        "properties", "fixtures", "fixture_digest.txt", "freeze_set.json", 2)


def test_values_are_read() -> None:
    c = parse_pyproject(b"""
[tool.ballot_guard]
properties_dir = "tests/props/"
repeats = 3
repeats_for = { bounded_retry = 5 }
timeout = 12.5
agents = ["*[bot]*"]
""")
    assert c.properties_dir == "tests/props"
    assert c.repeats_of("bounded_retry") == 5 and c.repeats_of("other") == 3
    assert c.timeout == 12.5 and c.agents == ("*[bot]*",)


@pytest.mark.parametrize("body, key", [
    ("bogus = 1", "bogus"),
    ("repeats = 1", "repeats"),
    ("repeats = true", "repeats"),
    ("repeats = '3'", "repeats"),
    ("repeats_for = { x = 1 }", "repeats_for.x"),
    ("timeout = 0", "timeout"),
    ("timeout = -3", "timeout"),
    ("fixtures_dir = '../elsewhere'", "fixtures_dir"),
    ("fixtures_dir = 'a/../../b'", "fixtures_dir"),
    ("digest_file = '/etc/passwd'", "digest_file"),
    ("properties_dir = '.'", "properties_dir"),
    ("agents = 'bot'", "agents"),
    ("oracle_paths = [1]", "oracle_paths"),
    ("properties = ['a/b']", "properties"),
    ("review_days = 0", "review_days"),
    ("python = ''", "python"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_config_names_the_key(body: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_pyproject(f"[tool.ballot_guard]\n{body}\n".encode())
    assert key in str(info.value)


def test_broken_toml_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid TOML"):
        parse_pyproject(b"[tool.ballot_guard\n")


def test_config_is_read_from_a_revision_not_the_worktree(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 4\n")
    sha = repo.commit_all("cfg")
    repo.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 9\n")
    assert load_at(str(repo.path), sha).repeats == 4
    assert load_at(str(repo.path), None) == Config()
