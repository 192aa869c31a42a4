"""The one reader of git's raw diff output: generated records read back exactly, in bulk
and record by record, and real git output (renames, copies, merges, odd path bytes) read
as git's own plumbing describes the trees."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.change import raw_diff
from ballot_guard.change.raw_diff import FileChange, read, read_commits
from ballot_guard.errors import CannotJudge
from testing.helpers import Repo, git, init_repo

_MODE = st.sampled_from(["100644", "100755", "120000", "160000"])
_NAME = st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b)


def _encode(f: FileChange, score: str = "") -> bytes:
    """The raw ``-z`` record git prints for ``f`` (one parent)."""
    size = 64 if any(len(x or "") == 64 for x in (f.old_oid, f.new_oid)) else 40
    meta = (f":{f.old_mode or '000000'} {f.new_mode or '000000'} "
            f"{f.old_oid or '0' * size} {f.new_oid or '0' * size} {f.status}{score}")
    names = (f.path,) if f.old_path is None else (f.old_path, f.path)
    return b"\0".join([meta.encode(), *map(os.fsencode, names)]) + b"\0"


@st.composite
def _records(draw: st.DrawFn, scored: bool) -> tuple[FileChange, str]:
    size = draw(st.sampled_from([40, 64]))
    one = st.sampled_from(["a" * size, "0123456789abcdef"[:size // 4] * 4, "f" * size])
    path = os.fsdecode(draw(_NAME))
    status = draw(st.sampled_from("RCM" if scored else "AMDTUX"))
    old = None if status == "A" else (draw(_MODE), draw(one))
    new = None if status == "D" else (draw(_MODE), draw(one))
    if status in ("U", "X"):
        old = new = None
    old_path = os.fsdecode(draw(_NAME)) if status in ("R", "C") else None
    old_mode, old_oid = old or (None, None)
    new_mode, new_oid = new or (None, None)
    score = f"{draw(st.integers(0, 100)):03d}" if scored else ""
    return FileChange(status, path, old_path, old_mode, new_mode, old_oid, new_oid), score


@given(st.lists(_records(scored=False), max_size=8))
def test_plain_records_read_back_in_bulk(records: list[tuple[FileChange, str]]) -> None:
    data = b"".join(_encode(f, s) for f, s in records)
    got = read(data)
    assert got == tuple(f for f, _ in records)
    assert all(type(f) is FileChange for f in got)
    if len({len(f.old_oid or f.new_oid or "x" * 40) for f, _ in records}) <= 1:
        assert raw_diff._read_bulk(data.split(b"\0")[:-1], "utf-8", "surrogateescape") == got


@given(st.lists(st.one_of(_records(scored=False), _records(scored=True)), max_size=8))
def test_any_records_read_back_one_by_one(records: list[tuple[FileChange, str]]) -> None:
    """Renames and copies (a score, two paths), scored rewrites, ids of both lengths:
    the record-by-record reading gives back what was written, and the bulk one agrees
    with it whenever it takes the output at all."""
    data = b"".join(_encode(f, s) for f, s in records)
    parts = data.split(b"\0")[:-1]
    slow, commits = raw_diff._read_records(parts, "utf-8", "surrogateescape",
                                           commit_lines=False)
    assert tuple(slow) == tuple(f for f, _ in records) == read(data)
    assert commits == []
    bulk = raw_diff._read_bulk(parts, "utf-8", "surrogateescape")
    assert bulk is None or bulk == tuple(slow)


@pytest.mark.parametrize("data", [
    b":100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" M\0",  # no path
    b":100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" R100\0old\0",  # no new path
    b":100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" Q\0p\0",  # no such status
    b":100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" R\0a\0b\0",  # a rename, no score
    b":10064x 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" M\0p\0",  # a bad mode
    b":100644 100644 " + b"g" * 40 + b" " + b"a" * 40 + b" M\0p\0",  # not an id
    b":100644 100644 " + b"a" * 40 + b" " + b"a" * 64 + b" M\0p\0",  # ids of two lengths
    b"warning: something\0p\0",
    b"a" * 40 + b"\0",  # a commit line outside --stdin output
])
def test_malformed_output_cannot_be_judged(data: bytes) -> None:
    with pytest.raises(CannotJudge, match="unexpected git diff output near"):
        read(data)


def test_empty_output_is_no_change() -> None:
    assert read(b"") == ()
    assert read_commits(b"") == []


# ---- real git -----------------------------------------------------------------------

# One path component: any bytes but NUL and "/", and not what git refuses to track.
_COMPONENT = st.binary(min_size=1, max_size=10).filter(
    lambda b: b"\0" not in b and b"/" not in b and b not in (b".", b"..")
    and b.lower() != b".git")
_ODD = st.sampled_from([b"tab\there", b"new\nline", b"caf\xe9", b"\xff\xfe", b'"quoted"',
                        b'"a\\tb"', b"back\\slash", b" lead", b"trail ", b"\xe2\x82\xac",
                        b"-dash", b":colon", b"a" * 40])
_PATH = st.lists(st.one_of(_ODD, _COMPONENT), min_size=1, max_size=3).map(b"/".join)

_counter = itertools.count()


def _fresh(base: Path) -> Repo:
    return init_repo(base / f"r{next(_counter)}")


def _ids(repo: Repo, rev: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, id) of every entry of ``rev``'s tree, as ``ls-tree`` says."""
    out = repo.git("ls-tree", "-r", "-z", "--full-tree", rev)
    found = {}
    for rec in out.split("\0")[:-1]:
        meta, _, path = rec.partition("\t")
        mode, _kind, oid = meta.split(" ")
        found[path] = (mode, oid)
    return found


def _write(repo: Repo, path: bytes, content: bytes) -> None:
    full = os.path.join(os.fsencode(repo.path), path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(content)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PATH, min_size=1, max_size=5, unique=True), st.data())
def test_real_git_output_is_read_as_the_trees_say(tmp_path: Path, paths: list[bytes],
                                                   data: st.DataObject) -> None:
    """Paths with tabs, newlines, quotes, backslashes and non-UTF-8 bytes, added, edited,
    re-moded and deleted: every record's path, modes and blob ids are those of
    ``ls-tree`` on either side, for a commit and for the index."""
    # a path may not be both a file and a directory
    paths = [p for p in paths if not any(q != p and q.startswith(p + b"/") for q in paths)]
    repo = _fresh(tmp_path)
    repo.write("keep", "k\n")
    for p in paths[::2]:
        _write(repo, p, b"old " + p)
    repo.commit_all("base")
    before = _ids(repo, "HEAD")
    for k, p in enumerate(paths):
        action = data.draw(st.sampled_from(["edit", "mode", "delete"] if k % 2 == 0
                                           else ["add"]))
        full = os.path.join(os.fsencode(repo.path), p)
        if action == "delete":
            os.unlink(full)
        elif action == "mode":
            os.chmod(full, 0o755)
        else:
            _write(repo, p, b"new " + p)
    repo.stage()
    base = repo.head()
    staged = raw_diff.index(str(repo.path), base)
    tip = repo.commit("change")
    committed = raw_diff.trees(str(repo.path), base, tip)
    after = _ids(repo, "HEAD")
    assert sorted(staged) == sorted(committed)
    changed = {os.fsdecode(p) for p in paths} - {
        p for p in before.keys() & after.keys() if before[p] == after[p]}
    assert {f.path for f in committed} == changed
    for f in committed:
        assert f.old_path is None
        assert f.old == before.get(f.path)
        assert f.new == after.get(f.path)
        assert f.status == ("A" if f.old is None else "D" if f.new is None else "M")


def test_renames_and_copies_from_real_git_carry_scores_and_both_paths(tmp_path: Path) -> None:
    """The callers ask for no rename detection, but the reader reads git's scored records
    (``-M -C``) too, odd names included."""
    repo = _fresh(tmp_path)
    body = b"".join(b"line %d\n" % i for i in range(40))
    _write(repo, b"old\tname", body)
    _write(repo, b"src/caf\xe9.py", body + b"tail\n")
    repo.commit_all("base")
    base = repo.head()
    os.rename(os.path.join(os.fsencode(repo.path), b"old\tname"),
              os.path.join(os.fsencode(repo.path), b"new\nname"))
    _write(repo, b"copy \xff", body + b"tail\n")
    repo.commit_all("rename and copy")
    out = git(repo.path, "diff-tree", "-r", "-z", "-M", "-C", "--find-copies-harder",
              "--full-index", base, "HEAD")
    got = read(os.fsencode(out))
    byname = {f.path: f for f in got}
    before, after = _ids(repo, base), _ids(repo, "HEAD")
    renamed = byname[os.fsdecode(b"new\nname")]
    assert (renamed.status, renamed.old_path) == ("R", os.fsdecode(b"old\tname"))
    assert renamed.old == before[os.fsdecode(b"old\tname")]
    assert renamed.new == after[os.fsdecode(b"new\nname")]
    copied = byname[os.fsdecode(b"copy \xff")]
    assert (copied.status, copied.old_path) == ("C", os.fsdecode(b"src/caf\xe9.py"))
    assert copied.new == after[os.fsdecode(b"copy \xff")]


def test_each_commit_reads_combined_records_of_merges(tmp_path: Path) -> None:
    """``diff-tree --stdin -c --root``: a root commit adds everything, a plain commit its
    change, a merge only the paths it resolved apart from every parent, whose old side
    is its first parent's."""
    repo = _fresh(tmp_path)
    repo.write("f", "a\n")
    root = repo.commit_all("root")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("g\tside", "b\n")
    repo.write("a" * 40, "a path that reads as an object id\n")
    side = repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("f", "c\n")
    main = repo.commit_all("main")
    repo.git("merge", "-q", "--no-edit", "side")
    repo.write("f", "resolved by hand\n")
    repo.stage()
    repo.git("commit", "-q", "--amend", "--no-edit")
    merge = repo.head()
    got = dict(raw_diff.each_commit(str(repo.path), [root, side, main, merge]))
    assert [f.path for f in got[root]] == ["f"] and got[root][0].status == "A"
    assert [f.path for f in got[side]] == ["a" * 40, "g\tside"]
    (own,) = got[merge]
    assert own.path == "f"
    assert own.old == _ids(repo, main)["f"]
    assert own.new == _ids(repo, merge)["f"]
    assert list(got) == [root, side, main, merge]
