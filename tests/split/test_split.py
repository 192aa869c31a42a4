"""split of a staged change: the oracle part is committed alone, the rest stays staged."""
from __future__ import annotations

import os
from typing import Any

import pytest

from ballot_guard.errors import CannotJudge
from ballot_guard.split.split import Outcome, Sides, default_classifier, split_staged
from testing.helpers import Repo, run_cli
from testing.split_support import (
    MIXED,
    NO_HEAD,
    base_repo,
    index,
    names,
    stage,
    state,
    tree,
    unchanged,
)

CLASSIFY: Any = None


def split(repo: Repo, **kw: Any) -> Outcome:
    return split_staged(str(repo.path), classify=kw.pop("classify", CLASSIFY), **kw)


@pytest.fixture
def base(repo: Repo) -> Repo:
    return base_repo(repo)


def test_mixed_change_commits_the_oracle_part_and_leaves_the_rest_staged(base: Repo) -> None:
    repo = base
    old_head = repo.head()
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 3 == 3\n")
    repo.write("properties/test_new.py", "def test_new():\n    pass\n")
    repo.write("src/billing.py", "RETRIES = 4\n")
    repo.write("docs/notes.md", "why\n")
    repo.stage()
    repo.write("src/ledger.py", "LEDGER = ['unstaged']\n")  # unstaged edit
    repo.write("scratch.txt", "untracked\n")
    index_before = index(repo)
    files_before = state(repo)["files"]

    out = split(repo)

    head = repo.head()
    assert out.oracle_commit == head != old_head
    assert repo.git("rev-parse", "HEAD^").strip() == old_head
    assert names(repo, "diff-tree", "-r", "HEAD^", "HEAD") == {
        "properties/test_retry.py", "properties/test_new.py"}
    assert names(repo, "diff", "--cached") == {"src/billing.py", "docs/notes.md"}
    assert index(repo) == index_before
    assert state(repo)["files"] == files_before
    assert names(repo, "diff") == {"src/ledger.py"}
    assert repo.git("ls-files", "--others", "--exclude-standard").split() == ["scratch.txt"]
    assert repo.git("log", "-1", "--format=%s").startswith("Oracle part of a split change: ")
    # the oracle commit's tree is HEAD's with exactly the oracle entries updated
    want = tree(repo, old_head)
    want.update({p: index_before[p] for p in ("properties/test_retry.py",
                                              "properties/test_new.py")})
    assert tree(repo, "HEAD") == want
    assert run_cli(["scope", "--commit", "HEAD"], repo.path).code == 0
    assert run_cli(["scope"], repo.path).code == 0


def test_message_option_and_branch_reflog(base: Repo) -> None:
    repo = base
    repo.write("fixtures/cases.json", "[1]\n")
    repo.write("src/billing.py", "RETRIES = 5\n")
    repo.stage()
    split(repo, message="Re-pin the cases\n\nreviewed by a human")
    assert repo.git("log", "-1", "--format=%B").strip() == "Re-pin the cases\n\nreviewed by a human"
    assert repo.git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert "ballot-guard split" in repo.git("reflog", "-1", "--format=%gs", "main")


def test_not_mixed_commits_nothing(base: Repo) -> None:
    repo = base
    stage(repo, {"properties/test_retry.py": "changed\n", "README.md": "# neutral rides along\n"})
    with unchanged(repo):
        out = split(repo)
        assert out.oracle_commit is None and out.sides.oracle and not out.sides.behavior


def test_no_head_is_refused(repo: Repo) -> None:
    stage(repo, NO_HEAD)
    with unchanged(repo), pytest.raises(CannotJudge, match="no commit yet"):
        split(repo)


def test_rename_across_the_boundary_becomes_add_and_delete(base: Repo) -> None:
    repo = base
    old_head = repo.head()
    repo.git("mv", "properties/test_retry.py", "src/retry_check.py")
    repo.stage()
    before = index(repo)
    split(repo)
    assert repo.git("diff-tree", "-r", "--no-renames", "--name-status", "HEAD^", "HEAD") == \
        "D\tproperties/test_retry.py\n"
    assert repo.git("diff", "--cached", "--no-renames", "--name-status") == \
        "A\tsrc/retry_check.py\n"
    assert index(repo) == before and repo.git("rev-parse", "HEAD^").strip() == old_head


def test_rename_the_other_way(base: Repo) -> None:
    repo = base
    repo.git("mv", "src/ledger.py", "properties/test_ledger.py")
    repo.stage()
    split(repo)
    assert repo.git("diff-tree", "-r", "--no-renames", "--name-status", "HEAD^", "HEAD") == \
        "A\tproperties/test_ledger.py\n"
    assert repo.git("diff", "--cached", "--no-renames", "--name-status") == "D\tsrc/ledger.py\n"


def test_deletions_on_both_sides(base: Repo) -> None:
    repo = base
    repo.git("rm", "-q", "fixtures/cases.json", "src/ledger.py")
    split(repo)
    assert repo.git("diff-tree", "-r", "--name-status", "HEAD^", "HEAD") == \
        "D\tfixtures/cases.json\n"
    assert repo.git("diff", "--cached", "--name-status") == "D\tsrc/ledger.py\n"
    assert not (repo.path / "fixtures/cases.json").exists()


def test_exec_bit_symlink_and_gitlink_are_kept(base: Repo) -> None:
    repo = base
    repo.write("properties/run.sh", "#!/bin/sh\n", mode=0o755)
    repo.symlink("fixtures/latest.json", "cases.json")
    repo.write("src/tool.sh", "#!/bin/sh\n", mode=0o755)
    repo.stage()
    sub = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},properties/vendored")
    repo.git("update-index", "--chmod=+x", "fixtures/cases.json")  # a mode-only change
    before = index(repo)
    split(repo)
    t = tree(repo, "HEAD")
    assert t["properties/run.sh"][0] == "100755"
    assert t["fixtures/latest.json"][0] == "120000"
    assert t["properties/vendored"] == ("160000", sub)
    assert t["fixtures/cases.json"][0] == "100755"
    assert "src/tool.sh" not in t
    assert index(repo) == before
    assert names(repo, "diff", "--cached") == {"src/tool.sh"}
    assert os.readlink(repo.path / "fixtures/latest.json") == "cases.json"


def test_neutral_stays_with_behaviour(base: Repo) -> None:
    repo = base
    stage(repo, {**MIXED, "README.md": "# changed too\n"})
    out = split(repo)
    assert out.sides.neutral == {"README.md"}
    assert names(repo, "diff-tree", "-r", "HEAD^", "HEAD") == {"properties/test_retry.py"}
    assert names(repo, "diff", "--cached") == {"src/billing.py", "README.md"}


def test_a_failing_step_changes_nothing(base: Repo, monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Any) -> None:
    repo = base
    stage(repo, MIXED)
    before = state(repo)
    # no identity at all: git commit-tree refuses, after the tree was built
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    for var in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{var}_NAME")
        monkeypatch.delenv(f"GIT_{var}_EMAIL")
    monkeypatch.setenv("EMAIL", "")
    with pytest.raises(CannotJudge, match="commit-tree"):
        split(repo)
    assert state(repo) == before


def test_head_moving_underneath_is_refused(base: Repo) -> None:
    repo = base
    stage(repo, MIXED)

    def racing(root: str, cfg: Any, b: str, deltas: Any, new: Any) -> Any:
        sides = default_classifier(root, cfg, b, deltas, new)
        other = repo.git("commit-tree", f"{b}^{{tree}}", "-p", b, "-m", "elsewhere").strip()
        repo.git("update-ref", "HEAD", other)
        return sides

    idx = repo.git("ls-files", "-s", "-z")
    with pytest.raises(CannotJudge, match="HEAD could not be moved"):
        split(repo, classify=racing)
    assert repo.git("log", "-1", "--format=%s").strip() == "elsewhere"
    assert repo.git("ls-files", "-s", "-z") == idx


def test_file_replaced_by_directory_across_the_boundary_is_refused(base: Repo) -> None:
    repo = base
    repo.remove("src/ledger.py")
    repo.write("src/ledger.py/properties_like.py", "x\n")
    repo.stage()

    def odd(root: str, cfg: Any, b: str, deltas: Any, new: Any) -> Any:
        return Sides(frozenset({"src/ledger.py/properties_like.py"}),
                     frozenset({"src/ledger.py"}), frozenset())

    with unchanged(repo), pytest.raises(CannotJudge, match="file and a directory"):
        split(repo, classify=odd)


def test_merge_in_progress_is_refused(base: Repo) -> None:
    repo = base
    stage(repo, MIXED)
    (repo.path / ".git" / "MERGE_HEAD").write_text(repo.head() + "\n")
    with unchanged(repo), pytest.raises(CannotJudge, match="merge is in progress"):
        split(repo)


def test_detached_head(base: Repo) -> None:
    repo = base
    repo.git("checkout", "-q", "--detach")
    stage(repo, MIXED)
    old = repo.head()
    split(repo)
    assert repo.git("rev-parse", "HEAD^").strip() == old
    assert repo.git("rev-parse", "main").strip() == old
