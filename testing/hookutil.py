"""A small adopted project for the hook and CI tests: code, properties, fixtures, pin."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from testing.helpers import Repo, adopted_repo, git, pin

PROJECT = Path(__file__).resolve().parents[1]  # this project's checkout

BILLING = """\
def charge(amount, retries=3, send=None):
    calls = 0
    while True:
        calls += 1
        try:
            return send(amount)
        except TimeoutError:
            if calls >= retries:
                raise
"""

PROPERTY = """\
from billing import charge


def test_bounded_retry():
    calls = []

    def send(amount):
        calls.append(amount)
        raise TimeoutError("synthetic")

    try:
        charge(10, retries=3, send=send)
    except TimeoutError:
        pass
    assert len(calls) == 3
"""

# passes on the first run of a gate, fails on the next (a counter file outside the repo)
FLAKY = """\
import os


def test_flaky():
    path = os.environ["BG_FLAKY_COUNTER"]
    n = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(n + 1))
    assert n % 2 == 0
"""


def pyproject(extra: str = "", *, python: bool = True) -> str:
    """The project's config; ``python`` False leaves the runner to $VIRTUAL_ENV / .venv / PATH."""
    line = f'python = "{sys.executable}"\n' if python else ""
    return f'[tool.ballot_guard]\n{line}neutral_paths = ["*.md", "docs/**"]\n{extra}'


def write_flaky(repo: Repo, counter: Path) -> None:
    """The flipping property (its counter outside the repository), with the OS sandbox
    off: the sandbox discards what a run writes, so the counter would never move."""
    repo.write("properties/test_flaky.py",
               FLAKY.replace('os.environ["BG_FLAKY_COUNTER"]', repr(str(counter))))
    repo.write("pyproject.toml", (repo.path / "pyproject.toml").read_text()
               + 'sandbox = "off"\n')


def make_project(path: Path, extra: dict[str, str] | None = None, *,
                 python: bool = True) -> Repo:
    """An adopted repo on main: billing code, one property, one fixture, the pin committed
    (two commits: the import, then the pin, as a user adopts)."""
    repo = adopted_repo(path, {
        **(extra or {}), "pyproject.toml": pyproject(python=python), "billing.py": BILLING,
        "conftest.py": "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n",
        "properties/test_bounded_retry.py": PROPERTY, "fixtures/cards.json": '{"cards": [1, 2, 3]}\n',
        "README.md": "# billing\n"}, pin_with=None, message="import")
    pin(repo, "cli")
    repo.commit_all("pin the fixtures")
    return repo


def bare_remote(repo: Repo, tmp: Path, name: str = "origin") -> Path:
    remote = tmp / f"{name}.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", name, str(remote))
    return remote


def push(repo: Repo, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real ``git push`` (hooks run), output captured as text."""
    return subprocess.run(["git", "push", *args], cwd=repo.path, capture_output=True, text=True,
                          env=env, check=False, timeout=600)


def commit(repo: Repo, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real ``git commit`` (hooks run), output captured as text."""
    return subprocess.run(["git", "commit", *args], cwd=repo.path, capture_output=True, text=True,
                          env=env, check=False, timeout=600)


def env_with(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def copy_project(dest: Path, env: dict[str, str]) -> str:
    """A git repository holding this project's current files; returns its commit."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=PROJECT,
                            capture_output=True, check=True).stdout
    dest.mkdir(parents=True)
    for raw in filter(None, listed.split(b"\0")):
        rel = os.fsdecode(raw)
        src, dst = PROJECT / rel, dest / rel
        if not os.path.lexists(src) or "__pycache__" in rel:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
    git(dest, "init", "-q", "-b", "main", env=env)
    git(dest, "add", "-A", env=env)
    git(dest, "commit", "-q", "--no-verify", "-m", "ballot-guard under test", env=env)
    return git(dest, "rev-parse", "HEAD", env=env).strip()


class HookSource(NamedTuple):
    """This project as the hook repository the pre-commit framework installs from."""
    path: Path  # a git copy of this project's current files
    sha: str  # its commit: the ``rev`` of a ``.pre-commit-config.yaml``
    home: Path  # a PRE_COMMIT_HOME, so a module's tests build the hooks' venv once


def hook_source(base: Path) -> HookSource:
    """The hook repository under ``base`` (committed with a hermetic git identity)."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    sha = copy_project(base / "ballot-guard", env)
    return HookSource(base / "ballot-guard", sha, base / "pre-commit-home")


def venv_python(repo: Repo) -> None:
    """The project's interpreter where the gate looks for it (``.venv/bin/python``): this
    one, behind a shell script."""
    repo.write(".venv/bin/python", f"#!/bin/sh\nexec {sys.executable} \"$@\"\n", mode=0o755)


def pre_commit(repo: Repo, *args: str,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real framework in ``repo`` (``python -m pre_commit ARGS``), output as text."""
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo.path, env=env,
                          capture_output=True, text=True, check=False, timeout=900)
