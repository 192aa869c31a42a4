"""Every source of a change, on real repositories: staged, commit, range, patch."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ballot_guard.scope.judge import judge_staged
from ballot_guard.vocabulary import SOURCES, Source
from testing.helpers import Repo, init_repo, run_bg
from testing.scope_support import adopt, judged_as, scope_json
from testing.scope_support import scope as run_scope

# --- staged ---------------------------------------------------------------------------------

def test_staged_mixed_change_is_blocked_and_tells_how_to_split(repo: Repo) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 1\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    res = run_scope(repo)
    assert res.code == 1
    assert "rule 1" in res.out
    assert "properties/test_retry.py" in res.out and "src/app.py" in res.out
    assert "ballot-guard split" in res.out
    assert "git restore --staged -- src/app.py" in res.out


def test_staged_is_the_default_and_the_flag(repo: Repo) -> None:
    adopt(repo)
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    assert scope_json(repo) == scope_json(repo, "--staged")
    code, out = scope_json(repo)
    assert code == 0 and out == {"verdict": "ok", "oracle": [], "behavior": ["src/app.py"],
                                 "neutral": [], "reasons": []}


def test_staged_is_judged_as_staged_not_the_working_tree(repo: Repo) -> None:
    adopt(repo)
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    repo.write("properties/test_retry.py", "# unstaged edit\n")  # not staged: not judged
    code, out = scope_json(repo)
    assert code == 0 and out["oracle"] == []
    repo.stage("properties/test_retry.py")
    assert scope_json(repo)[0] == 1


def test_staged_honours_git_index_file(repo: Repo, monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    adopt(repo)
    index = tmp_path / "other-index"
    env = dict(os.environ, GIT_INDEX_FILE=str(index))
    repo.git("read-tree", "HEAD", env=env)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.git("add", "-A", env=env)
    assert scope_json(repo)[0] == 0  # the repository's own index holds nothing
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    assert scope_json(repo)[0] == 1


def test_unborn_head_is_judged_against_the_empty_tree_and_unjudged(repo: Repo) -> None:
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/app.py", "x\n")
    repo.write("fixture_digest.txt", "pin\n")
    repo.stage()
    code, out = scope_json(repo)
    assert code == 0 and out["verdict"] == "unjudged"
    assert out["oracle"] == ["fixture_digest.txt", "properties/test_a.py"]
    assert out["behavior"] == ["src/app.py"]
    res = run_scope(repo)
    assert res.code == 0 and "unjudged" in res.out


def test_empty_staged_change_is_ok(repo: Repo) -> None:
    adopt(repo)
    assert scope_json(repo) == (0, {"verdict": "ok", "oracle": [], "behavior": [],
                                    "neutral": [], "reasons": []})


# --- commit and range ------------------------------------------------------------------------

def test_commit_is_judged_against_its_first_parent(repo: Repo) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    sha = repo.commit_all("mixed")
    code, out = scope_json(repo, "--commit", sha)
    assert code == 1 and [r["rule"] for r in out["reasons"]] == [1]
    assert scope_json(repo, "--commit", "HEAD~1")[1]["verdict"] == "unjudged"  # adds the pin


def test_root_commit_is_against_the_empty_tree(repo: Repo) -> None:
    sha = adopt(repo)
    code, out = scope_json(repo, "--commit", sha)
    assert code == 0 and out["verdict"] == "unjudged"
    assert "properties/test_retry.py" in out["oracle"] and out["behavior"] == ["src/app.py"]


def test_merge_commit_is_judged_on_its_own_paths(repo: Repo) -> None:
    """What the merged branch's commit wrote is that commit's (judged on its own); the
    merge answers for nothing else, so it is ok and names no path."""
    adopt(repo)
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/other.py", "x\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("properties/test_retry.py", "# edit\n")
    repo.commit_all("oracle only")
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    code, out = scope_json(repo, "--commit", "HEAD")
    assert (code, out["verdict"], out["behavior"], out["oracle"]) == (0, "ok", [], [])


def test_range_judges_each_non_merge_commit_oldest_first(repo: Repo) -> None:
    base = adopt(repo)
    repo.write("src/app.py", "RETRIES = 4\n")
    first = repo.commit_all("behaviour")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/side.py", "x\n")
    side = repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 5\n")
    mixed = repo.commit_all("mixed")
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    code, out = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 1 and out["verdict"] == "blocked"
    shas = [c["commit"] for c in out["commits"]]
    assert set(shas) == {first, side, mixed} and shas.index(first) < shas.index(mixed)
    by = {c["commit"]: c for c in out["commits"]}
    assert by[mixed]["verdict"] == "blocked" and by[first]["verdict"] == "ok"
    assert by[side]["verdict"] == "ok"
    assert scope_json(repo, "--range", f"{base}..{first}") == (0, {
        "verdict": "ok", "commits": [{"commit": first, "verdict": "ok", "oracle": [],
                                      "behavior": ["src/app.py"], "neutral": [],
                                      "reasons": []}]})


def test_range_before_adoption_is_unjudged(repo: Repo) -> None:
    repo.write("src/app.py", "x\n")
    root = repo.commit_all("first")
    repo.write("properties/test_a.py", "x\n")
    repo.write("src/app.py", "y\n")
    repo.write("fixture_digest.txt", "pin\n")
    pin = repo.commit_all("adopt, mixed as a first import is")
    repo.write("src/app.py", "z\n")
    repo.write("properties/test_a.py", "z\n")
    after = repo.commit_all("mixed after adoption")
    code, out = scope_json(repo, "--range", f"{root}..HEAD")
    assert code == 1
    assert [(c["commit"], c["verdict"]) for c in out["commits"]] == [
        (pin, "unjudged"), (after, "blocked")]
    res = run_scope(repo, "--range", f"{root}..{pin}")
    assert res.code == 0 and "unjudged" in res.out
    assert scope_json(repo, "--range", f"{root}..{pin}")[1]["verdict"] == "unjudged"


def test_empty_range_is_ok(repo: Repo) -> None:
    adopt(repo)
    assert scope_json(repo, "--range", "HEAD..HEAD") == (0, {"verdict": "ok", "commits": []})


# --- patch -----------------------------------------------------------------------------------

def _diff(repo: Repo, *args: str) -> str:
    """The staged change as a diff, then the index put back to HEAD."""
    out = repo.git("diff", "--cached", "--binary", *args)
    repo.git("reset", "-q", "--hard")
    return out


def test_patch_file_and_stdin_are_judged_as_if_applied(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    diff = _diff(repo)
    f = tmp_path / "fix.diff"
    f.write_text(diff)
    res = run_scope(repo, "--patch", str(f))
    assert res.code == 1 and "rule 1" in res.out and "--include=properties/test_retry.py" in res.out
    code, out = scope_json(repo, "--patch", str(f))
    assert code == 1 and out["oracle"] == ["properties/test_retry.py"]
    res = run_scope(repo, "--patch", "-", "--json", stdin=diff)
    assert res.code == 1 and res.json()["behavior"] == ["src/app.py"]
    assert repo.git("status", "--porcelain") == ""  # nothing applied to the user's repo


def test_patch_through_a_real_subprocess_stdin(repo: Repo) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.stage()
    diff = _diff(repo)
    res = run_bg(["scope", "--patch", "-", "--agent", "--json"], repo.path, input=diff.encode())
    assert res.code == 1 and [r["rule"] for r in res.json()["reasons"]] == [2]


def test_empty_patch_is_an_empty_change(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    f = tmp_path / "empty.diff"
    f.write_text("")
    assert scope_json(repo, "--patch", str(f)) == (0, {"verdict": "ok", "oracle": [],
                                                       "behavior": [], "neutral": [],
                                                       "reasons": []})


def test_patch_that_needs_content_and_does_not_apply_is_4(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, "[project]\nname = 'x'\n")
    repo.write("pyproject.toml", "[project]\nname = 'y'\n")
    repo.stage()
    diff = _diff(repo)
    repo.write("pyproject.toml", "[project]\nname = 'changed meanwhile'\n")
    repo.commit_all("moved on")
    f = tmp_path / "stale.diff"
    f.write_text(diff)
    res = run_scope(repo, "--patch", str(f))
    assert res.code == 4 and "does not apply" in res.err and "pyproject.toml" in res.err


def test_patch_without_content_rules_is_judged_from_headers(repo: Repo, tmp_path: Path) -> None:
    """A stale patch of plain paths needs no apply: its headers suffice."""
    adopt(repo)
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    diff = _diff(repo)
    repo.write("src/app.py", "RETRIES = 9\n")
    repo.commit_all("moved on")
    f = tmp_path / "stale.diff"
    f.write_text(diff)
    assert scope_json(repo, "--patch", str(f))[0] == 0


def test_binary_patch_without_data_is_judged_from_headers(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    repo.write("src/logo.png", b"\x89PNG\0\1\2")
    repo.write("properties/blob.bin", b"\0\1\2")
    repo.stage()
    diff = repo.git("diff", "--cached")  # no --binary: "Binary files ... differ"
    repo.git("reset", "-q", "--hard")
    assert "Binary files" in diff
    f = tmp_path / "bin.diff"
    f.write_text(diff)
    code, out = scope_json(repo, "--patch", str(f))
    assert code == 1 and out["oracle"] == ["properties/blob.bin"]
    assert out["behavior"] == ["src/logo.png"]


# --- kinds of file change, on every source ---------------------------------------------------

def _judge(repo: Repo, source: Source, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    """Judge what is staged now through one source."""
    return scope_json(repo, *judged_as(repo, source, tmp_path))[1]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("old, new, oracle, behavior", [
    ("properties/test_retry.py", "src/retry_check.py", "properties/test_retry.py",
     "src/retry_check.py"),  # out of the oracle, into behaviour code
    ("src/app.py", "properties/test_app.py", "properties/test_app.py", "src/app.py"),  # back
])
def test_a_rename_across_the_oracle_counts_both_sides(repo: Repo, source: str, tmp_path: Path,
                                                      old: str, new: str, oracle: str,
                                                      behavior: str) -> None:
    adopt(repo)
    repo.git("mv", old, new)
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked"
    assert out["oracle"] == [oracle] and out["behavior"] == [behavior]


@pytest.mark.parametrize("source", SOURCES)
def test_deletion_of_an_oracle_file_counts(repo: Repo, source: str, tmp_path: Path) -> None:
    adopt(repo)
    repo.git("rm", "-q", "properties/test_retry.py")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and out["oracle"] == ["properties/test_retry.py"]


@pytest.mark.parametrize("source", SOURCES)
def test_mode_only_change_counts(repo: Repo, source: str, tmp_path: Path) -> None:
    adopt(repo)
    repo.git("update-index", "--chmod=+x", "properties/test_retry.py")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage("src/app.py")
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and out["oracle"] == ["properties/test_retry.py"]


@pytest.mark.parametrize("source", SOURCES)
def test_binary_file_counts(repo: Repo, source: str, tmp_path: Path) -> None:
    adopt(repo)
    repo.write("properties/data.bin", bytes(range(256)))
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and out["oracle"] == ["properties/data.bin"]


@pytest.mark.parametrize("source", SOURCES)
def test_symlink_counts(repo: Repo, source: str, tmp_path: Path) -> None:
    adopt(repo)
    repo.symlink("properties/test_link.py", "../src/app.py")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and out["oracle"] == ["properties/test_link.py"]


@pytest.mark.parametrize("source", SOURCES)
def test_file_replaced_by_symlink_is_a_type_change(repo: Repo, source: str,
                                                   tmp_path: Path) -> None:
    adopt(repo)
    repo.remove("properties/test_retry.py")
    repo.symlink("properties/test_retry.py", "/etc/hostname")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and out["oracle"] == ["properties/test_retry.py"]


@pytest.mark.parametrize("source", SOURCES)
def test_submodule_gitlink_counts(repo: Repo, source: str, tmp_path: Path) -> None:
    sub = init_repo(tmp_path / "sub")
    sub.write("x", "x\n")
    sub_sha = sub.commit_all("sub")
    adopt(repo)
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_sha},fixtures/vendored")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage("src/app.py")
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked" and "fixtures/vendored" in out["oracle"]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", [
    "properties/test with space.py",
    'properties/test_"quoted".py',
    "properties/test_caf\u00e9 menu.py",
    "properties/test_tab\there.py",
    "properties/test_new\nline.py",
    "properties/test_back\\slash.py",
], ids=["space", "quote", "unicode", "tab", "newline", "backslash"])
def test_odd_path_names_round_trip(repo: Repo, source: str, name: str, tmp_path: Path) -> None:
    adopt(repo)
    repo.write(name, "x\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    out = _judge(repo, source, tmp_path)
    assert out["verdict"] == "blocked"
    assert out["oracle"] == [name] and out["behavior"] == ["src/app.py"]


def test_non_utf8_path_bytes_round_trip(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    raw = os.fsdecode(b"properties/test_\xff.py")
    repo.write(raw, "x\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    v = judge_staged(str(repo.path))
    assert v.status == "blocked" and v.oracle == (raw,)


# --- exit codes ------------------------------------------------------------------------------

def test_exit_codes_of_scope(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    assert run_scope(repo).code == 0
    assert run_scope(repo, "--commit", "no-such-rev").code == 4
    assert run_scope(repo, "--range", "HEAD").code == 4
    assert run_scope(repo, "--range", "nope..HEAD").code == 4
    assert run_scope(repo, "--patch", str(tmp_path / "missing.diff")).code == 4
    assert run_scope(repo, "--commit", "HEAD", "--staged").code == 4  # usage error
    assert run_scope(repo, "--commit", "HEAD", "--agent").code == 4
    assert run_scope(repo, "--bogus").code == 4
    assert run_scope(repo, "--help").code == 0
    not_repo = tmp_path / "plain"
    not_repo.mkdir()
    res = run_scope(not_repo)
    assert res.code == 4 and "not a git repository" in res.err
    repo.write("pyproject.toml", "[tool.ballot_guard]\nbogus = 1\n")
    repo.commit_all("bad config")
    res = run_scope(repo)
    assert res.code == 4 and "bogus" in res.err
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    res = run_scope(repo)  # mixed (1), but the base's config cannot judge: 4 comes first
    assert res.code == 4 and "bogus" in res.err and res.out == ""
    repo.commit("mixed on a broken config")
    for args in (["--commit", "HEAD"], ["--range", "HEAD~2..HEAD"]):
        res = run_scope(repo, *args)
        assert res.code == 4 and "bogus" in res.err and res.err.count("\n") == 1, args


def test_json_prints_one_object_and_nothing_else(repo: Repo) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    res = run_scope(repo, "--json")
    assert res.code == 1 and res.err == ""
    assert set(res.json()) == {"verdict", "oracle", "behavior", "neutral", "reasons"}


def test_scope_in_a_subdirectory_judges_the_whole_repo(repo: Repo) -> None:
    adopt(repo)
    repo.write("properties/test_retry.py", "# edit\n")
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    assert scope_json(repo.path / "src")[0] == 1


def test_scope_imports_nothing_beyond_the_stdlib_and_its_dependencies(repo: Repo) -> None:
    """The commit-time path: no GitPython, no other third-party package."""
    adopt(repo)
    code = ("import sys; from ballot_guard.main import main; rc = main(['scope']); "
            "extra = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) "
            "- {'ballot_guard', 'pathspec', 'tomli', '__main__', '_distutils_hack', "
            "'__editable___ballot_guard_0_1_0_finder'}; "
            "assert not extra, extra; raise SystemExit(rc)")
    proc = subprocess.run([os.sys.executable, "-c", code], cwd=repo.path, capture_output=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def test_range_judges_what_an_evil_merge_adds_itself(repo: Repo) -> None:
    base = adopt(repo)
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/side.py", "x\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("src/main.py", "y\n")
    repo.commit_all("main")
    repo.git("merge", "-q", "--no-ff", "-m", "clean merge", "side")
    code, out = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 0 and len(out["commits"]) == 2  # a clean merge adds nothing of its own
    repo.git("checkout", "-q", "-b", "side2", base)
    repo.write("src/side2.py", "x\n")
    repo.commit_all("side2")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side2")
    repo.write("properties/test_retry.py", "# weakened in the merge\n")
    repo.write("src/app.py", "RETRIES = 9\n")
    repo.stage()
    evil = repo.commit("merge side2")
    code, out = scope_json(repo, "--range", f"{base}..HEAD")
    assert code == 1
    merge = [c for c in out["commits"] if c["commit"] == evil]
    assert merge and merge[0]["verdict"] == "blocked"
    assert merge[0]["oracle"] == ["properties/test_retry.py"]
    assert merge[0]["behavior"] == ["src/app.py"]  # not src/side2.py: that came from a parent


def test_patch_in_a_repository_without_a_commit_is_unjudged(repo: Repo, tmp_path: Path) -> None:
    f = tmp_path / "p.diff"
    f.write_text("--- /dev/null\n+++ b/properties/test_a.py\n@@ -0,0 +1 @@\n+x\n"
                 "--- /dev/null\n+++ b/src/app.py\n@@ -0,0 +1 @@\n+y\n")
    code, out = scope_json(repo, "--patch", str(f), "--agent")
    assert (code, out["verdict"]) == (0, "unjudged")
    assert out["oracle"] == ["properties/test_a.py"] and out["behavior"] == ["src/app.py"]


def test_patch_from_a_subdirectory_names_paths_from_the_root(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    f = tmp_path / "p.diff"
    f.write_text("--- a/properties/test_retry.py\n+++ b/properties/test_retry.py\n"
                 "@@ -1,2 +1,2 @@\n def test_retry():\n-    assert True\n+    assert 1\n")
    code, out = scope_json(repo.path / "src", "--patch", str(f), "--agent")
    assert code == 1 and out["oracle"] == ["properties/test_retry.py"]


def test_patch_needing_content_is_applied_to_heads_tree_not_the_worktree(
        repo: Repo, tmp_path: Path) -> None:
    """The temporary index holds HEAD: a dirty working tree does not change the verdict."""
    adopt(repo, "[project]\nname = 'x'\n")
    repo.write("pyproject.toml", "[project]\nname = 'y'\n")
    repo.stage()
    diff = repo.git("diff", "--cached")
    repo.git("reset", "-q", "--hard")
    repo.write("pyproject.toml", "[project]\nname = 'dirty, unstaged'\n")
    f = tmp_path / "p.diff"
    f.write_text(diff)
    code, out = scope_json(repo, "--patch", str(f))
    assert code == 0 and out["behavior"] == ["pyproject.toml"]
    assert (repo.path / "pyproject.toml").read_text() == "[project]\nname = 'dirty, unstaged'\n"


def test_split_advice_for_a_table_file_on_both_sides(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, "[project]\nname = 'x'\n[tool.ballot_guard]\nrepeats = 2\n")
    repo.write("pyproject.toml", "[project]\nname = 'y'\n[tool.ballot_guard]\nrepeats = 3\n")
    repo.stage()
    res = run_scope(repo)
    assert res.code == 1 and "only `ballot-guard split` separates them" in res.out
    f = tmp_path / "both.diff"
    f.write_text(repo.git("diff", "--cached"))
    repo.git("reset", "-q", "--hard")
    res = run_scope(repo, "--patch", str(f))
    assert res.code == 1 and f"git apply --index {f}" in res.out and "ballot-guard split" in res.out
