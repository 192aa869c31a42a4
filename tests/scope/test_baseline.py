"""The base a change is judged by: one cat-file for its commit, config and pin."""
from __future__ import annotations

import pytest

from ballot_guard.config import Config, ConfigError
from ballot_guard.scope import baseline
from testing.helpers import Repo


def test_unborn_head_has_no_base(repo: Repo) -> None:
    assert baseline.at(str(repo.path), "HEAD") == baseline.Base(None, Config(), False)
    assert baseline.at(str(repo.path), None) == baseline.Base(None, Config(), False)


def test_adopted_by_the_default_digest_file(repo: Repo) -> None:
    repo.write("src/a.py")
    sha = repo.commit_all("first")
    assert baseline.at(str(repo.path), "HEAD") == baseline.Base(sha, Config(), False)
    repo.write("fixture_digest.txt", "pin\n")
    sha = repo.commit_all("pin")
    b = baseline.at(str(repo.path), sha)
    assert b.sha == sha and b.adopted


@pytest.mark.parametrize("where, adopted", [("pins/digest.txt", True), ("elsewhere", False)])
def test_adopted_by_the_configured_digest_file(repo: Repo, where: str, adopted: bool) -> None:
    repo.write("pyproject.toml", "[tool.ballot_guard]\ndigest_file = 'pins/digest.txt'\n"
                                 "repeats = 3\n")
    repo.write("fixture_digest.txt", "the default name is not the configured one\n")
    repo.write(f"{where}", "pin\n")
    repo.commit_all("configured")
    b = baseline.at(str(repo.path), "HEAD")
    assert b.config.repeats == 3 and b.adopted is adopted


def test_a_directory_named_like_the_digest_file_is_no_pin(repo: Repo) -> None:
    repo.write("fixture_digest.txt/inner", "x\n")
    repo.commit_all("odd")
    assert not baseline.at(str(repo.path), "HEAD").adopted


def test_a_bad_config_at_the_base_cannot_judge(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 1\n")
    sha = repo.commit_all("bad")
    with pytest.raises(ConfigError, match=f"pyproject.toml at {sha[:12]}.*repeats"):
        baseline.at(str(repo.path), "HEAD")


def test_the_base_is_read_from_git_not_the_worktree(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 4\n")
    repo.write("fixture_digest.txt", "pin\n")
    repo.commit_all("base")
    repo.write("pyproject.toml", "[tool.ballot_guard]\nrepeats = 9\n")
    repo.remove("fixture_digest.txt")
    b = baseline.at(str(repo.path), "HEAD")
    assert b.config.repeats == 4 and b.adopted
