"""``--rev`` read through a checkout: the same digest as git's own bytes, whatever the
working tree holds (edited, removed, retyped, swapped for a FIFO, far from the commit)."""
from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard import git
from ballot_guard.digest import checkout
from ballot_guard.digest.compute import digest_pack
from ballot_guard.digest.framing import V1, V2, framing
from ballot_guard.digest.pack import from_snapshot
from ballot_guard.digest.read import SMALL, feed_blobs
from testing.helpers import Repo, init_repo

N = checkout.MIN_ITEMS + 16


def _git_only(root: Path, fmt: str, rev: str = "HEAD") -> str:
    pack = from_snapshot(git.Snapshot(str(root), git.resolve(str(root), rev)), "fixtures", fmt)
    frame = framing(fmt)
    feed_blobs(pack, frame)  # every byte from cat-file
    return str(frame.digest())


def _rev(root: Path, fmt: str, rev: str = "HEAD") -> str:
    snap = git.Snapshot(str(root), git.resolve(str(root), rev))
    return str(digest_pack(from_snapshot(snap, "fixtures", fmt), fmt))


def _pack(repo: Repo) -> None:
    for i in range(N):
        repo.write(f"fixtures/d{i % 7}/case-{i:03d}.json", f'{{"case": {i}}}\n')
    repo.write("fixtures/run.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("fixtures/big.bin", os.urandom(SMALL + 10))
    repo.symlink("fixtures/alias.json", "d0/case-000.json")
    repo.commit_all("pack")


EDITS = st.lists(st.tuples(st.integers(0, N - 1),
                           st.sampled_from(["edit", "remove", "dir", "fifo", "link", "chmod"])),
                 max_size=6)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_rev_digest_is_gits_bytes_whatever_the_checkout_holds(tmp_path_factory,
                                                              edits: list[tuple[int, str]]) -> None:
    repo = init_repo(tmp_path_factory.mktemp("co"))
    _pack(repo)
    want = {fmt: _git_only(repo.path, fmt) for fmt in (V1, V2)}
    assert {fmt: _rev(repo.path, fmt) for fmt in (V1, V2)} == want  # clean checkout
    for i, how in edits:
        path = repo.path / "fixtures" / f"d{i % 7}" / f"case-{i:03d}.json"
        if path.is_symlink() or path.exists():
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        if how == "edit":
            path.write_text('{"case": "moved"}\n')
        elif how == "dir":
            path.mkdir()
        elif how == "fifo":
            os.mkfifo(path)
        elif how == "link":
            path.symlink_to("../run.sh")
        elif how == "chmod":
            path.write_text(f'{{"case": {i}}}\n')
            path.chmod(0o755)
    (repo.path / "fixtures" / "big.bin").write_bytes(b"changed")
    assert {fmt: _rev(repo.path, fmt) for fmt in (V1, V2)} == want


def test_a_checkout_far_from_the_commit_falls_back_to_git(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "far")
    _pack(repo)
    first = repo.head()
    for i in range(N):
        repo.write(f"fixtures/d{i % 7}/case-{i:03d}.json", f'{{"case": -{i}}}\n')
    repo.commit_all("every case moved")
    want = _git_only(repo.path, V2, first)
    assert _rev(repo.path, V2, first) == want  # the checkout is HEAD: every entry misses
    assert want != _rev(repo.path, V2, "HEAD")


def test_object_ids_are_gits(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "ids")
    for data in (b"", b"x", b"\0\1\2" * 1000):
        oid = repo.git("hash-object", "--stdin", input=data).strip()
        assert checkout.object_id(data, "sha1") == oid


def test_packed_objects_are_left_to_git(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "packed")
    _pack(repo)
    oids = [line.split()[2] for line in repo.git("ls-tree", "-r", "HEAD").splitlines()]
    assert checkout.mostly_loose(str(repo.path), oids)
    repo.git("repack", "-adq")
    repo.git("prune-packed")
    assert not checkout.mostly_loose(str(repo.path), oids)
    assert _rev(repo.path, V2) == _git_only(repo.path, V2)
