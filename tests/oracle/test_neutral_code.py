"""Neutral never covers code: Python files, .pth, executables, what pytest collects."""
from __future__ import annotations

from pathlib import Path

import pytest

from ballot_guard.oracle.neutral_code import collectable, globs_of_args
from testing.helpers import Repo, run_cli
from testing.scope_support import adopt

PROP = "properties/test_retry.py"
WIDE = "[tool.ballot_guard]\nneutral_paths = ['docs/**', '*.txt', 'LICENSE*', 'extras/**']\n"


def _with_property_edit(repo: Repo, path: str, content: str = "x = 1\n",
                        mode: int | None = None) -> None:
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.write(path, content, mode=mode)
    repo.stage()


@pytest.mark.parametrize("path", [
    "src/LICENSE_impl.py", "docs/plugin.py", "docs/types.pyi", "docs/cache.pyc",
    "docs/fast.cpython-311-x86_64-linux-gnu.so", "docs/mod.pyd", "docs/mod.pyx",
    "docs/evil.pth", "extras/site.PY", "docs/test_usage.txt", "LICENSE.py",
])
def test_code_named_neutral_rides_as_behaviour(repo: Repo, path: str) -> None:
    adopt(repo, WIDE)
    _with_property_edit(repo, path)
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    out = res.json()
    assert [r["rule"] for r in out["reasons"]] == [1]
    assert out["behavior"] == [path] and out["oracle"] == [PROP] and out["neutral"] == []


def test_the_issue_example_with_the_default_neutral_paths(repo: Repo) -> None:
    adopt(repo)
    _with_property_edit(repo, "src/LICENSE_impl.py", "def pay():\n    return 0\n")
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["src/LICENSE_impl.py"]


@pytest.mark.parametrize("path, kind", [
    ("LICENSE", "neutral"), ("LICENSE.txt", "neutral"), ("CHANGELOG.md", "neutral"),
    ("src/LICENSE", "behavior"), ("pkg/CHANGELOG", "behavior"), ("src/notes.md", "neutral"),
])
def test_default_licence_and_changelog_match_at_the_root_only(repo: Repo, path: str,
                                                              kind: str) -> None:
    adopt(repo)
    _with_property_edit(repo, path, "text\n")
    res = run_cli(["scope", "--json"], repo.path)
    out = res.json()
    assert out[kind] == [path]
    assert res.code == (0 if kind == "neutral" else 1)


def test_an_executable_file_is_not_neutral(repo: Repo) -> None:
    adopt(repo, WIDE)
    _with_property_edit(repo, "docs/build", "#!/bin/sh\necho hi\n", mode=0o755)
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["docs/build"]


def test_making_a_neutral_file_executable_is_not_neutral(repo: Repo) -> None:
    adopt(repo, WIDE)
    repo.write("docs/build", "#!/bin/sh\necho hi\n")
    repo.commit_all("docs")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    (repo.path / "docs/build").chmod(0o755)
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["docs/build"]


def test_a_plain_doc_stays_neutral(repo: Repo) -> None:
    adopt(repo, WIDE)
    _with_property_edit(repo, "docs/guide.md", "# guide\n")
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["neutral"] == ["docs/guide.md"]


@pytest.mark.parametrize("config_file, body", [
    ("pyproject.toml", WIDE + "[tool.pytest.ini_options]\naddopts = '--doctest-glob=*.md'\n"),
    ("pyproject.toml", WIDE + "[tool.pytest.ini_options]\naddopts = ['-q', '--doctest-glob', "
                              "'docs/*.md']\n"),
    ("pytest.ini", "[pytest]\naddopts = -q --doctest-glob '*.md'\n"),
    ("tox.ini", "[pytest]\naddopts = --doctest-glob=guide.*\n"),
    ("setup.cfg", "[tool:pytest]\naddopts =\n    --doctest-glob=*.md\n"),
    ("pytest.toml", "[pytest]\naddopts = ['--doctest-glob=*.md']\n"),
], ids=["pyproject-str", "pyproject-list", "pytest.ini", "tox.ini", "setup.cfg", "pytest.toml"])
def test_a_file_pytest_collects_as_a_doctest_is_not_neutral(repo: Repo, config_file: str,
                                                            body: str) -> None:
    repo.write(config_file, body)
    adopt(repo, WIDE if config_file != "pyproject.toml" else body)
    _with_property_edit(repo, "docs/guide.md", ">>> 1 + 1\n3\n")
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    assert res.json()["behavior"] == ["docs/guide.md"]
    assert [r["rule"] for r in res.json()["reasons"]] == [1]


def test_a_commit_and_a_patch_are_judged_alike(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, WIDE)
    _with_property_edit(repo, "docs/hook.pth", "import os\n")
    patch = tmp_path / "p.diff"
    patch.write_text(repo.git("diff", "--cached"))
    sha = repo.commit("ride")
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["docs/hook.pth"]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    res = run_cli(["scope", "--patch", str(patch), "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["docs/hook.pth"]


def test_an_executable_in_a_patch_is_not_neutral(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, WIDE)
    _with_property_edit(repo, "docs/run", "#!/bin/sh\n", mode=0o755)
    patch = tmp_path / "p.diff"
    patch.write_text(repo.git("diff", "--cached"))
    assert "new file mode 100755" in patch.read_text()
    repo.git("reset", "-q", "--hard")
    res = run_cli(["scope", "--patch", str(patch), "--json"], repo.path)
    assert res.code == 1 and res.json()["behavior"] == ["docs/run"]


@pytest.mark.parametrize("args, globs", [
    (["--doctest-glob=*.md", "-q"], ["*.md"]),
    (["--doctest-glob", "*.rst", "--doctest-glob=x.txt"], ["*.rst", "x.txt"]),
    (["--doctest-globs=*.md"], []),
    (["--doctest-glob"], []),
])
def test_globs_of_args(args: list[str], globs: list[str]) -> None:
    assert globs_of_args(args) == globs


@pytest.mark.parametrize("path, globs, hit", [
    ("test_a.txt", ["test*.txt"], True),
    ("docs/test_a.txt", ["test*.txt"], True),
    ("docs/a.txt", ["test*.txt"], False),
    ("docs/guide.md", ["docs/*.md"], True),
    ("sub/docs/guide.md", ["docs/*.md"], True),
    ("guide.md", ["docs/*.md"], False),
    ("docs/GUIDE.MD", ["*.md"], True),
])
def test_collectable_as_pytest_matches(path: str, globs: list[str], hit: bool) -> None:
    assert collectable(path, globs) is hit
