"""Property: any staged mix of oracle/behaviour/neutral adds, edits, deletes splits exactly."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.git import Snapshot
from ballot_guard.oracle import tables
from ballot_guard.split.split import split_staged
from testing.helpers import init_repo
from testing.split_support import index, state, tree

ORACLE = ("properties/test_a.py", "properties/deep/test_b.py", "fixtures/blob.bin",
          "conftest.py")
BEHAVIOUR = ("src/a.py", "src/pkg/b.py", "main.py")
NEUTRAL = ("docs/guide.md", "NOTES.md")
PATHS = ORACLE + BEHAVIOUR + NEUTRAL
CONTENTS = (b"one\n", b"two\n", b"\x00\xffbinary", b"")

# per path: present in HEAD?, what the staged change does, the staged content
slot = st.tuples(st.booleans(), st.sampled_from(["same", "edit", "flip", "chmod"]),
                 st.sampled_from(CONTENTS), st.sampled_from(CONTENTS))


@settings(max_examples=30, deadline=None)
@given(st.lists(slot, min_size=len(PATHS), max_size=len(PATHS)), st.booleans())
def test_split_updates_exactly_the_oracle_entries(slots: list[tuple[bool, str, bytes, bytes]],
                                                  unstaged: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repo(Path(tmp) / "r")
        repo.write("keep.txt", "base\n")
        for path, (present, _op, old, _new) in zip(PATHS, slots, strict=True):
            if present:
                repo.write(path, old)
        base = repo.commit_all("base")
        for path, (present, op, old, new) in zip(PATHS, slots, strict=True):
            if op == "edit" and present and new != old:
                repo.write(path, new)
            elif op == "flip":  # delete what is there, add what is not
                if present:
                    repo.remove(path)
                else:
                    repo.write(path, new)
            elif op == "chmod" and present:
                (repo.path / path).chmod(0o755)
        repo.stage()
        if unstaged and (repo.path / "keep.txt").exists():
            repo.write("keep.txt", "unstaged edit\n")
        changed = set(repo.git("diff", "--cached", "--no-renames", "--name-only", "-z").split("\0")) - {""}
        before = state(repo)
        staged = index(repo)

        out = split_staged(str(repo.path))

        # neutral never covers code: a neutral path made executable is behaviour
        made_executable = {path for path, (present, op, _o, _n) in zip(PATHS, slots, strict=True)
                           if op == "chmod" and present and path in NEUTRAL}
        behaviour = set(BEHAVIOUR) | made_executable
        mixed = bool(changed & set(ORACLE)) and bool(changed & behaviour)
        assert (out.oracle_commit is not None) == mixed
        after = state(repo)
        assert after["index"] == before["index"] and after["files"] == before["files"]
        if not mixed:
            assert after == before
            return
        assert repo.git("rev-parse", "HEAD^").strip() == base
        want = tree(repo, base)
        for path in changed & set(ORACLE):
            if path in staged:
                want[path] = staged[path]
            else:
                del want[path]
        assert tree(repo, "HEAD") == want
        rest = set(repo.git("diff", "--cached", "--no-renames", "--name-only", "-z").split("\0")) - {""}
        assert rest == changed - set(ORACLE)


PYPROJECTS = (
    None,
    b'[project]\nname = "a"\n',
    b'[project]\nname = "b"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
    b'# top\n[tool.pytest.ini_options]\naddopts = "-x"\n\n[project]\nname = "a"\n',
    b'[tool.ballot_guard]\nrepeats = 3\n',
    b'[project]\nname = "a"\n[tool.ballot_guard]\nrepeats = 4\n[tool.black]\nx = 1\n',
    b'[project]\r\nname = "a"  # same data, other layout\r\n',
)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(PYPROJECTS), st.sampled_from(PYPROJECTS), st.booleans(), st.booleans())
def test_pyproject_in_a_random_mix(old: bytes | None, new: bytes | None, prop: bool,
                                   src: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repo(Path(tmp) / "r")
        repo.write("properties/test_a.py", "a\n")
        repo.write("src/a.py", "a\n")
        if old is not None:
            repo.write("pyproject.toml", old)
        base = repo.commit_all("base")
        if new is None:
            if old is not None:
                repo.remove("pyproject.toml")
        else:
            repo.write("pyproject.toml", new)
        if prop:
            repo.write("properties/test_a.py", "b\n")
        if src:
            repo.write("src/a.py", "b\n")
        repo.stage()
        before = state(repo)

        out = split_staged(str(repo.path))

        verdict = tables.judge("pyproject.toml", old, new) if old != new else None
        on_oracle = prop or verdict in (tables.ORACLE, tables.BOTH)
        on_behaviour = src or verdict in (tables.BEHAVIOR, tables.BOTH)
        assert (out.oracle_commit is not None) == (on_oracle and on_behaviour)
        after = state(repo)
        assert after["index"] == before["index"] and after["files"] == before["files"]
        if out.oracle_commit is None:
            assert after["head"] == base
            return
        committed = Snapshot(str(repo.path), "HEAD").read("pyproject.toml")
        if verdict == tables.BOTH:
            assert tables.split("pyproject.toml", committed)[0] == \
                tables.split("pyproject.toml", new)[0]
            assert tables.split("pyproject.toml", committed)[1] == \
                tables.split("pyproject.toml", old)[1]
        elif verdict == tables.ORACLE:
            assert committed == new
        else:
            assert committed == old
        assert (repo.git("show", "HEAD:properties/test_a.py") == "b\n") == prop
        assert repo.git("show", "HEAD:src/a.py") == "a\n"
