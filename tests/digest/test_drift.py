"""Drift diagnosis: exactly what changed since the pin was last committed."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.digest.pin import check_pin, check_snapshot
from testing.helpers import Repo, init_repo, run_cli


def changed(lines: tuple[str, ...] | list[str]) -> set[str]:
    return {line.strip() for line in lines if line.startswith("  ")}


@pytest.fixture
def pinned(repo: Repo) -> Repo:
    for name in ("a.json", "b.json", "d.sh", "e.txt", "same.txt"):
        repo.write(f"fixtures/{name}", f"{name}\n")
    repo.write("fixtures/deep/f.bin", b"\x00\x01")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.commit_all("pin")
    return repo


def test_the_diagnosis_names_every_kind_of_change(pinned: Repo) -> None:
    pinned.write("fixtures/a.json", "changed\n")
    pinned.remove("fixtures/b.json")
    pinned.write("fixtures/c.json", "untracked, on disk\n")
    (pinned.path / "fixtures/d.sh").chmod(0o755)
    pinned.remove("fixtures/e.txt")
    pinned.symlink("fixtures/e.txt", "a.json")
    pinned.remove("fixtures/deep/f.bin")
    pinned.write("fixtures/deep/f.bin/inner", b"now a folder")
    res = check_pin(str(pinned.path), Config())
    assert not res.ok and res.problem is not None and res.problem.startswith("fixture drift")
    assert res.details[0].startswith("changed since the pin was last committed (")
    assert changed(res.details) == {
        "modified: fixtures/a.json",
        "removed: fixtures/b.json",
        "added: fixtures/c.json",
        "type changed: fixtures/d.sh (file -> executable file)",
        "type changed: fixtures/e.txt (file -> symlink, content modified)",
        "removed: fixtures/deep/f.bin",
        "added: fixtures/deep/f.bin/inner",
    }
    cli = run_cli(["digest", "--check"], pinned.path)
    assert cli.code == 2 and "  modified: fixtures/a.json" in cli.out.splitlines()


def test_history_since_the_last_commit_of_the_pin(pinned: Repo) -> None:
    pinned.write("fixtures/a.json", "one\n")
    pinned.commit_all("fixture only (without the hook)")
    pinned.write("fixtures/b.json", "two\n")
    pinned.commit_all("another")
    pinned.write("fixtures/e.txt", "three\n")
    res = check_pin(str(pinned.path), Config())
    assert changed(res.details) == {"modified: fixtures/a.json", "modified: fixtures/b.json",
                                    "modified: fixtures/e.txt"}
    at = check_pin(str(pinned.path), Config(), rev="HEAD")
    assert changed(at.details) == {"modified: fixtures/a.json", "modified: fixtures/b.json"}
    assert check_pin(str(pinned.path), Config(), rev="HEAD~2").ok
    assert run_cli(["digest", "--pin"], pinned.path).code == 0
    pinned.commit_all("re-pin")
    pinned.write("fixtures/same.txt", "now\n")
    assert changed(check_pin(str(pinned.path), Config()).details) == {
        "modified: fixtures/same.txt"}


def test_the_index_is_compared_as_staged(pinned: Repo) -> None:
    pinned.write("fixtures/a.json", "staged\n")
    pinned.stage()
    pinned.write("fixtures/b.json", "not staged\n")
    res = check_snapshot(git.Snapshot(str(pinned.path)), Config())
    assert not res.ok and changed(res.details) == {"modified: fixtures/a.json"}


def test_when_history_cannot_tell_it_says_so(repo: Repo) -> None:
    repo.write("fixtures/a", "a")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.write("fixtures/a", "b")
    res = check_pin(str(repo.path), Config())
    never = "history cannot tell what changed: fixture_digest.txt has never been committed"
    assert res.details == (f"{never} (no commit yet)",)
    repo.write("README", "r")
    repo.stage("README")
    repo.commit("readme only")
    res = check_pin(str(repo.path), Config())
    assert res.details == (never,)


def test_a_pin_edited_by_hand_or_wrong_from_the_start(pinned: Repo) -> None:
    pin = pinned.path / "fixture_digest.txt"
    pin.write_text("sha256-v2:" + "2" * 64 + "\n")
    res = check_pin(str(pinned.path), Config())
    assert len(res.details) == 1 and "fixture_digest.txt itself was edited" in res.details[0]
    pinned.commit_all("wrong pin")
    res = check_pin(str(pinned.path), Config())
    assert "does not match the fixtures committed with it" in res.details[0]


NAMES = st.sampled_from(["a", "b.json", "c d", "é", "x/y", "x/z", "x-y", "q/r/s"])


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(NAMES, st.binary(max_size=8), min_size=1),
       st.dictionaries(NAMES, st.sampled_from(["modify", "remove", "exec", "link"])))
def test_random_changes_are_named_exactly(files: dict[str, bytes], edits: dict[str, str]) -> None:
    files = {k: v for k, v in files.items()
             if not any(o != k and o.startswith(k + "/") for o in files)}
    with tempfile.TemporaryDirectory() as d:
        repo = init_repo(Path(d) / "r")
        for name, data in files.items():
            repo.write(f"fixtures/{name}", data)
        assert run_cli(["digest", "--pin"], repo.path).code == 0
        repo.commit_all("pin")
        expected = set()
        for name, edit in edits.items():
            path = repo.path / "fixtures" / name
            if name not in files:
                if any(o.startswith(name + "/") or name.startswith(o + "/") for o in files):
                    continue
                repo.write(f"fixtures/{name}", b"new")
                expected.add(f"added: fixtures/{name}")
            elif edit == "modify":
                path.write_bytes(files[name] + b"+")
                expected.add(f"modified: fixtures/{name}")
            elif edit == "remove":
                path.unlink()
                expected.add(f"removed: fixtures/{name}")
            elif edit == "exec":
                path.chmod(0o755)
                expected.add(f"type changed: fixtures/{name} (file -> executable file)")
            else:
                path.unlink()
                os.symlink("target", path)
                same = files[name] == b"target"
                expected.add(f"type changed: fixtures/{name} (file -> symlink"
                             + (")" if same else ", content modified)"))
        res = check_pin(str(repo.path), Config())
        assert changed(res.details) == expected
        assert res.ok == (not expected)
