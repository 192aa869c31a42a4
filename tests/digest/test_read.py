"""Streaming: large files and blobs in chunks, flat memory, files that change while read."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ballot_guard import git
from ballot_guard.digest.compute import digest_pack
from ballot_guard.digest.framing import V1, V2
from ballot_guard.digest.pack import from_snapshot, from_worktree
from ballot_guard.digest.read import BIG, CHUNK, SMALL
from ballot_guard.errors import CannotJudge
from testing.digest_trees import article_digest
from testing.helpers import Repo, run_cli
from tests.digest.test_framing_v2 import spec_v2

# ru_maxrss of exactly the measured process (see bench/digest_bench.py for why a launcher).
LAUNCHER = """\
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
raise SystemExit(os.waitstatus_to_exitcode(status))
"""


def sizes() -> dict[str, int]:
    return {"small": SMALL, "mid": SMALL + 1, "chunks": 3 * CHUNK + 5,
            "big": BIG + CHUNK // 2, "empty": 0}


def test_every_read_path_gives_the_same_bytes(repo: Repo) -> None:
    for name, size in sizes().items():
        repo.write(f"fixtures/{name}.bin", os.urandom(size))
    repo.write("fixtures/run.sh", os.urandom(BIG + 3), mode=0o755)
    repo.commit_all("sizes")
    top = repo.path / "fixtures"
    tree = str(digest_pack(from_worktree(str(repo.path), "fixtures", V2), V2))
    assert tree == spec_v2(top)
    assert digest_pack(from_worktree(str(repo.path), "fixtures", V1), V1).hex == \
        article_digest(top)
    snap = git.Snapshot(str(repo.path), repo.head())
    assert str(digest_pack(from_snapshot(snap, "fixtures", V2), V2)) == tree
    assert digest_pack(from_snapshot(snap, "fixtures", V1), V1).hex == article_digest(top)


def test_memory_stays_flat_on_a_large_file(repo: Repo) -> None:
    big = repo.path / "fixtures" / "big.bin"
    big.parent.mkdir()
    with open(big, "wb") as f:  # sparse: 768 MiB to read, almost nothing on disk
        f.truncate(768 << 20)
    for args in (["digest"], ["digest", "--format", "v1"]):
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, sys.executable, "-m",
                               "ballot_guard", *args], cwd=repo.path, capture_output=True,
                              check=True)
        digest, peak_kib = proc.stdout.decode().split()
        assert digest == run_cli(args, repo.path).out.strip()
        assert int(peak_kib) < 64 * 1024, f"peak RSS {int(peak_kib) // 1024} MiB"


def test_a_file_swapped_for_a_fifo_after_listing_is_refused_without_hanging(
        repo: Repo) -> None:
    repo.write("fixtures/a.json", b"{}")
    repo.write("fixtures/b.json", b"[]")
    pack = from_worktree(str(repo.path), "fixtures", V2)
    os.unlink(repo.path / "fixtures" / "b.json")
    os.mkfifo(repo.path / "fixtures" / "b.json")
    with pytest.raises(CannotJudge, match=re.escape("fixtures/b.json changed while being read")):
        digest_pack(pack, V2)


@pytest.mark.parametrize("fmt", [V1, V2])
def test_a_file_that_changes_after_listing_is_refused(repo: Repo, fmt: str) -> None:
    repo.write("fixtures/a.json", b"{}")
    pack = from_worktree(str(repo.path), "fixtures", fmt)
    os.unlink(repo.path / "fixtures" / "a.json")
    if fmt == V2:
        os.symlink("elsewhere", repo.path / "fixtures" / "a.json")
    with pytest.raises(CannotJudge, match="changed while being read"):
        digest_pack(pack, fmt)


def test_a_large_blob_streams_through_cat_file(repo: Repo, tmp_path: Path) -> None:
    data = os.urandom(BIG + 7)
    repo.write("fixtures/big.bin", data)
    repo.write("fixtures/small", b"s")
    repo.commit_all("big blob")
    snap = git.Snapshot(str(repo.path), repo.head())
    with git.BlobReader(str(repo.path)) as reader:
        entries = snap.entries("fixtures")
        seen = []
        for (size, chunks), e in zip(reader.stream([e.oid for e in entries]), entries, strict=True):
            parts = [bytes(c) for c in chunks]
            seen.append((e.path, size, max(len(p) for p in parts)))
            assert sum(len(p) for p in parts) == size
        assert seen[0][2] <= CHUNK  # never one whole buffer for the big blob
        assert b"".join(bytes(c) for _, cs in reader.stream([entries[1].oid]) for c in cs) \
            == b"s"
