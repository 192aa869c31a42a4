"""v1 is the seed article's function exactly, from the working tree and from git objects."""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ballot_guard import git
from ballot_guard.digest.compute import digest_pack
from ballot_guard.digest.framing import V1
from ballot_guard.digest.pack import from_snapshot, from_worktree
from ballot_guard.errors import CannotJudge
from testing.digest_trees import Node, article_digest, build, trees
from testing.helpers import Repo, init_repo, run_cli


def v1_of_worktree(root: Path | str) -> str:
    pack = from_worktree(str(root), "fixtures", V1)
    assert pack.unsupported == ()
    return digest_pack(pack, V1).hex


def v1_at(root: Path | str, rev: str = "HEAD") -> str:
    snap = git.Snapshot(str(root), git.resolve(str(root), rev))
    pack = from_snapshot(snap, "fixtures", V1)
    assert pack.unsupported == ()
    return digest_pack(pack, V1).hex


@settings(max_examples=150, deadline=None)
@given(trees())
def test_v1_equals_the_article_function_on_random_trees(nodes: list[Node]) -> None:
    with tempfile.TemporaryDirectory() as d:
        build(Path(d) / "fixtures", nodes)
        assert v1_of_worktree(d) == article_digest(Path(d) / "fixtures")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trees())
def test_v1_from_git_objects_equals_the_article_on_the_checkout(nodes: list[Node]) -> None:
    with tempfile.TemporaryDirectory() as d:
        repo = init_repo(Path(d) / "r")
        build(repo.path / "fixtures", nodes)
        repo.write("README", "x")
        repo.commit_all("fixtures")
        assert v1_at(repo.path) == article_digest(repo.path / "fixtures")


def test_v1_sorts_paths_by_component_like_pathlib(tmp_path: Path) -> None:
    # As strings "a-b/c" < "a/b" ('-' < '/'); as paths ("a", "b") < ("a-b", "c").
    top = tmp_path / "fixtures"
    for rel, data in {"a/b": b"1", "a-b/c": b"2", "a.json": b"3"}.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_bytes(data)
    expected = hashlib.sha256(b"a/b1a-b/c2a.json3").hexdigest()
    assert v1_of_worktree(tmp_path) == expected == article_digest(top)


def test_v1_follows_file_links_and_skips_directory_and_broken_links(tmp_path: Path) -> None:
    top = tmp_path / "fixtures"
    (top / "d").mkdir(parents=True)
    (top / "d" / "x").write_bytes(b"X")
    (tmp_path / "outside").write_bytes(b"OUT")
    (top / "to_x").symlink_to("d/x")
    (top / "to_d").symlink_to("d")  # rglob does not descend, is_file() is False
    (top / "broken").symlink_to("nowhere")
    (top / "loop").symlink_to("loop")
    (top / "out").symlink_to("../outside")
    expected = hashlib.sha256(b"d/xXoutOUTto_xX").hexdigest()
    assert v1_of_worktree(tmp_path) == expected == article_digest(top)


def test_v1_link_resolution_in_git_objects(repo: Repo) -> None:
    repo.write("data/real.json", b"{}")
    repo.write("fixtures/d/x", b"X")
    repo.symlink("fixtures/via_dir", "d2/x")  # through a linked directory
    repo.symlink("fixtures/d2", "d")
    repo.symlink("fixtures/up", "../data/real.json")  # outside the pack, inside the repo
    repo.symlink("fixtures/chain", "up")
    repo.symlink("fixtures/file_as_dir", "d/x/y")
    repo.commit_all("links")
    assert v1_at(repo.path) == article_digest(repo.path / "fixtures") == v1_of_worktree(repo.path)


@pytest.mark.parametrize("target", ["/etc/hostname", "../../outside"])
def test_v1_at_a_rev_cannot_follow_a_link_out_of_the_repository(repo: Repo, target: str) -> None:
    repo.write("fixtures/a", b"a")
    repo.symlink("fixtures/out", target)
    repo.commit_all("link out")
    with pytest.raises(CannotJudge, match="points outside the repository"):
        v1_at(repo.path)


def test_a_pin_made_with_the_articles_snippet_verifies_with_a_warning(repo: Repo) -> None:
    repo.write("fixtures/a.json", b'{"id": 1}\n')
    repo.write("fixtures/sub/b.bin", bytes(range(256)))
    pinned = article_digest(repo.path / "fixtures")  # what the seed's shell snippet prints
    repo.write("fixture_digest.txt", pinned + "\n")
    repo.commit_all("pin with the seed snippet")
    res = run_cli(["digest", "--check"], repo.path)
    assert res.code == 0, res
    assert "v1" in res.err and "ballot-guard digest --pin" in res.err
    assert "renamed file plus one moved byte" in res.err
    assert run_cli(["digest", "--check", "--rev", "HEAD"], repo.path).code == 0
    assert run_cli(["digest", "--format", "v1"], repo.path).out.strip() == pinned


def test_v1_reads_large_files_in_chunks_like_read_bytes(tmp_path: Path) -> None:
    top = tmp_path / "fixtures"
    top.mkdir()
    (top / "big").write_bytes(os.urandom(3 * (1 << 20) + 17))
    (top / "small").write_bytes(b"s" * 70000)
    assert v1_of_worktree(tmp_path) == article_digest(top)
