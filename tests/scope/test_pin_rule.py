"""Scope rule 3: fixtures are re-pinned in the same change, to a pin that matches them."""
from __future__ import annotations

import pytest

from ballot_guard import git
from ballot_guard.change.from_git import Change
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.config import Config
from ballot_guard.oracle.paths import classify
from ballot_guard.scope.judge import judge_commit, judge_patch, judge_staged
from ballot_guard.scope.pin_rule import fixtures_repinned
from ballot_guard.scope.verdict import ScopeContext, Verdict
from testing.digest_trees import article_digest
from testing.helpers import Repo, run_cli


@pytest.fixture
def project(repo: Repo) -> Repo:
    """Adopted: fixtures pinned (v2) and committed."""
    repo.write("src/app.py", "RETRIES = 3\n")
    repo.write("fixtures/cases.json", "[1, 2, 3]\n")
    repo.write("fixtures/deep/x.bin", bytes(range(10)))
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.commit_all("adopt")
    return repo


def rule3(v: Verdict) -> list[str]:
    return [r.message for r in v.reasons if r.rule == 3]


def repin(repo: Repo, *extra: str) -> None:
    assert run_cli(["digest", "--pin", *extra], repo.path).code == 0


WRONG = "sha256-v2:" + "1" * 64 + "\n"


# --- staged: each direction ------------------------------------------------------

def test_fixtures_changed_without_a_re_pin_are_blocked(project: Repo) -> None:
    project.write("fixtures/cases.json", "[1, 2, 3, 4]\n")
    project.stage()
    msgs = rule3(judge_staged(str(project.path)))
    assert len(msgs) == 1
    assert "fixtures/cases.json" in msgs[0] and "not re-pinned" in msgs[0]
    assert "ballot-guard digest --pin" in msgs[0]


def test_a_re_pin_that_does_not_match_is_blocked(project: Repo) -> None:
    project.write("fixtures/cases.json", "[1, 2, 3, 4]\n")
    project.write("fixture_digest.txt", WRONG)
    project.stage()
    msgs = rule3(judge_staged(str(project.path)))
    assert len(msgs) == 1 and "does not match" in msgs[0] and "fixture drift" in msgs[0]
    assert "modified: fixtures/cases.json" not in msgs[0]  # one line; details are elsewhere


def test_fixtures_with_their_matching_pin_are_ok(project: Repo) -> None:
    project.write("fixtures/cases.json", "[1, 2, 3, 4]\n")
    project.remove("fixtures/deep/x.bin")
    project.symlink("fixtures/latest.json", "cases.json")
    repin(project)
    project.stage()
    v = judge_staged(str(project.path))
    assert v.status == "ok", v.reasons


def test_the_pin_changed_alone_to_a_wrong_value_is_blocked(project: Repo) -> None:
    project.write("fixture_digest.txt", WRONG)
    project.stage()
    msgs = rule3(judge_staged(str(project.path)))
    assert len(msgs) == 1 and "fixture_digest.txt changed but does not match" in msgs[0]


def test_the_pin_changed_alone_to_a_matching_value_is_ok(project: Repo) -> None:
    repin(project, "--format", "v1")  # same fixtures, other format: still a matching pin
    project.stage()
    assert judge_staged(str(project.path)).status == "ok"
    repin(project)
    project.stage()
    assert judge_staged(str(project.path)).status == "ok"


def test_deleting_the_pin_alone_is_not_rule_3(project: Repo) -> None:
    """Contract (Adoption): deleting the pin is an oracle change; rule 3 does not apply to
    a deleted pin (tests/scope/test_pin_deletion.py follows it through commits, gate and ci)."""
    project.git("rm", "-q", "fixture_digest.txt")
    verdict = judge_staged(str(project.path))
    assert rule3(verdict) == [] and verdict.status == "ok"
    assert verdict.oracle == ("fixture_digest.txt",)


def test_a_path_that_differs_from_the_pack_only_by_case_is_blocked(project: Repo) -> None:
    project.write("Fixtures/cases.json", "[9]\n")
    project.stage()
    msgs = rule3(judge_staged(str(project.path)))
    assert len(msgs) == 1 and "Fixtures/cases.json" in msgs[0] and "only by case" in msgs[0]


def test_the_rule_runs_only_when_fixtures_or_pin_are_touched(project: Repo) -> None:
    project.write("fixture_digest.txt", WRONG)
    project.commit_all("a wrong pin, committed without the hook")
    project.write("src/app.py", "RETRIES = 4\n")
    project.stage()
    assert rule3(judge_staged(str(project.path))) == []
    project.write("fixtures/new.json", "{}\n")
    project.stage()
    assert rule3(judge_staged(str(project.path)))


# --- the new side is what is judged, not the working tree -----------------------------

def test_staged_is_judged_from_the_index(project: Repo) -> None:
    project.write("fixtures/cases.json", "[1, 2, 3, 4]\n")
    repin(project)
    project.stage()
    project.write("fixtures/cases.json", "unstaged edit\n")  # the working tree drifts
    assert judge_staged(str(project.path)).status == "ok"
    project.write("fixtures/cases.json", "[5]\n")
    project.stage("fixtures/cases.json")
    repin(project)  # re-pinned in the working tree only, not staged
    assert rule3(judge_staged(str(project.path)))


def test_commits_are_judged_from_their_tree(project: Repo) -> None:
    project.write("fixtures/cases.json", "[7]\n")
    bad = project.commit_all("fixture without pin")
    repin(project)
    fixed = project.commit_all("re-pin alone, matching")
    project.write("fixtures/cases.json", "[8]\n")
    repin(project)
    good = project.commit_all("fixture with its pin")
    project.write("fixture_digest.txt", WRONG)
    wrong = project.commit_all("pin alone, wrong")
    root = str(project.path)
    assert "not re-pinned" in rule3(judge_commit(root, bad))[0]
    assert rule3(judge_commit(root, fixed)) == []
    assert rule3(judge_commit(root, good)) == []
    assert "does not match" in rule3(judge_commit(root, wrong))[0]


def test_patches_are_judged_applied_to_head(project: Repo) -> None:
    root = str(project.path)
    project.write("fixtures/cases.json", "[1, 2]\n")
    repin(project)
    good = project.git("diff", "--binary", "HEAD").encode()
    unpinned = project.git("diff", "--binary", "HEAD", "--", "fixtures").encode()
    project.write("fixture_digest.txt", WRONG)
    wrong = project.git("diff", "--binary", "HEAD").encode()
    project.git("checkout", "-q", "HEAD", "--", ".")
    assert b"fixture_digest.txt" not in unpinned and b"fixture_digest.txt" in good
    assert judge_patch(root, good, label="patch good").status == "ok"
    assert "does not match" in rule3(judge_patch(root, wrong, label="patch wrong"))[0]
    assert "not re-pinned" in rule3(judge_patch(root, unpinned, label="patch unpinned"))[0]
    assert project.git("status", "--porcelain") == ""  # nothing applied to the checkout


def test_a_v1_pin_re_pinned_by_the_article_snippet_is_accepted(project: Repo) -> None:
    project.write("fixtures/cases.json", "[0]\n")
    project.write("fixture_digest.txt", article_digest(project.path / "fixtures") + "\n")
    project.stage()
    assert judge_staged(str(project.path)).status == "ok"


# --- the rule as a function of a ScopeContext ----------------------------------------

def _ctx(project: Repo, files: tuple[FileChange, ...], new: git.Snapshot,
         config: Config | None = None) -> ScopeContext:
    root = str(project.path)
    base = project.head()
    change = Change("commit", "commit x", None, base, files, (), False)
    config = config or Config()
    old = git.Snapshot(root, base)
    # as judge_change does: the rules see the change classified by the base's config
    cls = classify(root, config, change, old, lambda: new, contents=False)
    return ScopeContext(root, change, config, cls.oracle, cls.behavior, cls.neutral, False,
                        old, lambda: new)


def test_the_rule_function_with_a_built_context(project: Repo) -> None:
    root = str(project.path)
    head = git.Snapshot(root, project.head())
    fix = (FileChange("M", "fixtures/cases.json"),)
    pin = (FileChange("M", "fixture_digest.txt"),)
    assert "not re-pinned" in fixtures_repinned(_ctx(project, fix, head))[0].message
    assert fixtures_repinned(_ctx(project, fix + pin, head)) == []
    assert fixtures_repinned(_ctx(project, pin, head)) == []
    assert fixtures_repinned(_ctx(project, (FileChange("M", "src/app.py"),), head)) == []
    renamed = (FileChange("R", "elsewhere/cases.json", old_path="fixtures/cases.json"),)
    assert fixtures_repinned(_ctx(project, renamed, head))[0].rule == 3
    moved = Config(fixtures_dir="data", digest_file="data.pin")  # the base's config decides
    assert fixtures_repinned(_ctx(project, fix, head, moved)) == []
