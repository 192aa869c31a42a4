"""`ballot-guard digest`: every exit code, and the atomic pin write."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.digest_trees import article_digest
from testing.helpers import Repo, run_bg, run_cli, unprivileged


@pytest.fixture
def pinned(repo: Repo) -> Repo:
    """A repository whose fixtures are pinned (v2) and committed."""
    repo.write("fixtures/a.json", b'{"id": 1}\n')
    repo.write("fixtures/sub/b.txt", b"b\n")
    res = run_cli(["digest", "--pin"], repo.path)
    assert res.code == 0, res
    repo.commit_all("fixtures and pin")
    return repo


# --- 0 ---------------------------------------------------------------------------

def test_print_pin_check_are_0(pinned: Repo) -> None:
    out = run_cli(["digest"], pinned.path)
    assert out.code == 0 and out.err == ""
    assert out.out.strip() == (pinned.path / "fixture_digest.txt").read_text().strip()
    assert out.out.startswith("sha256-v2:")
    check = run_cli(["digest", "--check"], pinned.path)
    assert check.code == 0 and "match" in check.out
    assert run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path).code == 0
    assert run_cli(["digest", "--help"], pinned.path).code == 0


def test_the_module_entry_point_runs_the_command(pinned: Repo) -> None:
    res = run_bg(["digest", "--check"], pinned.path)
    assert res.code == 0, res


def test_pin_v1_writes_the_articles_value(pinned: Repo) -> None:
    res = run_cli(["digest", "--pin", "--format", "v1"], pinned.path)
    assert res.code == 0 and "v1" in res.err
    value = (pinned.path / "fixture_digest.txt").read_text()
    assert value == article_digest(pinned.path / "fixtures") + "\n"


def test_config_comes_from_the_worktree_or_from_rev(pinned: Repo) -> None:
    old = pinned.head()
    pinned.git("mv", "fixtures", "data")
    pinned.write("pyproject.toml", '[tool.ballot_guard]\nfixtures_dir = "data"\n'
                 'digest_file = "data.pin"\n')
    pinned.git("mv", "fixture_digest.txt", "data.pin")
    assert run_cli(["digest", "--check"], pinned.path).code == 0
    pinned.commit_all("move")
    pinned.git("mv", "data", "elsewhere")
    assert run_cli(["digest", "--check"], pinned.path).code == 2  # the working tree moved
    assert run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path).code == 0
    assert run_cli(["digest", "--check", "--rev", old], pinned.path).code == 0


# --- 2 ---------------------------------------------------------------------------

def test_drift_is_2(pinned: Repo) -> None:
    pinned.write("fixtures/a.json", b'{"id": 2}\n')
    res = run_cli(["digest", "--check"], pinned.path)
    assert res.code == 2
    assert "fixture drift" in res.out and "nobody votes" in res.out
    assert "modified: fixtures/a.json" in res.out
    assert run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path).code == 0


@pytest.mark.parametrize("content, words", [
    (None, "no pinned digest"),
    (b"", "no valid pinned digest"),
    (b"deadbeef\n", "no valid pinned digest"),
    (b"sha256-v2:" + b"0" * 63 + b"\n", "no valid pinned digest"),
    (b"\xff\xfe", "not UTF-8"),
    (b"a" * 5000, "too long"),
], ids=["missing", "empty", "short", "v2-short", "binary", "huge"])
def test_missing_or_invalid_pin_is_2(pinned: Repo, content: bytes | None, words: str) -> None:
    pin = pinned.path / "fixture_digest.txt"
    if content is None:
        pin.unlink()
    else:
        pin.write_bytes(content)
    res = run_cli(["digest", "--check"], pinned.path)
    assert res.code == 2 and words in res.out, res
    assert "ballot-guard digest --pin" in res.out


def test_a_pin_that_is_a_symlink_or_unreadable_is_2(pinned: Repo) -> None:
    pin = pinned.path / "fixture_digest.txt"
    pinned.path.joinpath("real.txt").write_text(pin.read_text())
    pin.unlink()
    pin.symlink_to("real.txt")
    res = run_cli(["digest", "--check"], pinned.path)
    assert res.code == 2 and "symlink" in res.out
    pin.unlink()
    pin.write_text(pinned.path.joinpath("real.txt").read_text())
    pin.chmod(0)
    res = unprivileged(["digest", "--check"], pinned.path)
    assert res.code == 2 and "cannot be read" in res.out, res


def test_missing_pin_at_rev_is_2(repo: Repo) -> None:
    repo.write("fixtures/a", b"a")
    repo.commit_all("no pin yet")
    res = run_cli(["digest", "--check", "--rev", "HEAD"], repo.path)
    assert res.code == 2 and "does not exist at" in res.out


# --- 4 ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["digest", "--pin", "--rev", "HEAD"], "takes no --rev"),
    (["digest", "--check", "--format", "v1"], "drop --format"),
    (["digest", "--pin", "--check"], "not allowed with"),
    (["digest", "--format", "v3"], "invalid choice"),
    (["digest", "--rev", "no-such-rev"], "unknown revision"),
    (["digest", "--check", "--rev=--all"], "bad revision"),
    (["digest", "--bogus"], "unrecognized"),
])
def test_usage_errors_are_4(pinned: Repo, args: list[str], words: str) -> None:
    res = run_cli(args, pinned.path)
    assert res.code == 4 and words in res.err and "Traceback" not in res.err, res


def test_outside_a_repository_is_4(tmp_path: Path) -> None:
    res = run_cli(["digest"], tmp_path)
    assert res.code == 4 and "not a git repository" in res.err


@pytest.mark.parametrize("table, words", [
    ("bogus = 1", "bogus"),
    ('digest_file = "fixtures/pin.txt"', "lies inside fixtures_dir"),
])
def test_bad_config_is_4(pinned: Repo, table: str, words: str) -> None:
    pinned.write("pyproject.toml", f"[tool.ballot_guard]\n{table}\n")
    for args in (["digest"], ["digest", "--check"], ["digest", "--pin"]):
        res = run_cli(args, pinned.path)
        assert res.code == 4 and words in res.err, (args, res)


def test_an_unreadable_fixture_is_4_naming_it(pinned: Repo) -> None:
    secret = pinned.path / "fixtures" / "sub" / "b.txt"
    secret.chmod(0)
    for args in (["digest"], ["digest", "--check"], ["digest", "--pin"]):
        res = unprivileged(args, pinned.path)
        assert res.code == 4 and "fixtures/sub/b.txt" in res.err, (args, res)
        assert "Traceback" not in res.err
    secret.chmod(0o644)
    (pinned.path / "fixtures" / "sub").chmod(0)
    res = unprivileged(["digest"], pinned.path)
    assert res.code == 4 and "fixtures/sub" in res.err, res
    (pinned.path / "fixtures" / "sub").chmod(0o755)


# --- the atomic write ------------------------------------------------------------

def test_pin_replaces_the_file_atomically(pinned: Repo) -> None:
    pin = pinned.path / "fixture_digest.txt"
    old = pin.read_text()
    pin.chmod(0o640)
    os.link(pin, pinned.path / "old-pin")  # a second name for the old inode
    pinned.write("fixtures/a.json", b"changed")
    assert run_cli(["digest", "--pin"], pinned.path).code == 0
    assert (pinned.path / "old-pin").read_text() == old  # not rewritten in place
    new = pin.read_text()
    assert new != old and new.endswith("\n") and new.count("\n") == 1
    assert os.stat(pin).st_mode & 0o777 == 0o640
    assert sorted(p.name for p in pinned.path.iterdir()) == [
        ".git", "fixture_digest.txt", "fixtures", "old-pin"]
    assert run_cli(["digest", "--check"], pinned.path).code == 0


def test_a_failed_pin_write_leaves_nothing_behind(pinned: Repo) -> None:
    pinned.write("pyproject.toml", '[tool.ballot_guard]\ndigest_file = "ci/pin"\n')
    (pinned.path / "ci" / "pin").mkdir(parents=True)
    (pinned.path / "ci" / "pin" / "keep").write_text("k")
    res = run_cli(["digest", "--pin"], pinned.path)
    assert res.code == 4 and "Traceback" not in res.err
    assert [p.name for p in (pinned.path / "ci").iterdir()] == ["pin"]
    assert (pinned.path / "ci" / "pin" / "keep").read_text() == "k"


def test_pin_creates_the_digest_files_folder(pinned: Repo) -> None:
    pinned.write("pyproject.toml", '[tool.ballot_guard]\ndigest_file = "ci/pins/f.txt"\n')
    assert run_cli(["digest", "--pin"], pinned.path).code == 0
    assert run_cli(["digest", "--check"], pinned.path).code == 0


def test_runs_from_a_subdirectory_on_the_whole_repository(pinned: Repo) -> None:
    res = run_cli(["digest", "--check"], pinned.path / "fixtures" / "sub")
    assert res.code == 0, res
    assert run_cli(["digest"], pinned.path / "fixtures").out == \
        run_cli(["digest"], pinned.path).out


def test_v1_drift_is_diagnosed_and_warned(pinned: Repo) -> None:
    assert run_cli(["digest", "--pin", "--format", "v1"], pinned.path).code == 0
    pinned.commit_all("v1 pin")
    pinned.write("fixtures/new.json", b"{}")
    res = run_cli(["digest", "--check"], pinned.path)
    assert res.code == 2 and "added: fixtures/new.json" in res.out
    assert "v1 digest" in res.err and "ballot-guard digest --pin" in res.err


def test_an_oversized_pin_at_rev_is_2_without_reading_it_whole(pinned: Repo) -> None:
    pinned.write("fixture_digest.txt", b"0" * (1 << 20))
    pinned.commit_all("a megabyte of pin")
    res = run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path)
    assert res.code == 2 and "too long" in res.out


def test_replace_refs_do_not_change_what_rev_reads(pinned: Repo) -> None:
    """``git replace`` is a local view (replace refs are not pushed): a fixture blob
    replaced by the pinned content must not make a drifted commit look pinned."""
    pinned.write("fixtures/a.json", b'{"id": 2}\n')  # committed with the old pin: drift
    pinned.commit_all("moved fixture, pin kept")
    assert run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path).code == 2
    moved = pinned.git("rev-parse", "HEAD:fixtures/a.json").strip()
    pinned_blob = pinned.git("rev-parse", "HEAD~1:fixtures/a.json").strip()
    pinned.git("replace", moved, pinned_blob)
    assert pinned.git("cat-file", "-p", "HEAD:fixtures/a.json") == '{"id": 1}\n'  # git's view
    res = run_cli(["digest", "--check", "--rev", "HEAD"], pinned.path)
    assert res.code == 2, res.out + res.err
    assert "fixtures/a.json" in res.out + res.err
