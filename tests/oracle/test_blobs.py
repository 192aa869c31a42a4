"""An oracle file on disk against the blob its commit holds: bytes hashed as git hashes a
blob (any size, either object format), the executable bit, links never followed, a FIFO
swapped in read without blocking."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ballot_guard.config import load_worktree
from ballot_guard.oracle.blobs import mismatches
from testing.helpers import Repo, git

BIG = bytes(range(256)) * (3 * 4096 + 7)  # more than three 1 MiB reads


@pytest.fixture(params=["sha1", "sha256"])
def committed(request: pytest.FixtureRequest, tmp_path: Path) -> Repo:
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main", f"--object-format={request.param}")
    repo = Repo(path)
    repo.write("fixtures/cards.json", '{"cards": 3}\n')
    repo.write("fixtures/big.bin", BIG)
    repo.write("fixtures/run.sh", "#!/bin/sh\n", mode=0o755)
    repo.symlink("fixtures/alias.json", "cards.json")
    repo.write("properties/test_x.py", "def test_x():\n    pass\n")
    repo.commit_all("oracle")
    return repo


def _found(repo: Repo) -> list[str]:
    root = str(repo.path)
    return sorted(mismatches(root, root, repo.head(), load_worktree(root)))


def test_the_committed_files_match_their_blobs(committed: Repo) -> None:
    assert _found(committed) == []


def test_a_large_file_is_hashed_to_its_last_byte(committed: Repo) -> None:
    committed.write("fixtures/big.bin", BIG[:-1] + b"\0")
    assert _found(committed) == ["fixtures/big.bin (other bytes than its blob)"]


def test_a_link_to_the_same_bytes_is_not_the_file(committed: Repo) -> None:
    committed.write("elsewhere.json", '{"cards": 3}\n')
    committed.remove("fixtures/cards.json")
    committed.symlink("fixtures/cards.json", "../elsewhere.json")
    assert _found(committed) == ["fixtures/cards.json (not a regular file)"]


def test_links_are_compared_by_their_target(committed: Repo) -> None:
    committed.remove("fixtures/alias.json")
    committed.symlink("fixtures/alias.json", "run.sh")
    assert _found(committed) == ["fixtures/alias.json (a symlink to another target)"]
    committed.remove("fixtures/alias.json")
    committed.write("fixtures/alias.json", '{"cards": 3}\n')
    assert _found(committed) == ["fixtures/alias.json (not the symlink the commit holds)"]


def test_a_fifo_is_not_a_regular_file_and_does_not_block(committed: Repo) -> None:
    committed.remove("fixtures/cards.json")
    os.mkfifo(committed.path / "fixtures/cards.json")
    assert _found(committed) == ["fixtures/cards.json (not a regular file)"]


def test_the_executable_bit_is_compared(committed: Repo) -> None:
    (committed.path / "fixtures/run.sh").chmod(0o644)
    (committed.path / "fixtures/cards.json").chmod(0o755)
    assert _found(committed) == ["fixtures/cards.json (another executable bit)",
                                 "fixtures/run.sh (another executable bit)"]
