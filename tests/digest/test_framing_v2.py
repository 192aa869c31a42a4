"""v2: the contract's framing, from the working tree and from git objects (--rev)."""
from __future__ import annotations

import hashlib
import os
import socket
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings

from ballot_guard import git
from ballot_guard.digest.compute import digest_pack
from ballot_guard.digest.framing import V1, V2, Digest, parse
from ballot_guard.digest.pack import from_snapshot, from_worktree
from testing.digest_trees import Node, build, trees
from testing.helpers import Repo, init_repo, run_cli


def spec_v2(top: Path) -> str:
    """The contract's v2 text, implemented independently (os.walk, whole reads)."""
    entries = []
    base = os.fsencode(top)
    for dirpath, dirnames, filenames in os.walk(base):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                entries.append((rel, b"l", os.readlink(full)))
            else:
                with open(full, "rb") as f:
                    entries.append((rel, b"x" if st.st_mode & 0o100 else b"f", f.read()))
    h = hashlib.sha256()
    for rel, kind, content in sorted(entries):
        h.update(kind + len(rel).to_bytes(8, "big") + rel + len(content).to_bytes(8, "big"))
        h.update(content)
    return "sha256-v2:" + h.hexdigest()


def digest_of_tree(root: Path | str, fmt: str = V2) -> str:
    pack = from_worktree(str(root), "fixtures", fmt)
    assert pack.unsupported == ()
    return str(digest_pack(pack, fmt))


def digest_at(root: Path | str, rev: str = "HEAD", fmt: str = V2) -> str:
    snap = git.Snapshot(str(root), git.resolve(str(root), rev))
    pack = from_snapshot(snap, "fixtures", fmt)
    assert pack.unsupported == ()
    return str(digest_pack(pack, fmt))


def both(tmp_path: Path, name: str, files: dict[str, bytes | tuple[str, str]]) -> tuple[str, str]:
    """(v1, v2) of a pack written from ``files`` (bytes, ("link", target), ("exec", data))."""
    top = tmp_path / name / "fixtures"
    top.mkdir(parents=True)
    for rel, spec in files.items():
        p = top / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, tuple) and spec[0] == "link":
            p.symlink_to(spec[1])
        elif isinstance(spec, tuple):
            p.write_bytes(spec[1].encode())
            p.chmod(0o755)
        else:
            p.write_bytes(spec)
            p.chmod(0o644)
    return digest_of_tree(top.parent, V1), digest_of_tree(top.parent, V2)


@settings(max_examples=100, deadline=None)
@given(trees())
def test_v2_equals_an_independent_implementation_of_the_contract(nodes: list[Node]) -> None:
    with tempfile.TemporaryDirectory() as d:
        build(Path(d) / "fixtures", nodes)
        assert digest_of_tree(d) == spec_v2(Path(d) / "fixtures")


@settings(max_examples=40, deadline=None)
@given(trees(max_nodes=10))
def test_rev_equals_the_working_tree_digest_on_a_clean_checkout(nodes: list[Node]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src = init_repo(Path(d) / "src")
        build(src.path / "fixtures", nodes)
        src.write("README", "x")
        src.commit_all("fixtures")
        clone = Path(d) / "clone"
        src.git("clone", "-q", str(src.path), str(clone))
        for fmt in (V1, V2):
            assert digest_at(src.path, fmt=fmt) == digest_of_tree(clone, fmt) \
                == digest_of_tree(src.path, fmt)
        cli_rev = run_cli(["digest", "--rev", "HEAD"], clone)
        assert cli_rev.code == 0 and cli_rev.out == run_cli(["digest"], clone).out


@pytest.mark.parametrize("case", [
    pytest.param(({"a.json": b'{"k": 1}'}, {"a.json{": b'"k": 1}'}), id="rename-plus-moved-byte"),
    pytest.param(({"b": b"{}", "t": ("link", "b")}, {"b": b"{}", "t": b"{}"}), id="file-vs-symlink"),
    pytest.param(({"run.sh": b"echo"}, {"run.sh": ("exec", "echo")}), id="executable-bit"),
    pytest.param(({"x": b"/yZ"}, {"x/y": b"Z"}), id="moved-into-a-folder"),
    pytest.param(({"d/ab": b"c"}, {"d/a": b"bc"}), id="moved-byte-across-the-name"),
])
def test_v1_collides_where_v2_does_not(tmp_path: Path, case: tuple[dict, dict]) -> None:
    one, two = case
    v1_a, v2_a = both(tmp_path, "one", one)
    v1_b, v2_b = both(tmp_path, "two", two)
    assert v1_a == v1_b  # the seed's framing cannot tell these packs apart
    assert v2_a != v2_b


def test_v2_differs_for_a_file_moved_between_folders(tmp_path: Path) -> None:
    _, a = both(tmp_path, "one", {"in/f.json": b"{}", "out/g": b"1"})
    _, b = both(tmp_path, "two", {"out/f.json": b"{}", "out/g": b"1"})
    assert a != b


def test_v2_does_not_follow_links(tmp_path: Path) -> None:
    (tmp_path / "outside").write_bytes(b"one")
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "out").symlink_to("../outside")
    before = digest_of_tree(tmp_path), digest_of_tree(tmp_path, V1)
    (tmp_path / "outside").write_bytes(b"two")
    after = digest_of_tree(tmp_path), digest_of_tree(tmp_path, V1)
    assert before[0] == after[0] and before[1] != after[1]


def test_v2_known_value(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "a").write_bytes(b"hi")
    expected = hashlib.sha256(b"f" + (1).to_bytes(8, "big") + b"a" + (2).to_bytes(8, "big")
                              + b"hi").hexdigest()
    assert digest_of_tree(tmp_path) == f"sha256-v2:{expected}"
    assert parse(f" sha256-v2:{expected}\n") == Digest(V2, expected)
    assert parse(expected) == Digest(V1, expected)
    for bad in ("", "sha256-v2:", expected[:-1], expected.upper(), "sha1:" + expected):
        assert parse(bad) is None


def test_an_empty_or_missing_pack_is_the_empty_digest(repo: Repo) -> None:
    repo.write("README", "x")
    repo.commit_all("no fixtures")
    res = run_cli(["digest"], repo.path)
    assert res.code == 0
    assert res.out.strip() == "sha256-v2:" + hashlib.sha256().hexdigest()
    assert "missing or empty" in res.err
    assert run_cli(["digest", "--rev", "HEAD"], repo.path).out == res.out
    (repo.path / "fixtures").mkdir()
    assert run_cli(["digest"], repo.path).out == res.out


def test_non_utf8_names_are_raw_bytes_in_v2_and_refused_by_v1(repo: Repo) -> None:
    name = b"fixtures/caf\xe9"
    os.makedirs(repo.path / "fixtures")
    with open(os.path.join(os.fsencode(repo.path), name), "wb") as f:
        f.write(b"x")
    repo.commit_all("latin-1 name")
    assert digest_at(repo.path) == digest_of_tree(repo.path) == spec_v2(repo.path / "fixtures")
    res = run_cli(["digest", "--format", "v1"], repo.path)
    assert res.code == 2 and "not UTF-8" in res.err and "caf\\xe9" in res.err


def test_special_files_are_exit_2_naming_them(repo: Repo, tmp_path: Path) -> None:
    repo.write("fixtures/a.json", b"{}")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    os.mkfifo(repo.path / "fixtures" / "pipe")
    for args in (["digest"], ["digest", "--pin"], ["digest", "--check"],
                 ["digest", "--format", "v1"]):
        res = run_cli(args, repo.path)
        assert res.code == 2, (args, res)
        assert "FIFO fixtures/pipe" in res.out + res.err
    os.unlink(repo.path / "fixtures" / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(repo.path / "fixtures" / "sock"))
        res = run_cli(["digest"], repo.path)
        assert res.code == 2 and "socket fixtures/sock" in res.err
    finally:
        sock.close()
        os.unlink(repo.path / "fixtures" / "sock")
    try:
        os.mknod(repo.path / "fixtures" / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pass
    else:
        res = run_cli(["digest"], repo.path)
        assert res.code == 2 and "character device fixtures/null" in res.err
        os.unlink(repo.path / "fixtures" / "null")
    assert run_cli(["digest", "--check"], repo.path).code == 0


def test_a_nested_repository_or_gitlink_is_exit_2(repo: Repo) -> None:
    repo.write("fixtures/a.json", b"{}")
    repo.commit_all("fixtures")
    sub = init_repo(repo.path / "fixtures" / "sub")
    sub.write("f", "x")
    sub.commit_all("sub")
    res = run_cli(["digest"], repo.path)
    assert res.code == 2 and "submodule" in res.err and "fixtures/sub" in res.err
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub.head()},fixtures/sub")
    repo.commit("gitlink")
    res = run_cli(["digest", "--rev", "HEAD"], repo.path)
    assert res.code == 2 and "submodule fixtures/sub" in res.err
