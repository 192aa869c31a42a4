"""split --head: an unpushed mixed HEAD commit becomes oracle commit + behaviour commit."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import Repo, git, run_bg, run_cli
from tests.test_split_support import base_repo, names, state, tree

AGENT = "Code Bot <bot@example.com>"


@pytest.fixture
def mixed_head(repo: Repo) -> Repo:
    base_repo(repo)
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 4 == 4\n")
    repo.write("src/billing.py", "RETRIES = 4\n")
    repo.write("README.md", "# retries are 4\n")
    repo.stage()
    repo.git("commit", "-q", "--no-verify", "--author", AGENT,
             "--date", "2025-06-01T12:34:56+0200",
             "-m", "Raise the retry cap\n\nBody line.\n\nCo-authored-by: Helper <h@example.com>")
    return repo


def test_head_is_rewritten_into_two_commits(mixed_head: Repo) -> None:
    repo = mixed_head
    original = repo.head()
    parent = repo.git("rev-parse", "HEAD^").strip()
    repo.write("src/ledger.py", "LEDGER = ['unstaged']\n")
    repo.write("src/billing.py", "RETRIES = 5\n")
    repo.git("add", "src/billing.py")  # a staged edit on top
    repo.write("notes.txt", "untracked\n")
    before = state(repo)

    r = run_cli(["split", "--head"], repo.path)

    assert r.code == 0, r.err
    behaviour, oracle = repo.head(), repo.git("rev-parse", "HEAD^").strip()
    assert repo.git("rev-parse", "HEAD~2").strip() == parent
    assert names(repo, "diff-tree", "-r", parent, oracle) == {"properties/test_retry.py"}
    assert names(repo, "diff-tree", "-r", oracle, behaviour) == {"src/billing.py", "README.md"}
    assert tree(repo, behaviour) == tree(repo, original)
    for sha in (oracle, behaviour):
        assert repo.git("log", "-1", "--format=%an <%ae>|%ad", "--date=raw", sha).strip() == \
            f"{AGENT}|1748774096 +0200"
    assert repo.git("log", "-1", "--format=%B", behaviour) == \
        repo.git("log", "-1", "--format=%B", original)
    msg = repo.git("log", "-1", "--format=%B", oracle)
    assert msg.startswith("Oracle part of: Raise the retry cap\n\nBody line.")
    assert "Co-authored-by: Helper <h@example.com>" in msg
    after = state(repo)
    assert after["files"] == before["files"] and after["index"] == before["index"]
    assert after["status"] == before["status"]
    assert "oracle commit" in r.out and "behaviour commit" in r.out


def test_head_with_message_keeps_co_authors(mixed_head: Repo) -> None:
    r = run_cli(["split", "--head", "-m", "Tighten the retry property"], mixed_head.path)
    assert r.code == 0, r.err
    msg = mixed_head.git("log", "-1", "--format=%B", "HEAD^")
    assert msg.strip() == "Tighten the retry property\n\nCo-authored-by: Helper <h@example.com>"


def test_each_new_commit_passes_scope(mixed_head: Repo) -> None:
    assert run_cli(["scope", "--commit", "HEAD"], mixed_head.path).code == 1
    assert run_cli(["split", "--head"], mixed_head.path).code == 0
    for rev in ("HEAD^", "HEAD"):
        r = run_cli(["scope", "--commit", rev], mixed_head.path)
        assert r.code == 0, r.out


def refused(repo: Repo, *args: str, code: int = 4) -> str:
    before = state(repo)
    r = run_cli(["split", *args], repo.path)
    assert r.code == code, (r.out, r.err)
    assert state(repo) == before
    return r.err + r.out


def test_pushed_head_is_refused(mixed_head: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    mixed_head.git("remote", "add", "origin", str(remote))
    mixed_head.git("push", "-q", "origin", "main")
    assert "already pushed (origin/main)" in refused(mixed_head, "--head")


def test_root_commit_is_refused(repo: Repo) -> None:
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/a.py", "y\n")
    repo.commit_all("everything at once")
    assert "root commit" in refused(repo, "--head")


def test_merge_commit_is_refused(mixed_head: Repo) -> None:
    repo = mixed_head
    repo.git("checkout", "-q", "-b", "side", "HEAD^")
    repo.write("docs/side.md", "side\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    assert "merge commit" in refused(repo, "--head")


def test_no_head_is_refused_for_both_modes(repo: Repo) -> None:
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/a.py", "y\n")
    repo.stage()
    assert "no commit yet" in refused(repo)
    assert "no commit yet" in refused(repo, "--head")


def test_not_mixed_head_is_left_alone(repo: Repo) -> None:
    base_repo(repo)
    repo.write("src/billing.py", "RETRIES = 4\n")
    repo.write("README.md", "# neutral\n")
    repo.commit_all("behaviour only")
    assert "nothing to split" in refused(repo, "--head", code=0)


def test_cli_staged_split_as_a_user_types_it(repo: Repo) -> None:
    base_repo(repo)
    repo.write("pyproject.toml", '[project]\nname = "billing"\n')
    repo.commit_all("pyproject")
    repo.write("pyproject.toml",
               '[project]\nname = "billing"\nversion = "2"\n\n[tool.ballot_guard]\nrepeats = 3\n')
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 9\n")
    repo.write("src/billing.py", "RETRIES = 9\n")
    repo.stage()
    assert run_bg(["scope"], repo.path).code == 1
    r = run_bg(["split"], repo.path)
    assert r.code == 0, r.err
    assert "pyproject.toml: split by table" in r.out
    assert "src/billing.py" in r.out
    assert names(repo, "diff", "--cached") == {"pyproject.toml", "src/billing.py"}
    assert run_bg(["scope", "--commit", "HEAD"], repo.path).code == 0
    assert run_bg(["scope"], repo.path).code == 0  # the rest, judged by the new HEAD's config


def test_cli_usage_errors(repo: Repo) -> None:
    base_repo(repo)
    assert run_cli(["split", "--bogus"], repo.path).code == 4
    assert run_cli(["split", "-m", " "], repo.path).code == 4
    r = run_cli(["split"], repo.path)
    assert r.code == 0 and "nothing to split" in r.out
