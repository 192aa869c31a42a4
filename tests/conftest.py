"""Hermetic test environment: no $HOME, no user or system git config, pinned identities."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.helpers import Repo, init_repo

_DROP = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_NAMESPACE",
    "BALLOT_GUARD_AGENT", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_URL", "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_ACTOR", "NO_COLOR", "FORCE_COLOR", "PRE_COMMIT",
)


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test Person\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[protocol \"file\"]\n\tallow = always\n"
    )
    for name in _DROP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home / ".cache" / "pre-commit"))
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.com")
        monkeypatch.setenv(f"GIT_{who}_DATE", "2026-01-01T00:00:00Z")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    """An empty repository on branch main (no commit yet)."""
    return init_repo(tmp_path / "repo")
