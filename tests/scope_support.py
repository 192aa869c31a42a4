"""Repositories for the scope tests: adopted (HEAD holds the digest file) or not."""
from __future__ import annotations

from pathlib import Path

from tests.helpers import CliResult, Repo, run_cli

BOT = "Claude Bot [bot] <bot@example.com>"


def adopt(repo: Repo, pyproject: str | None = None) -> str:
    """A small project whose HEAD holds the pin: scope rules judge what comes next."""
    repo.write("properties/test_retry.py", "def test_retry():\n    assert True\n")
    repo.write("src/app.py", "RETRIES = 3\n")
    repo.write("fixtures/cases.json", "[1, 2, 3]\n")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    repo.write("README.md", "# demo\n")
    if pyproject is not None:
        repo.write("pyproject.toml", pyproject)
    return repo.commit_all("adopt ballot-guard")


def scope(repo: Repo | Path, *args: str, stdin: str | None = None) -> CliResult:
    path = repo.path if isinstance(repo, Repo) else repo
    return run_cli(["scope", *args], path, stdin=stdin)


def scope_json(repo: Repo | Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    res = scope(repo, *args, "--json")
    assert res.err == "" or res.code == 4, res.err
    return res.code, res.json()
