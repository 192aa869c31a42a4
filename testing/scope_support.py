"""Repositories for the scope tests: adopted (HEAD holds the digest file) or not."""
from __future__ import annotations

from pathlib import Path

from ballot_guard.vocabulary import Source
from testing.helpers import PLACEHOLDER_PIN, CliResult, Repo, adopted_repo, run_cli

BOT = "Claude Bot [bot] <bot@example.com>"


def adopt(repo: Repo, pyproject: str | None = None) -> str:
    """A small project whose HEAD holds the pin: scope rules judge what comes next."""
    files = {"properties/test_retry.py": "def test_retry():\n    assert True\n",
             "src/app.py": "RETRIES = 3\n", "fixtures/cases.json": "[1, 2, 3]\n",
             "README.md": "# demo\n"}
    if pyproject is not None:
        files["pyproject.toml"] = pyproject
    return adopted_repo(repo, files, pin_with=PLACEHOLDER_PIN).head()


def scope(repo: Repo | Path, *args: str, stdin: str | None = None) -> CliResult:
    path = repo.path if isinstance(repo, Repo) else repo
    return run_cli(["scope", *args], path, stdin=stdin)


def scope_json(repo: Repo | Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    res = scope(repo, *args, "--json")
    assert res.err == "" or res.code == 4, res.err
    return res.code, res.json()


def judged_as(repo: Repo, source: Source, tmp: Path, *, author: str | None = None,
              hard: bool = True) -> list[str]:
    """The ``scope`` arguments that judge what is staged now through ``source``: the
    index as it is; a commit of it (by ``author``); or its diff as a patch file, with
    the index put back to HEAD (and the working tree too, with ``hard``), as an agent's
    patch arrives before it is applied."""
    if source == "staged":
        return ["--staged"]
    if source == "commit":
        return ["--commit", repo.commit("change", author=author)]
    patch = tmp / "change.diff"
    patch.write_bytes(repo.git("diff", "--cached", "--binary").encode("utf-8",
                                                                      "surrogateescape"))
    repo.git("reset", "-q", *(["--hard"] if hard else []))
    return ["--patch", str(patch)]
