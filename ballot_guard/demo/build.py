"""Build the example repository: copy the bundled files, git init, commit, pin.

History: a first commit with the service and its configuration, then the
commit that adds the properties, the fixtures and their pin (``ballot-guard
digest --pin``): the adoption commit, from which every change is judged.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from ballot_guard.demo.shell import HUMAN, ballot_guard, git
from ballot_guard.errors import CannotJudge

EXAMPLE = Path(__file__).resolve().parent / "example"
# Package data cannot hold some names as they are; they are renamed on copy.
RENAMES = {"gitignore": ".gitignore", "pyproject.toml.in": "pyproject.toml"}

FIRST = ("billing", "README.md", ".gitignore", "pyproject.toml")
SECOND = ("properties", "fixtures", "fixture_digest.txt")


def prepare(directory: str | None) -> Path:
    """The directory to build in: a new temporary one, or DIR if absent or empty."""
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="ballot-guard-demo-"))
    path = Path(directory).absolute()
    if path.exists() and not path.is_dir():
        raise CannotJudge(f"demo: {directory} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise CannotJudge(f"demo: {directory} is not empty; give a new or empty directory")
    path.mkdir(parents=True, exist_ok=True)
    return path


def skipped(rel: Path) -> bool:
    """Caches a run in the source tree may leave (hidden or __pycache__): not example files."""
    return any(part.startswith(".") or part == "__pycache__" for part in rel.parts) \
        or rel.suffix == ".pyc"


def copy_example(dest: Path, python: str) -> None:
    """Copy the bundled files into ``dest``; the config names ``python`` as the runner."""
    for src in sorted(EXAMPLE.rglob("*")):
        rel = src.relative_to(EXAMPLE)
        if src.is_dir() or skipped(rel):
            continue
        target = dest / rel.parent / RENAMES.get(rel.name, rel.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.name == "pyproject.toml.in":
            # A JSON string is a valid TOML basic string.
            text = src.read_text(encoding="utf-8").replace("@PYTHON@", json.dumps(python))
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(src, target)


def build(repo: Path, python: str | None = None) -> None:
    """Turn the empty directory ``repo`` into the example repository, pinned."""
    copy_example(repo, python or sys.executable)
    git(repo, ["init", "-q", "--template=", "-b", "main"])
    name, email = HUMAN
    for key, value in (("user.name", name), ("user.email", email),
                       ("commit.gpgsign", "false"), ("tag.gpgsign", "false"),
                       ("core.hooksPath", ".git/hooks")):
        git(repo, ["config", "--local", key, value])
    git(repo, ["add", "--", *FIRST])
    git(repo, ["commit", "-q", "--no-verify", "-m",
               "Billing service: retrying client, idempotent ledger, redacted logs"])
    pinned = ballot_guard(repo, ["digest", "--pin"])
    if pinned.code != 0:
        raise CannotJudge(f"demo: `ballot-guard digest --pin` failed with exit {pinned.code}: "
                          f"{pinned.output.strip()}")
    git(repo, ["add", "--", *SECOND])
    git(repo, ["commit", "-q", "--no-verify", "-m",
               "Properties and fixtures, pinned: the oracle from here on"])
