"""Scope rule 5 through real sources: staged, commit, range, patch; agent and human."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.scope.tamper_rule import _FROM_CHECKOUT, _quiet
from testing.helpers import Repo, adopted_repo, init_repo, run_cli
from testing.hookutil import bare_remote, push
from testing.scope_support import BOT, adopt
from tests.scope.test_tamper import TECHNIQUES

AGENTS = '[tool.ballot_guard]\nagents = ["*[bot]*"]\n'
WHY = "behaviour code reaches into the judge at run time (judge tampering)"


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    repo.write("src/pkg/__init__.py", "import builtins as _b\n\nVALUE = 1\n")
    repo.commit_all("package")
    return repo


def _scope(repo: Repo, *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    res = run_cli(["scope", *args, "--json"], repo.path)
    return res.code, res.json(), res.err


def _rule5(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["message"] for r in doc["reasons"] if r["rule"] == 5]


TAMPER = "import builtins as _b\n\nVALUE = 1\n_b.sorted = lambda xs: list(xs)\n"


def test_staged_agent_change_is_blocked_naming_path_and_line(project: Repo) -> None:
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    code, doc, _ = _scope(project, "--agent")
    assert code == 1 and doc["verdict"] == "blocked"
    assert _rule5(doc) == [f"src/pkg/__init__.py:4: assigns to builtins.sorted: {WHY}"]


def test_staged_human_change_is_a_warning_only(project: Repo) -> None:
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    code, doc, err = _scope(project)
    assert code == 0 and doc["verdict"] == "ok" and doc["reasons"] == []
    assert err == ("ballot-guard: warning: rule 5 (not blocking: a human change): "
                   f"src/pkg/__init__.py:4: assigns to builtins.sorted: {WHY}\n")


def test_staged_change_by_an_agent_identity_is_blocked(project: Repo,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Coder [bot]")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "bot@example.com")
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    code, doc, _ = _scope(project)
    assert code == 1 and len(_rule5(doc)) == 1


def test_the_staged_content_is_judged_not_the_working_tree(project: Repo) -> None:
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    project.write("src/pkg/__init__.py", "VALUE = 2\n")  # the tree looks innocent
    code, doc, _ = _scope(project, "--agent")
    assert code == 1 and _rule5(doc)[0].startswith("src/pkg/__init__.py:4:")


def test_commit_by_an_agent_is_blocked_and_by_a_human_warned(project: Repo) -> None:
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    bot = project.commit("tune", author=BOT)
    code, doc, _ = _scope(project, "--commit", bot)
    assert code == 1 and _rule5(doc) == [f"src/pkg/__init__.py:4: assigns to builtins.sorted: {WHY}"]
    project.write("src/pkg/late.py", "import gc\nobjs = gc.get_objects()\n")
    project.stage()
    human = project.commit("human")
    code, doc, err = _scope(project, "--commit", human)
    assert code == 0 and "src/pkg/late.py:2: uses gc.get_objects" in err


def test_range_blocks_the_agent_commit_only(project: Repo) -> None:
    base = project.head()
    project.write("src/pkg/a.py", "import sys\nf = sys._getframe(1)\n")
    project.stage()
    project.commit("human")
    project.write("src/pkg/b.py", "import inspect\nst = inspect.stack()\n")
    project.stage()
    project.commit("agent", author=BOT)
    res = run_cli(["scope", "--range", f"{base}..HEAD", "--json"], project.path)
    assert res.code == 1
    verdicts = [(c["verdict"], [r["message"] for r in c["reasons"]]) for c in res.json()["commits"]]
    assert verdicts == [("ok", []), ("blocked", [(f"src/pkg/b.py:2: uses inspect.stack (reaches "
                                                  f"the runner's frames or objects): {WHY}")])]
    assert "src/pkg/a.py:2: uses sys._getframe" in res.err


def test_patch_resolves_an_alias_bound_in_unchanged_lines(project: Repo, tmp_path: Path) -> None:
    """The patch adds only ``_b.sorted = ...``; the import stands in HEAD's file."""
    project.write("src/pkg/__init__.py", TAMPER)
    diff = project.git("diff")
    project.git("checkout", "--", ".")
    assert "+import" not in diff
    f = tmp_path / "fix.diff"
    f.write_text(diff)
    code, doc, _ = _scope(project, "--patch", str(f), "--agent")
    assert code == 1 and _rule5(doc) == [f"src/pkg/__init__.py:4: assigns to builtins.sorted: {WHY}"]
    code, doc, err = _scope(project, "--patch", str(f))
    assert code == 0 and "src/pkg/__init__.py:4: assigns to builtins.sorted" in err


def test_patch_that_does_not_fit_head_is_read_from_its_hunks(project: Repo,
                                                            tmp_path: Path) -> None:
    f = tmp_path / "off.diff"
    f.write_text("--- a/src/pkg/other.py\n+++ b/src/pkg/other.py\n@@ -10,2 +10,3 @@\n"
                 " def f():\n     pass\n+    import sys; sys.settrace(None)\n")
    code, doc, _ = _scope(project, "--patch", str(f), "--agent")
    assert code == 1 and _rule5(doc)[0].startswith("src/pkg/other.py:12: uses sys.settrace")


def test_a_new_file_in_format_patch_mail_is_read(project: Repo, tmp_path: Path) -> None:
    project.write("src/pkg/hook.py", "import os\n\n\ndef stop():\n    os._exit = print\n")
    project.stage()
    sha = project.commit("add hook", author=BOT)
    mail = project.git("format-patch", "-1", "--stdout", sha)
    project.git("reset", "-q", "--hard", "HEAD~1")
    f = tmp_path / "mail.patch"
    f.write_text(mail)
    code, doc, _ = _scope(project, "--patch", str(f), "--agent")
    assert code == 1 and _rule5(doc) == [f"src/pkg/hook.py:5: assigns to os._exit: {WHY}"]


@pytest.mark.parametrize("name", sorted(TECHNIQUES))
def test_each_technique_blocks_a_staged_agent_change(name: str, project: Repo) -> None:
    source, line, words = TECHNIQUES[name]
    project.write("src/pkg/mod.py", source)
    project.stage()
    code, doc, _ = _scope(project, "--agent")
    assert code == 1, (name, doc)
    assert any(m.startswith(f"src/pkg/mod.py:{line}:") and words in m for m in _rule5(doc)), doc


@pytest.mark.parametrize("source", [
    "class Account:\n    def __init__(self):\n        self.balance = 0\n",
    "import os\nDEBUG = os.environ.get('DEBUG') == '1'\n",
    "def top(xs):\n    return sorted(xs)[:3]\n",
    "import subprocess\nout = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True)\n",
])
def test_ordinary_agent_code_is_not_blocked(source: str, project: Repo) -> None:
    project.write("src/pkg/mod.py", source)
    project.stage()
    code, doc, err = _scope(project, "--agent")
    assert (code, doc["reasons"], err) == (0, [], "")


def test_oracle_and_non_python_files_are_not_read(project: Repo) -> None:
    project.write("properties/test_retry.py",
                  "import sys\n\ndef test_retry():\n    assert sys._getframe()\n")
    project.stage()
    code, doc, err = _scope(project)  # a human's oracle-only change
    assert (code, err) == (0, "")
    project.git("reset", "-q", "--hard")
    project.write("src/pkg/notes.txt", "sys._getframe() and /proc/self/fd\n")
    project.stage()
    code, doc, err = _scope(project, "--agent")
    assert (code, doc["reasons"], err) == (0, [], "")


def test_pre_commit_hook_blocks_an_agent(project: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    project.write("src/pkg/__init__.py", TAMPER)
    project.stage()
    res = run_cli(["hook", "pre-commit"], project.path)
    assert res.code == 1
    assert f"rule 5: src/pkg/__init__.py:4: assigns to builtins.sorted: {WHY}" in res.out


@pytest.mark.parametrize("name", sorted(TECHNIQUES))
def test_the_first_scan_never_clears_a_technique(name: str) -> None:
    """The scan that lets a patch of new files through unread must not pass any technique
    (as a new file's added lines, however deep in a function)."""
    source = TECHNIQUES[name][0]
    for body in (source, "".join("    " + ln + "\n" for ln in source.splitlines()),
                 "".join("++ " + ln + "\n" for ln in source.splitlines())):  # "+++ " lines
        lines = body.splitlines()
        diff = ("diff --git a/src/n.py b/src/n.py\nnew file mode 100644\n--- /dev/null\n"
                f"+++ b/src/n.py\n@@ -0,0 +1,{len(lines)} @@\n"
                + "".join(f"+{ln}\n" for ln in lines)).encode()
        assert not _quiet(diff), body
    assert _quiet(b"diff --git a/src/n.py b/src/n.py\nnew file mode 100644\n--- /dev/null\n"
                  b"+++ b/src/n.py\n@@ -0,0 +1,2 @@\n+def f1():\n+    return 1\n")


_PIECES = st.sampled_from(["x", " ", "i", "e", "c", "imp", "ort", "ex", "ec", "ev", "al",
                            "comp", "ile", "+", "++ ", "(", ")", ":", "#", *"._=[\"'/\\@"])


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.lists(_PIECES, max_size=8).map("".join), min_size=1, max_size=6))
def test_the_first_scan_clears_new_files_exactly_when_no_added_line_can_hold_a_finding(
        lines: list[str]) -> None:
    """Quiet when no added line holds a special character or a word, and none reads like a
    header (``++ ...``); otherwise the files are read."""
    diff = ("diff --git a/src/n.py b/src/n.py\nnew file mode 100644\nindex 0000000..1111111\n"
            f"--- /dev/null\n+++ b/src/n.py\n@@ -0,0 +1,{len(lines)} @@\n"
            + "".join(f"+{ln}\n" for ln in lines)).encode()
    suspect = any(ln.startswith("++ ") or any(c in ln for c in "._=[\"'/\\@")
                  or any(w in ln for w in ("import", "exec", "eval", "compile")) for ln in lines)
    assert _quiet(diff) is not suspect


def test_a_tamper_on_an_added_line_that_reads_like_a_header_is_found(repo: Repo,
                                                                      tmp_path: Path) -> None:
    """``++ (...)`` is Python (two unary plus): its patch line starts ``+++ `` as a header's
    does, and must be read all the same."""
    adopt(repo)
    patch = tmp_path / "new.diff"
    patch.write_text("diff --git a/src/n.py b/src/n.py\nnew file mode 100644\n"
                     "index 0000000..1111111\n--- /dev/null\n+++ b/src/n.py\n@@ -0,0 +1 @@\n"
                     '+++ (setattr(__builtins__, "sorted", list) or 1)\n')
    res = run_cli(["scope", "--patch", str(patch), "--agent"], repo.path)
    assert res.code == 1
    assert f"rule 5: src/n.py:1: patches builtins.sorted through setattr(): {WHY}" in res.out


@pytest.mark.parametrize("worktree", ["same", "innocent", "missing", "link"])
def test_many_new_files_are_judged_by_their_staged_bytes(project: Repo, worktree: str) -> None:
    """Past a few hundred new files the first scan reads the checkout, where a file's
    bytes count only when their blob id is the index's: a staged tamper is found whatever
    the working tree shows in its place."""
    for i in range(_FROM_CHECKOUT + 1):
        project.write(f"src/many/m{i:04d}.py", f"def f{i}():\n    return {i}\n")
    project.write("src/many/zz_tamper.py", "import builtins\n\nbuiltins.sorted = list\n")
    project.stage()
    where = project.path / "src/many/zz_tamper.py"
    if worktree == "innocent":
        where.write_text("def g():\n    return 0\n")
    elif worktree == "missing":
        where.unlink()
    elif worktree == "link":
        where.unlink()
        where.symlink_to("m0000.py")
    code, doc, _ = _scope(project, "--agent")
    assert code == 1 and _rule5(doc) == [
        f"src/many/zz_tamper.py:3: assigns to builtins.sorted: {WHY}"]


def test_many_new_files_are_scanned_by_the_ids_the_staged_diff_printed(
        project: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout is compared with the blob ids of the staged change's own records: git
    is asked for no index listing, and files whose bytes match go to no ``git grep``."""
    for i in range(_FROM_CHECKOUT + 1):
        project.write(f"src/many/m{i:04d}.py", f"def f{i}():\n    return {i}\n")
    project.write("src/many/zz_tamper.py", "import builtins\n\nbuiltins.sorted = list\n")
    project.stage()
    trace = tmp_path / "git-trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    code, doc, _ = _scope(project, "--agent")
    assert code == 1 and _rule5(doc) == [
        f"src/many/zz_tamper.py:3: assigns to builtins.sorted: {WHY}"]
    commands = [line.split("trace: built-in: git ", 1)[1]
                for line in trace.read_text(errors="replace").splitlines()
                if "trace: built-in: git " in line]
    assert any(" diff-index --cached " in f" {c} " for c in commands)
    assert not [c for c in commands if " ls-files " in f" {c} " or " grep " in f" {c} "]


def test_many_plain_new_files_pass(project: Repo) -> None:
    for i in range(_FROM_CHECKOUT + 1):
        project.write(f"src/many/m{i:04d}.py", f"def f{i}():\n    return {i}\n")
    project.stage()
    code, doc, _ = _scope(project, "--agent")
    assert code == 0 and doc["reasons"] == []


@pytest.fixture
def pinned(tmp_path: Path) -> Repo:
    """An adopted project with a real pin, so ci and pre-push get as far as scope."""
    return adopted_repo(tmp_path / "pinned", {
        "pyproject.toml": AGENTS, "properties/test_retry.py": "def test_retry():\n    pass\n",
        "fixtures/cases.json": "[1, 2, 3]\n", "src/app.py": "VALUE = 1\n"},
        pin_with="cli", author="Human <h@example.com>")


def test_ci_blocks_an_agent_commit_with_exit_1_and_says_what_next(pinned: Repo) -> None:
    base = pinned.head()
    pinned.write("src/app.py", TAMPER)
    pinned.commit_all("tamper", author=BOT)
    res = run_cli(["ci", "--base", base], pinned.path)
    assert res.code == 1, res.out + res.err
    out = res.out + res.err
    assert "internal error" not in out
    assert "rule 5 (an agent change reaches into the judge at run time) -> exit 1" in out
    assert "blocked by rule 5 (an agent change reaches into the judge at run time); the gate " \
        "did not run" in out
    assert "next: take out the added lines named above" in out


def test_pre_push_blocks_an_agent_commit_through_a_real_push(pinned: Repo,
                                                            tmp_path: Path) -> None:
    assert run_cli(["install"], pinned.path).code == 0
    bare_remote(pinned, tmp_path)
    assert push(pinned, "-q", "origin", "main").returncode == 0
    pinned.write("src/app.py", TAMPER)
    pinned.commit_all("tamper", author=BOT)
    proc = push(pinned, "origin", "main")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr
    assert "blocked by rule 5 (an agent change reaches into the judge at run time)" in \
        proc.stderr + proc.stdout
