"""Shared pieces of the split tests: a repo state fingerprint, a base layout, the changes
staged on it."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from testing.helpers import Repo, adopted_repo


def worktree(repo: Repo) -> dict[str, Any]:
    """Every file's bytes (links: their target, plus the exec bit) outside .git."""
    out: dict[str, Any] = {}
    for dirpath, dirs, files in os.walk(repo.path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath, name)
            rel = p.relative_to(repo.path).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            else:
                out[rel] = (os.access(p, os.X_OK), p.read_bytes())
    return out


def state(repo: Repo) -> dict[str, Any]:
    """HEAD, the index entries, the staged diff and the files on disk."""
    head = repo.git("rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return {
        "head": head,
        "index": repo.git("ls-files", "-s", "-z"),
        "status": repo.git("status", "--porcelain=v1", "-z", "--untracked-files=all"),
        "files": worktree(repo),
    }


def names(repo: Repo, *args: str) -> set[str]:
    """Paths of a -z name-only diff."""
    return {p for p in repo.git(*args, "--name-only", "-z", "--no-renames").split("\0") if p}


def tree(repo: Repo, rev: str) -> dict[str, tuple[str, str]]:
    """{path: (mode, oid)} of a commit's tree."""
    out = {}
    for rec in repo.git("ls-tree", "-r", "-z", "--full-tree", rev).split("\0"):
        if rec:
            meta, _, path = rec.partition("\t")
            mode, _kind, oid = meta.split(" ")
            out[path] = (mode, oid)
    return out


def index(repo: Repo) -> dict[str, tuple[str, str]]:
    out = {}
    for rec in repo.git("ls-files", "-s", "-z").split("\0"):
        if rec:
            meta, _, path = rec.partition("\t")
            mode, oid, _stage = meta.split(" ")
            out[path] = (mode, oid)
    return out


def base_repo(repo: Repo) -> Repo:
    """A repo with the seed's layout, adopted (a pinned digest file) and one commit."""
    return adopted_repo(repo, {
        "properties/test_retry.py": "def test_retry():\n    assert True\n",
        "fixtures/cases.json": "[1, 2, 3]\n", "src/billing.py": "RETRIES = 3\n",
        "src/ledger.py": "LEDGER = []\n", "README.md": "# demo\n"},
        pin_with="0" * 64 + "\n", message="base")



MIXED = {"properties/test_retry.py": "changed\n", "src/billing.py": "RETRIES = 2\n"}
NO_HEAD = {"properties/test_a.py": "x\n", "src/a.py": "y\n"}  # mixed, in a repo with no commit


def stage(repo: Repo, files: Mapping[str, str]) -> None:
    """``files`` written, then the whole tree staged (``git add -A``)."""
    for rel, content in files.items():
        repo.write(rel, content)
    repo.stage()


def on_base(repo: Repo, committed: Mapping[str, str], message: str,
            staged: Mapping[str, str] | None = None) -> str:
    """``base_repo``, one more commit (``message``) writing ``committed``, then ``staged``
    written and staged; returns that commit."""
    base_repo(repo)
    for rel, content in committed.items():
        repo.write(rel, content)
    head = repo.commit_all(message)
    if staged is not None:
        stage(repo, staged)
    return head


@contextlib.contextmanager
def unchanged(repo: Repo) -> Iterator[None]:
    """The block leaves HEAD, the index, the staged diff and every file as they were."""
    before = state(repo)
    yield
    assert state(repo) == before
