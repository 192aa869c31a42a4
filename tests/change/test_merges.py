"""Merges are judged on their own paths: what differs from the first parent and no
commit the merge brings in wrote (real ``git commit-tree`` and ``git merge`` merges)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ballot_guard.scope.judge import judge_merge
from testing.helpers import Repo, init_repo, run_cli
from testing.merge_support import commit_tree, merge_taking, tree_with
from testing.scope_support import BOT, adopt, scope_json

AGENTS = '[tool.ballot_guard]\nagents = ["*[bot]*"]\n'
PROP = "properties/test_retry.py"
HUMAN = "Human <h@example.com>"
STRONG = "from src.app import RETRIES\n\n\ndef test_retry():\n    assert RETRIES == 3\n"


@pytest.fixture
def reviewed(repo: Repo) -> tuple[Repo, str]:
    """Adopted; then a human strengthens the property (an oracle-only commit) and a
    behaviour commit follows.  Returns the repo and the adoption commit (the old
    property's last commit)."""
    adopted = adopt(repo, AGENTS)
    repo.write(PROP, STRONG)
    repo.commit_all("strengthen the property", author=HUMAN)
    repo.write("src/app.py", "RETRIES = 3\nBACKOFF = 2\n")
    repo.commit_all("backoff", author=HUMAN)
    return repo, adopted


def _own(repo: Repo, sha: str) -> dict:  # type: ignore[type-arg]
    """``scope --commit`` of a merge, checked against the merge's entry in the range from
    its first parent (the same paths and reasons, or no entry when it has no path)."""
    sha = repo.git("rev-parse", sha).strip()
    code, out = scope_json(repo, "--commit", sha)
    _, rng = scope_json(repo, "--range", f"{sha}^1..{sha}")
    entry = [{k: v for k, v in c.items() if k != "commit"}
             for c in rng["commits"] if c["commit"] == sha]
    paths = out["oracle"] + out["behavior"] + out["neutral"]
    assert entry == ([out] if paths else []), (entry, out)
    out["code"] = code
    return out


# --- a merge whose other parent is an ancestor ----------------------------------------------

def test_an_ancestor_parent_taking_the_old_property_is_the_merges_own_change(
        reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    sha = merge_taking(repo, [repo.head(), adopted], {PROP: adopted}, author=BOT)
    # what git's combined diff shows of it: nothing (the property equals a parent's)
    assert repo.git("diff-tree", "--cc", "--raw", "--no-commit-id", sha) == ""
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == [PROP] and out["behavior"] == []
    assert [r["rule"] for r in out["reasons"]] == [2]


def test_a_human_ancestor_merge_of_the_property_alone_is_an_oracle_change(
        reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    sha = merge_taking(repo, [repo.head(), adopted], {PROP: adopted}, author=HUMAN)
    out = _own(repo, sha)
    assert (out["code"], out["verdict"], out["oracle"]) == (0, "ok", [PROP])


def test_an_ancestor_merge_with_behaviour_too_is_mixed(reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    sha = merge_taking(repo, [repo.head(), adopted], {PROP: adopted, "src/app.py": adopted},
                       author=HUMAN)
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == [PROP] and out["behavior"] == ["src/app.py"]
    assert [r["rule"] for r in out["reasons"]] == [1]


def test_an_ancestor_merge_that_drops_a_frozen_name_is_rule_4(repo: Repo) -> None:
    adopted = adopt(repo, AGENTS)
    record = {"frozen": ["retry"], "records": {}, "history": [
        {"event": "frozen", "name": "retry", "at": "2026-01-01T00:00:00Z"}]}
    repo.write("freeze_set.json", json.dumps(record, indent=2) + "\n")
    repo.commit_all("freeze retry", author=HUMAN)
    sha = merge_taking(repo, [repo.head(), adopted], {"freeze_set.json": adopted},
                       author=HUMAN)
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == ["freeze_set.json"]
    assert {r["rule"] for r in out["reasons"]} == {4}


def _pinned_fixtures(repo: Repo) -> tuple[str, str]:
    """Adopted with a real pin; then the fixtures change and are re-pinned (human).
    Returns (the first pinned commit, the re-pinned one)."""
    repo.write("pyproject.toml", AGENTS)
    repo.write(PROP, "def test_retry():\n    assert True\n")
    repo.write("fixtures/cases.json", "[1, 2, 3]\n")
    repo.write("src/app.py", "RETRIES = 3\n")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    first = repo.commit_all("adopt", author=HUMAN)
    repo.write("fixtures/cases.json", "[1, 2, 3, 4]\n")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    return first, repo.commit_all("more cases, re-pinned", author=HUMAN)


def test_an_ancestor_merge_of_the_old_fixtures_without_their_pin_is_rule_3(repo: Repo) -> None:
    first, _ = _pinned_fixtures(repo)
    sha = merge_taking(repo, [repo.head(), first], {"fixtures/cases.json": first},
                       author=HUMAN)
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == ["fixtures/cases.json"]
    assert [r["rule"] for r in out["reasons"]] == [3]


@pytest.mark.parametrize("author,code,rules", [(HUMAN, 0, []), (BOT, 1, [2])])
def test_an_ancestor_merge_of_the_old_fixtures_and_pin_is_an_oracle_change(
        repo: Repo, author: str, code: int, rules: list[int]) -> None:
    first, _ = _pinned_fixtures(repo)
    sha = merge_taking(repo, [repo.head(), first],
                       {"fixtures/cases.json": first, "fixture_digest.txt": first},
                       author=author)
    out = _own(repo, sha)
    assert out["code"] == code and out["oracle"] == ["fixture_digest.txt",
                                                     "fixtures/cases.json"]
    assert [r["rule"] for r in out["reasons"]] == rules


def test_the_range_and_its_json_show_the_ancestor_merge(reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    sha = merge_taking(repo, [repo.head(), adopted], {PROP: adopted}, author=BOT)
    code, out = scope_json(repo, "--range", f"{adopted}..{sha}")
    assert code == 1 and out["verdict"] == "blocked"
    merge = [c for c in out["commits"] if c["commit"] == sha]
    assert len(merge) == 1 and merge[0]["oracle"] == [PROP]
    assert [r["rule"] for r in merge[0]["reasons"]] == [2]


# --- octopus merges ----------------------------------------------------------------------

def _branches(repo: Repo, base: str, *names: str) -> list[str]:
    tips = []
    for name in names:
        repo.git("checkout", "-q", "-b", name, base)
        repo.write(f"src/{name}.py", f"{name} = 1\n")
        tips.append(repo.commit_all(name, author=HUMAN))
    repo.git("checkout", "-q", "main")
    return tips


def test_a_clean_octopus_merge_has_no_path_of_its_own(reviewed: tuple[Repo, str]) -> None:
    repo, _adopted = reviewed
    base = repo.head()
    _branches(repo, base, "one", "two")
    repo.git("merge", "-q", "--no-ff", "-m", "octopus", "one", "two")
    assert len(repo.git("rev-list", "--parents", "-n1", "HEAD").split()) == 4
    out = _own(repo, "HEAD")
    assert (out["code"], out["verdict"], out["oracle"], out["behavior"]) == (0, "ok", [], [])
    code, rng = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 0 and len(rng["commits"]) == 2  # the two branch commits; the merge none


def test_an_octopus_with_an_ancestor_among_its_parents_answers_for_it(
        reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    base = repo.head()
    one, two = _branches(repo, base, "one", "two")
    sha = merge_taking(repo, [base, one, adopted, two],
                       {"src/one.py": one, "src/two.py": two, PROP: adopted}, author=BOT)
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == [PROP] and out["behavior"] == []
    assert [r["rule"] for r in out["reasons"]] == [2]


# --- ordinary merges stay clean ------------------------------------------------------------

def test_a_file_both_sides_edited_apart_is_not_the_merges_own(repo: Repo) -> None:
    """git merges the two edits of one property (and of one source file) line by line:
    the result is neither parent's, yet the merge wrote nothing of its own."""
    lines = "".join(f"# line {i}\n" for i in range(12))
    adopt(repo, AGENTS)
    repo.write(PROP, lines + "def test_retry():\n    assert True\n")
    repo.write("src/app.py", lines + "RETRIES = 3\n")
    base = repo.commit_all("longer files", author=HUMAN)
    repo.git("checkout", "-q", "-b", "side")
    repo.write(PROP, (repo.path / PROP).read_text().replace("# line 1\n", "# side\n"))
    repo.commit_all("side: property", author=HUMAN)
    repo.write("src/app.py", (repo.path / "src/app.py").read_text().replace("# line 1\n", "# s\n"))
    repo.commit_all("side: code", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.write(PROP, (repo.path / PROP).read_text().replace("# line 10\n", "# main\n"))
    repo.commit_all("main: property", author=HUMAN)
    repo.write("src/app.py", (repo.path / "src/app.py").read_text().replace("# line 10\n", "# m\n"))
    repo.commit_all("main: code", author=HUMAN)
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    text = (repo.path / PROP).read_text()
    assert "# side\n" in text and "# main\n" in text  # merged, neither parent's content
    objects = sorted(p.name for p in (repo.path / ".git/objects").rglob("*") if p.is_file())
    out = _own(repo, "HEAD")
    assert (out["code"], out["oracle"], out["behavior"]) == (0, [], [])
    code, rng = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 0 and len(rng["commits"]) == 4
    # git's merge was redone beside the repository: nothing was written into it
    assert sorted(p.name for p in (repo.path / ".git/objects").rglob("*") if p.is_file()) \
        == objects


def test_a_conflict_resolved_by_hand_is_the_merges_own(repo: Repo) -> None:
    adopt(repo, AGENTS)
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.commit_all("side", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.write("src/app.py", "RETRIES = 5\n")
    repo.commit_all("main", author=HUMAN)
    repo.git("merge", "-q", "side", check=False)
    repo.write("src/app.py", "RETRIES = 6\n")
    repo.stage()
    repo.commit("merge side")
    out = _own(repo, "HEAD")
    assert (out["code"], out["behavior"], out["oracle"]) == (0, ["src/app.py"], [])


def test_a_conflict_resolved_as_theirs_is_what_their_commit_wrote(repo: Repo) -> None:
    adopt(repo, AGENTS)
    repo.git("checkout", "-q", "-b", "side")
    repo.write(PROP, "def test_retry():\n    assert 'side'\n")
    repo.commit_all("side", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.write(PROP, "def test_retry():\n    assert 'main'\n")
    repo.commit_all("main", author=HUMAN)
    repo.git("merge", "-q", "side", check=False)
    repo.git("checkout", "--theirs", "--", PROP)
    repo.stage()
    repo.commit("merge side", author=BOT)
    out = _own(repo, "HEAD")
    assert (out["code"], out["oracle"], out["reasons"]) == (0, [], [])


def test_a_version_the_side_branch_only_carried_is_the_merges_own(
        reviewed: tuple[Repo, str]) -> None:
    """side forks before the property was strengthened, merges main in but keeps its
    old property (a resolution its own first-parent diff does not show); merging side
    back takes that old version, which no commit the merge brings in wrote."""
    repo, adopted = reviewed
    main = repo.head()
    repo.git("checkout", "-q", "-b", "side", adopted)
    repo.write("src/side.py", "x = 1\n")
    side = repo.commit_all("side work", author=HUMAN)
    keep = merge_taking(repo, [side, main], {"src/app.py": main}, branch="side")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side",
             env={**__import__("os").environ, "GIT_AUTHOR_NAME": "Claude Bot [bot]"})
    assert (repo.path / PROP).read_text() != STRONG  # git's own merge took the old one
    assert _own(repo, keep)["oracle"] == []  # side's merge did not change it on its line
    out = _own(repo, "HEAD")
    assert out["code"] == 1 and out["oracle"] == [PROP] and out["behavior"] == []
    assert [r["rule"] for r in out["reasons"]] == [2]


def test_a_merge_of_a_side_that_deleted_a_file_is_clean(reviewed: tuple[Repo, str]) -> None:
    repo, _ = reviewed
    base = repo.head()
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/extra.py", "x = 1\n")
    repo.commit_all("add", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    repo.git("checkout", "-q", "side")
    repo.remove("src/extra.py")
    repo.commit_all("remove", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side again", "side")
    assert not (repo.path / "src/extra.py").exists()
    assert judge_merge(str(repo.path), "HEAD") is None
    code, rng = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 0 and len(rng["commits"]) == 2


def test_a_merge_that_deletes_what_main_added_is_its_own(reviewed: tuple[Repo, str]) -> None:
    repo, adopted = reviewed
    repo.git("checkout", "-q", "-b", "side", adopted)
    repo.write("src/side.py", "x = 1\n")
    side = repo.commit_all("side", author=HUMAN)
    repo.git("checkout", "-q", "main")
    repo.write("properties/test_new.py", "def test_new():\n    assert True\n")
    repo.commit_all("a new property", author=HUMAN)
    sha = merge_taking(repo, [repo.head(), side],
                       {"src/side.py": side, "properties/test_new.py": None}, author=BOT)
    out = _own(repo, sha)
    assert out["code"] == 1 and out["oracle"] == ["properties/test_new.py"]


def test_tree_with_takes_each_path_from_its_revision(reviewed: tuple[Repo, str]) -> None:
    """The helper the attacks rely on, checked against git's own reading of the tree."""
    repo, adopted = reviewed
    tree = tree_with(repo, "HEAD", {PROP: adopted, "README.md": None})
    sha = commit_tree(repo, tree, ["HEAD"])
    assert repo.git("show", f"{sha}:{PROP}") == repo.git("show", f"{adopted}:{PROP}")
    assert repo.git("ls-tree", sha, "README.md") == ""
    assert repo.git("show", f"{sha}:src/app.py") == "RETRIES = 3\nBACKOFF = 2\n"


def test_a_merge_made_in_another_repository_dir(tmp_path: Path) -> None:
    """Judged from a subdirectory and a linked worktree: git's merge is redone with the
    common object store as alternates."""
    repo = init_repo(tmp_path / "repo")
    adopted = adopt(repo, AGENTS)
    repo.write(PROP, STRONG)
    repo.commit_all("strengthen", author=HUMAN)
    sha = merge_taking(repo, [repo.head(), adopted], {PROP: adopted}, author=BOT)
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"), sha)
    res = run_cli(["scope", "--commit", sha, "--json"], tmp_path / "wt" / "src")
    assert res.code == 1 and res.json()["oracle"] == [PROP]
