"""Attacks on the scope guard: changes that try to rewrite their own judge unseen.

Each case builds an adopted repository (HEAD holds the pin), applies one
attack through a real source (a staged index, a commit, a range, or a patch
file), runs ``ballot-guard scope`` and asserts it is blocked (1), or, for a
patch that must be applied to be judged and cannot be, refused (4) for the reason the
case names; never 0.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ballot_guard.change import identity
from ballot_guard.oracle import tables
from ballot_guard.vocabulary import SOURCES
from testing.helpers import Repo, adopted_repo, init_repo, run_cli
from testing.scope_support import BOT, adopt, judged_as

PROP = "properties/test_retry.py"


@dataclass(frozen=True)
class Attack:
    id: str
    run: Callable[[Repo, Path], list[str]]  # the scope args
    pyproject: str | None = None
    # a patch refused (4), not blocked (1): what its one-line error says
    refused: tuple[str, ...] = ()


def _patch(text: str | bytes, *, agent: bool = True) -> Callable[[Repo, Path], list[str]]:
    def run(repo: Repo, tmp: Path) -> list[str]:
        data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        path = tmp / "attack.diff"
        path.write_bytes(data)
        return ["--patch", str(path), *(["--agent"] if agent else [])]
    return run


def _staged(edit: Callable[[Repo], None], *, agent: bool = True) -> Callable[
        [Repo, Path], list[str]]:
    def run(repo: Repo, tmp: Path) -> list[str]:
        edit(repo)
        repo.stage()
        return ["--staged", *(["--agent"] if agent else [])]
    return run


def _commit(edit: Callable[[Repo], None], *, author: str = BOT, message: str = "fix",
            committer: str | None = None) -> Callable[[Repo, Path], list[str]]:
    def run(repo: Repo, tmp: Path) -> list[str]:
        edit(repo)
        repo.stage()
        sha = repo.commit(message, author=author, committer=committer)
        return ["--commit", sha]
    return run


def _write(**files: str) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        for rel, content in files.items():
            repo.write(rel.replace("__", "/"), content)
    return edit


def _writes(pairs: dict[str, str | bytes]) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        for rel, content in pairs.items():
            repo.write(rel, content)
    return edit


AGENTS = '[tool.ballot_guard]\nagents = ["*[bot]*", "*<agent@example.com>"]\n'
NESTED = '[tool.ballot_guard]\nproperties_dir = "tests/properties"\n'
UNICODE = '[tool.ballot_guard]\nproperties_dir = "pr\u00fcf"\n'


def _git_new(path: str, body: str = "x = 1\n") -> str:
    lines = body.splitlines()
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines))


EDIT_PROP_HUNK = "@@ -1,2 +1,2 @@\n def test_retry():\n-    assert True\n+    assert 1\n"

PATCH_ATTACKS = [
    Attack("patch-case-variant-dir", _patch(_git_new("PROPERTIES/test_retry.py"))),
    Attack("patch-case-variant-fixtures", _patch(_git_new("Fixtures/cases.json", "[]"))),
    Attack("patch-dot-slash", _patch(f"--- ./{PROP}\n+++ ./{PROP}\n" + EDIT_PROP_HUNK)),
    Attack("patch-double-slash", _patch(
        "diff --git a/properties//test_retry.py b/properties//test_retry.py\n"
        "--- a/properties//test_retry.py\n+++ b/properties//test_retry.py\n" + EDIT_PROP_HUNK)),
    Attack("patch-dotdot", _patch(
        f"--- a/src/../{PROP}\n+++ b/src/../{PROP}\n" + EDIT_PROP_HUNK)),
    Attack("patch-nfd-unicode", _patch(_git_new("pru\u0308f/test_x.py")), UNICODE),
    Attack("patch-trailing-tab-timestamp", _patch(
        f"--- a/{PROP}\t2024-01-01 00:00:00.000000000 +0000\n"
        f"+++ b/{PROP}\t2024-01-01 00:00:01.000000000 +0000\n" + EDIT_PROP_HUNK)),
    Attack("patch-trailing-spaces", _patch(
        f"--- a/{PROP}  \n+++ b/{PROP}  \n" + EDIT_PROP_HUNK)),
    Attack("patch-crlf", _patch(
        (f"diff --git a/{PROP} b/{PROP}\n--- a/{PROP}\n+++ b/{PROP}\n"
         + EDIT_PROP_HUNK).replace("\n", "\r\n"))),
    Attack("patch-header-names-other-file", _patch(
        f"diff --git a/src/app.py b/src/app.py\n--- a/{PROP}\n+++ b/{PROP}\n" + EDIT_PROP_HUNK)),
    Attack("patch-rename-names-other-file", _patch(
        "diff --git a/src/app.py b/src/new.py\nsimilarity index 100%\n"
        f"rename from {PROP}\nrename to src/new.py\n")),
    Attack("patch-rename-property-away", _patch(
        f"diff --git a/{PROP} b/src/test_retry.py\nsimilarity index 100%\n"
        f"rename from {PROP}\nrename to src/test_retry.py\n")),
    Attack("patch-copy-property", _patch(
        f"diff --git a/{PROP} b/src/x.py\nsimilarity index 100%\n"
        f"copy from {PROP}\ncopy to src/x.py\n")),
    Attack("patch-name-with-space-b", _patch(_git_new("src/a b/properties/test_x.py")
                                             + _git_new("properties/test_y.py"))),
    Attack("patch-quoted-octal", _patch(
        'diff --git "a/properties/test_r\\145try.py" "b/properties/test_r\\145try.py"\n'
        '--- "a/properties/test_r\\145try.py"\n+++ "b/properties/test_r\\145try.py"\n'
        + EDIT_PROP_HUNK)),
    Attack("patch-p0-traditional", _patch(f"--- {PROP}\n+++ {PROP}\n" + EDIT_PROP_HUNK)),
    Attack("patch-p0-new-file", _patch(
        f"--- /dev/null\n+++ {PROP[:-3]}2.py\n@@ -0,0 +1 @@\n+x = 1\n")),
    Attack("patch-no-prefix-git", _patch(
        f"diff --git {PROP} {PROP}\n--- {PROP}\n+++ {PROP}\n" + EDIT_PROP_HUNK)),
    # Its -p0 reading touches the fixtures, so rule 3 needs its content: it must be applied,
    # and git applies it at -p1, where no cases.json is.
    Attack("patch-p0-fixtures", _patch(
        "--- fixtures/cases.json\n+++ fixtures/cases.json\n@@ -1 +1 @@\n-[1, 2, 3]\n+[1]\n",
        agent=False), refused=("the patch does not apply to HEAD", "cases.json")),
    # The literal's data is not a deflated blob: git cannot even read the patch.
    Attack("patch-binary-fixture", _patch(
        "diff --git a/fixtures/cases.json b/fixtures/cases.json\n"
        "index 1111111..2222222 100644\nGIT binary patch\nliteral 3\n"
        "KcmZ?wjy(Vc00RI5\n\nliteral 3\nKcmZ?wjy(Vc00RI5\n\n", agent=False),
        refused=("malformed patch", "corrupt binary patch")),
    # A fixture changed, so rule 3 needs the new bytes, and a binary diff without data
    # (abbreviated ids, no literal) cannot be applied.
    Attack("patch-binary-no-data", _patch(
        "diff --git a/fixtures/cases.json b/fixtures/cases.json\n"
        "index 1111111..2222222 100644\nBinary files a/fixtures/cases.json and "
        "b/fixtures/cases.json differ\n", agent=False),
        refused=("the patch does not apply to HEAD", "fixtures/cases.json")),
    Attack("patch-mode-only-property", _patch(
        f"diff --git a/{PROP} b/{PROP}\nold mode 100644\nnew mode 100755\n")),
    Attack("patch-property-to-symlink", _patch(
        f"diff --git a/{PROP} b/{PROP}\ndeleted file mode 100644\n--- a/{PROP}\n+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n-def test_retry():\n-    assert True\n"
        f"diff --git a/{PROP} b/{PROP}\nnew file mode 120000\n--- /dev/null\n+++ b/{PROP}\n"
        "@@ -0,0 +1 @@\n+../src/app.py\n\\ No newline at end of file\n")),
    Attack("patch-gitlink-properties", _patch(
        "diff --git a/properties/sub b/properties/sub\nnew file mode 160000\n"
        "index 0000000..1234567\n--- /dev/null\n+++ b/properties/sub\n"
        "@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n")),
    # Rule 4 reads the freeze file on both sides, so the patch must be applied, and HEAD
    # holds no freeze file to delete (rule 4 through a patch that applies:
    # test_deleting_the_freeze_file_loses_history_and_is_blocked).
    Attack("patch-delete-freeze-file", _patch(
        "diff --git a/freeze_set.json b/freeze_set.json\ndeleted file mode 100644\n"
        "--- a/freeze_set.json\n+++ /dev/null\n@@ -1 +0,0 @@\n-{\"frozen\": [\"retry\"]}\n",
        agent=False), refused=("the patch does not apply to HEAD", "freeze_set.json")),
    Attack("patch-delete-pin", _patch(
        "diff --git a/fixture_digest.txt b/fixture_digest.txt\ndeleted file mode 100644\n"
        "--- a/fixture_digest.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-sha256-v2:" + "0" * 64 + "\n")),
    # GNU patch would apply the context diff; ballot-guard does not read one (the contract's
    # strict patch reading): refused, naming the line.
    Attack("patch-context-diff-section", _patch(
        _git_new("src/x.py") + f"*** a/{PROP}\n--- b/{PROP}\n***************\n"
        "*** 1,2 ****\n  def test_retry():\n!     assert True\n--- 1,2 ----\n"
        "  def test_retry():\n!     assert 1\n"),
        refused=("line 7: a context diff header",)),
    Attack("patch-gitattributes-root", _patch(_git_new(
        ".gitattributes", "fixtures/** working-tree-encoding=UTF-16"), agent=True)),
    Attack("patch-conftest-root", _patch(_git_new("conftest.py", "import os\n"))),
    Attack("patch-pytest-ini", _patch(_git_new("pytest.ini", "[pytest]\naddopts = -k nope\n"))),
    Attack("patch-dot-pytest-toml", _patch(_git_new(".pytest.toml", "[pytest]\n"))),
    Attack("patch-precommit-config", _patch(_git_new(".pre-commit-config.yaml", "repos: []\n"))),
    Attack("patch-empty-hunk-then-traditional", _patch(
        "diff --git a/src/app.py b/src/app.py\nindex 1111111..2222222 100644\n"
        f"--- a/{PROP}\n+++ b/{PROP}\n" + EDIT_PROP_HUNK)),
    Attack("patch-preamble-hides-header", _patch(
        "Subject: fix\n\n---\n src/app.py | 2 +-\n\n" + f"--- a/{PROP}\n+++ b/{PROP}\n"
        + EDIT_PROP_HUNK)),
]


def _init_py_ancestor(repo: Repo) -> None:
    repo.write("tests/__init__.py", "import os\n")


def _pyproject(text: str) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        path = repo.path / "pyproject.toml"
        old = path.read_text() if path.exists() else ""
        repo.write("pyproject.toml", old + text)
    return edit


def _symlink(rel: str, target: str) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        p = repo.path / rel
        if p.exists() or p.is_symlink():
            p.unlink()
        repo.symlink(rel, target)
    return edit


def _both(*edits: Callable[[Repo], None]) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        for e in edits:
            e(repo)
    return edit


BEHAVIOUR = _write(src__app_py="RETRIES = 4\n")  # src/app.py


def _git_rm(path: str) -> Callable[[Repo], None]:
    def edit(repo: Repo) -> None:
        repo.git("rm", "-rq", path)
    return edit


STAGED_ATTACKS = [
    Attack("staged-case-variant-dir", _staged(_writes({"Properties/test_x.py": "x = 1\n"}))),
    Attack("staged-conftest-root", _staged(_writes({"conftest.py": "import os\n"}))),
    Attack("staged-conftest-ancestor", _staged(_writes({"tests/conftest.py": "x = 1\n"})),
           NESTED),
    Attack("staged-init-py-ancestor", _staged(_init_py_ancestor), NESTED),
    Attack("staged-pytest-ini-ancestor", _staged(_writes({"tests/pytest.ini": "[pytest]\n"})),
           NESTED),
    Attack("staged-pyproject-ancestor", _staged(_writes(
        {"tests/pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-k no'\n"})), NESTED),
    Attack("staged-pytest-toml", _staged(_writes({"pytest.toml": "[pytest]\n"}))),
    Attack("staged-dot-pytest-ini", _staged(_writes({".pytest.ini": "[pytest]\n"}))),
    Attack("staged-tox-ini-pytest", _staged(_writes({"tox.ini": "[pytest]\naddopts = -k no\n"}))),
    Attack("staged-setup-cfg-tool-pytest", _staged(_writes(
        {"setup.cfg": "[tool:pytest]\naddopts = -k no\n"}))),
    Attack("staged-setup-cfg-cr-hidden-section", _staged(_writes(
        {"setup.cfg": "[metadata]\nname = x\r[tool:pytest]\raddopts = -k no\n"}))),
    Attack("staged-setup-cfg-formfeed-hidden-section", _staged(_writes(
        {"setup.cfg": "[metadata]\nname = x\x0c[tool:pytest]\x0caddopts = -k no\n"}))),
    Attack("staged-tox-ini-u2028-hidden-section", _staged(_writes(
        {"tox.ini": "[tox]\nenvlist = x\u2028[pytest]\u2028addopts = -k no\n"}))),
    Attack("staged-pyproject-dotted-keys", _staged(_pyproject(
        '[tool]\npytest.ini_options.addopts = "-k not_x"\n')), ""),
    Attack("staged-pyproject-inline-table", _staged(_pyproject(
        'tool = { pytest = { ini_options = { addopts = "-k no" } } }\n')), ""),
    Attack("staged-pyproject-native-pytest", _staged(_pyproject(
        '[tool.pytest]\naddopts = ["-k", "no"]\n')), ""),
    Attack("staged-pyproject-inline-ballot-guard", _staged(_pyproject(
        'tool = { ballot_guard = { neutral_paths = ["**"] } }\n')), ""),
    Attack("staged-own-config-neutral-everything", _staged(_both(_pyproject(
        'neutral_paths = ["**"]\n'), _writes({PROP: "x = 1\n"}), BEHAVIOUR), agent=False),
        "[tool.ballot_guard]\n"),
    Attack("staged-precommit-config", _staged(_writes({".pre-commit-config.yaml": "repos: []\n"}))),
    Attack("staged-venv", _staged(_writes({".venv/bin/python": "#!/bin/sh\n"}))),
    Attack("staged-delete-pin", _staged(lambda r: r.remove("fixture_digest.txt"))),
    Attack("staged-property-symlink", _staged(_symlink(PROP, "../src/app.py"))),
    Attack("staged-properties-dir-symlink", _staged(_both(
        _git_rm("properties"), _symlink("properties", "src")))),
    Attack("staged-fixture-symlink-to-behaviour", _staged(
        _symlink("fixtures/link.json", "../src/app.py"), agent=False)),
    Attack("staged-gitattributes-fixtures", _staged(_writes(
        {"fixtures/.gitattributes": "*.json text eol=crlf\n"}))),
    Attack("staged-setup-cfg-comment-in-header", _staged(_writes(
        {"setup.cfg": "[tool:pytest] # [x]\naddopts = -k no\n"}))),
    Attack("staged-tox-ini-semicolon-in-header", _staged(_writes(
        {"tox.ini": "[pytest] ;[tox]\naddopts = -k no\n"}))),
    Attack("staged-gitattributes-root-eol", _staged(_writes(
        {".gitattributes": "*.json text eol=crlf\n"}))),
    Attack("staged-gitattributes-fixtures-ancestor", _staged(_writes(
        {"data/.gitattributes": "*.json working-tree-encoding=UTF-16\n"})),
        '[tool.ballot_guard]\nfixtures_dir = "data/fixtures"\n'),
    Attack("staged-fixture-behaviour-mixed", _staged(_both(
        _writes({"fixtures/cases.json": "[]\n"}), BEHAVIOUR), agent=False)),
]


def _coauthored(line: str, *, extra: str = "") -> Callable[[Repo, Path], list[str]]:
    return _commit(_writes({PROP: "x = 1\n"}), author="Human <h@example.com>",
                   message=f"fix\n\n{extra}{line}\n\nmore text\n")


def _evil_merge(repo: Repo, tmp: Path) -> list[str]:
    base = repo.head()
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/other.py", "y = 1\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "# readme\n")
    repo.commit_all("main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side", check=False)
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.write("src/app.py", "RETRIES = 9\n")
    repo.stage()
    repo.commit("merge side")
    return ["--range", f"{base}..HEAD"]


def _range_agent_then_human(repo: Repo, tmp: Path) -> list[str]:
    base = repo.head()
    repo.write(PROP, "x = 1\n")
    repo.commit_all("agent edit", author=BOT)
    repo.write("src/app.py", "RETRIES = 5\n")
    repo.commit_all("human edit")
    return ["--range", f"{base}..HEAD"]


def _delete_pin_then_anything(repo: Repo, tmp: Path) -> list[str]:
    base = repo.head()
    repo.remove("fixture_digest.txt")
    repo.commit_all("drop the pin", author=BOT)
    return ["--range", f"{base}..HEAD"]


COMMIT_ATTACKS = [
    Attack("commit-agent-author", _commit(_writes({PROP: "x = 1\n"}))),
    Attack("commit-agent-committer-only", _commit(
        _writes({PROP: "x = 1\n"}), author="Human <h@example.com>", committer=BOT)),
    Attack("commit-coauthor-mid-message", _coauthored(f"Co-authored-by: {BOT}")),
    Attack("commit-coauthor-uppercase", _coauthored(f"CO-AUTHORED-BY: {BOT}")),
    Attack("commit-coauthor-indented", _coauthored(f"   Co-authored-by:  {BOT}")),
    Attack("commit-coauthor-squash", _coauthored(
        f"* fix one\n\nCo-authored-by: {BOT}", extra="Squashed commits:\n")),
    Attack("commit-coauthor-crlf", _commit(
        _writes({PROP: "x = 1\n"}), author="Human <h@example.com>",
        message=f"fix\r\n\r\nCo-authored-by: {BOT}\r\n")),
    Attack("commit-agent-email-pattern", _commit(
        _writes({PROP: "x = 1\n"}), author="Someone <AGENT@example.com>")),
    Attack("commit-own-config-drops-agents", _commit(_both(_writes(
        {"pyproject.toml": "[tool.ballot_guard]\n"}), _writes({PROP: "x = 1\n"})))),
    Attack("commit-mixed-human", _commit(_both(_writes({PROP: "x = 1\n"}), BEHAVIOUR),
                                         author="Human <h@example.com>")),
    Attack("range-evil-merge", _evil_merge),
    Attack("range-agent-then-human", _range_agent_then_human),
    Attack("range-delete-pin", _delete_pin_then_anything),
]


@pytest.mark.parametrize("attack", PATCH_ATTACKS + STAGED_ATTACKS + COMMIT_ATTACKS,
                         ids=lambda a: a.id)
def test_attack_is_blocked(attack: Attack, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    pyproject = attack.pyproject
    if attack.id.startswith(("commit-", "range-")) or attack.pyproject is None:
        pyproject = AGENTS if pyproject is None else pyproject
    if pyproject is not None and "agents" not in pyproject:
        pyproject = pyproject.replace("[tool.ballot_guard]\n", "") if pyproject else ""
        pyproject = AGENTS + pyproject
    adopt(repo, pyproject)
    if attack.pyproject == NESTED:
        repo.write("tests/properties/test_retry.py", "def test_retry():\n    assert True\n")
        repo.commit_all("nested properties")
    args = attack.run(repo, tmp_path)
    res = run_cli(["scope", *args], repo.path)
    assert res.code == (4 if attack.refused else 1), (res.code, res.out, res.err)
    if attack.refused:
        assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
        assert all(words in res.err for words in attack.refused), res.err


def test_a_binary_fixture_patch_that_applies_is_judged_by_rule_3(tmp_path: Path) -> None:
    """The binary cases above are refused for their data; git's own binary patch of a
    fixture applies, and without a re-pin it is blocked by rule 3."""
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    repo.write("fixtures/cases.json", bytes(range(256)))
    patch = tmp_path / "p.diff"
    patch.write_bytes(os.fsencode(repo.git("diff", "--binary")))
    repo.git("checkout", "-q", "--", ".")
    assert b"GIT binary patch" in patch.read_bytes()
    res = run_cli(["scope", "--patch", str(patch), "--json"], repo.path)
    assert res.code == 1, res.out + res.err
    assert [r["rule"] for r in res.json()["reasons"]] == [3]


def test_a_diff_ru_oracle_patch_is_not_made_mixed_by_its_p0_reading(tmp_path: Path) -> None:
    """``diff -ru old new``: -p1 reads the property, -p0 reads ``old/...`` (behaviour, not
    counted): a human's oracle-only patch stays ok."""
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    patch = tmp_path / "p.diff"
    patch.write_text(f"--- old/{PROP}\n+++ new/{PROP}\n" + EDIT_PROP_HUNK)
    res = run_cli(["scope", "--patch", str(patch), "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["oracle"] == [PROP] and res.json()["behavior"] == []


def test_a_p0_patch_names_the_property_under_both_readings(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    patch = tmp_path / "p.diff"
    patch.write_text(f"--- {PROP}\n+++ {PROP}\n" + EDIT_PROP_HUNK)
    res = run_cli(["scope", "--patch", str(patch), "--json"], repo.path)
    assert res.code == 1
    assert res.json()["oracle"] == [PROP]
    assert res.json()["behavior"] == ["test_retry.py"]


@pytest.mark.parametrize("sep", ["\r", "\x0c", "\u2028", "\x1c"])
def test_ini_lines_are_split_as_pytest_splits_them(sep: str) -> None:
    old = b"[metadata]\nname = x\n"
    new = f"[metadata]\nname = x{sep}[tool:pytest]{sep}addopts = -k no\n".encode()
    assert tables.judge("setup.cfg", old, new) in (tables.ORACLE, tables.BOTH)



def _freeze_history(repo: Repo) -> None:
    repo.write("freeze_set.json", '{"frozen": [], "records": {}, "history": [{"event": '
               '"frozen", "name": "retry", "at": "2026-01-01T00:00:00Z"}, {"event": "unfrozen", '
               '"name": "retry", "at": "2026-01-02T00:00:00Z", "runs": ["pass", "pass"]}]}\n')
    repo.commit_all("freeze history", author="Human <h@example.com>")


@pytest.mark.parametrize("source", SOURCES)
def test_deleting_the_freeze_file_loses_history_and_is_blocked(source: str,
                                                                  tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    _freeze_history(repo)
    repo.remove("freeze_set.json")
    repo.stage()
    args = judged_as(repo, source, tmp_path, author="Human <h@example.com>", hard=False)
    res = run_cli(["scope", *args, "--json"], repo.path)
    assert res.code == 1, res.out
    assert [r["rule"] for r in res.json()["reasons"]] == [4]


def test_after_the_pin_is_deleted_commits_are_still_judged_and_the_gate_refuses_to_vote(
        tmp_path: Path) -> None:
    """Deleting the pin alone, by a human, is an oracle change: ok (the contract's
    Adoption; rule 3 does not apply to a deleted pin). What follows is still judged (the
    repository adopted once: a deleted pin does not take it back to before adoption), and
    the gate refuses to vote: exit 2, nobody votes."""
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    repo.remove("fixture_digest.txt")
    drop = repo.commit_all("drop the pin", author="Human <h@example.com>")
    res = run_cli(["scope", "--commit", drop, "--json"], repo.path)
    assert res.code == 0 and res.json()["oracle"] == ["fixture_digest.txt"]
    assert res.json()["reasons"] == []
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.write("src/app.py", "RETRIES = 9\n")
    sha = repo.commit_all("agent edit", author=BOT)
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1 and res.json()["verdict"] == "blocked"
    assert [r["rule"] for r in res.json()["reasons"]][:2] == [1, 2]
    assert run_cli(["gate"], repo.path).code == 2
    assert run_cli(["digest", "--check"], repo.path).code == 2


def _pinned_repo(tmp_path: Path) -> Repo:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    return adopted_repo(repo, {}, pin_with="cli", message="a real pin",
                        author="Human <h@example.com>")


@pytest.mark.parametrize("source", SOURCES)
def test_a_re_pinned_fixture_link_to_a_behaviour_file_is_blocked(source: str,
                                                                  tmp_path: Path) -> None:
    """v2 pins a link's target string: ``fixtures/data.json -> ../src/app.py`` re-pinned
    would let every later edit of src/app.py change what properties read, unseen."""
    repo = _pinned_repo(tmp_path)
    repo.symlink("fixtures/data.json", "../src/app.py")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.stage()
    args = judged_as(repo, source, tmp_path, author="Human <h@example.com>")
    res = run_cli(["scope", *args, "--json"], repo.path)
    assert res.code == 1, res.out
    assert [r["rule"] for r in res.json()["reasons"]] == [3]
    assert "src/app.py" in res.json()["reasons"][0]["message"]


def test_a_fixture_link_inside_the_pack_is_fine(tmp_path: Path) -> None:
    repo = _pinned_repo(tmp_path)
    repo.symlink("fixtures/alias.json", "cases.json")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 0, res.out


@pytest.mark.parametrize("link,target", [
    (PROP, "../src/app.py"),
    ("properties/test_abs.py", "/tmp/test_abs.py"),
    ("properties/test_up.py", "../../outside/test_up.py"),
])
def test_a_property_linked_outside_the_oracle_is_blocked(link: str, target: str,
                                                         tmp_path: Path) -> None:
    repo = _pinned_repo(tmp_path)
    if (repo.path / link).exists():
        repo.remove(link)
    repo.symlink(link, target)
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)  # a human, oracle alone: only the link
    assert res.code == 1, res.out
    assert [r["rule"] for r in res.json()["reasons"]] == [1]


def test_the_properties_dir_turned_into_a_symlink_is_blocked(tmp_path: Path) -> None:
    repo = _pinned_repo(tmp_path)
    repo.git("rm", "-rq", "properties")
    repo.symlink("properties", "src")
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    assert 1 in [r["rule"] for r in res.json()["reasons"]]


@pytest.mark.parametrize("link", ["conftest.py", "pytest.ini", "pyproject.toml", "tox.ini"])
def test_a_judge_file_linked_to_a_behaviour_file_is_blocked(link: str,
                                                            tmp_path: Path) -> None:
    """pytest follows the link: the judge's config would live in src/."""
    repo = _pinned_repo(tmp_path)
    repo.write("src/judge_config", "[pytest]\n")
    repo.commit_all("a behaviour file", author="Human <h@example.com>")
    if (repo.path / link).exists():
        repo.remove(link)
    repo.symlink(link, "src/judge_config")
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    assert 1 in [r["rule"] for r in res.json()["reasons"]]


def test_a_virtualenv_link_is_left_to_the_runner_check(tmp_path: Path) -> None:
    """A tracked .venv is oracle (and the gate refuses a tracked runner); its absolute
    interpreter link is not a judge file linked to behaviour."""
    repo = _pinned_repo(tmp_path)
    repo.symlink(".venv/bin/python", "/usr/bin/python3")
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["oracle"] == [".venv/bin/python"]


def _pre_adoption_branch(repo: Repo, *, agent_edits: dict[str, str]) -> str:
    """main: an import (no pin), then adoption; side: forked from the import, where an
    agent edits files (unjudged: its base lacks the pin); merged into main by a human."""
    repo.write(PROP, "def test_retry():\n    assert True\n")
    repo.write("src/app.py", "RETRIES = 3\n")
    repo.write("pyproject.toml", AGENTS)
    repo.commit_all("import", author="Human <h@example.com>")
    repo.git("branch", "side")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    adopted = repo.commit_all("adopt", author="Human <h@example.com>")
    repo.git("checkout", "-q", "side")
    for rel, content in agent_edits.items():
        repo.write(rel, content)
    repo.commit_all("agent work", author=BOT)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side",
             env={**os.environ, "GIT_AUTHOR_NAME": "Human", "GIT_AUTHOR_EMAIL": "h@example.com"})
    return adopted


@pytest.mark.parametrize("edits,rules", [
    ({PROP: "def test_retry():\n    assert 1\n"}, {2}),
    ({PROP: "def test_retry():\n    assert 1\n", "src/app.py": "RETRIES = 9\n"}, {1, 2}),
])
def test_a_branch_forked_before_adoption_cannot_smuggle_oracle_edits_in(
        edits: dict[str, str], rules: set[int], tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopted = _pre_adoption_branch(repo, agent_edits=edits)
    res = run_cli(["scope", "--range", f"{adopted}..HEAD", "--json"], repo.path)
    assert res.code == 1, res.out
    verdicts = {c["verdict"] for c in res.json()["commits"]}
    assert verdicts == {"unjudged", "blocked"}
    for merge in [c for c in res.json()["commits"] if c["verdict"] == "blocked"]:
        assert {r["rule"] for r in merge["reasons"]} == rules


def test_a_clean_merge_of_judged_work_still_gives_no_verdict(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    base = repo.head()
    repo.git("checkout", "-q", "-b", "side")
    repo.write("src/other.py", "y = 1\n")
    repo.commit_all("side", author="Human <h@example.com>")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "# more\n")
    repo.commit_all("main", author="Human <h@example.com>")
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    res = run_cli(["scope", "--range", f"{base}..HEAD", "--json"], repo.path)
    assert res.code == 0, res.out
    assert len(res.json()["commits"]) == 2


def test_a_pre_adoption_branch_that_merges_main_in_first_parent_side_is_judged(
        tmp_path: Path) -> None:
    """side (forked before adoption, an agent edits a property) merges main in; main
    fast-forwards to that merge: its first parent is unjudged, its second adopted."""
    repo = init_repo(tmp_path / "repo")
    repo.write(PROP, "def test_retry():\n    assert True\n")
    repo.write("pyproject.toml", AGENTS)
    repo.commit_all("import", author="Human <h@example.com>")
    repo.git("branch", "side")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    adopted = repo.commit_all("adopt", author="Human <h@example.com>")
    repo.git("checkout", "-q", "side")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.commit_all("agent work", author=BOT)
    repo.git("merge", "-q", "--no-ff", "-m", "merge main", "main")
    res = run_cli(["scope", "--range", f"{adopted}..HEAD", "--json"], repo.path)
    assert res.code == 1, res.out
    blocked = [c for c in res.json()["commits"] if c["verdict"] == "blocked"]
    assert blocked and all(b["oracle"] == [PROP] for b in blocked)  # the merge, the range
    assert all({r["rule"] for r in b["reasons"]} == {2} for b in blocked)


def test_a_history_that_adopts_again_over_the_adopted_one_is_judged_as_a_whole(
        tmp_path: Path) -> None:
    """An agent's branch forked before adoption adds the pin itself together with a
    property edit (its own "adoption", unjudged), to be force-pushed over main: the
    range from the adopted base is judged as one change."""
    repo = init_repo(tmp_path / "repo")
    repo.write(PROP, "def test_retry():\n    assert True\n")
    repo.write("pyproject.toml", AGENTS)
    repo.commit_all("import", author="Human <h@example.com>")
    repo.git("branch", "side")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    adopted = repo.commit_all("adopt", author="Human <h@example.com>")
    repo.git("checkout", "-q", "side")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.commit_all("adopt, my way", author=BOT)
    res = run_cli(["scope", "--range", f"{adopted}..side", "--json"], repo.path)
    assert res.code == 1, res.out
    whole = res.json()["commits"][-1]
    assert whole["verdict"] == "blocked" and whole["oracle"] == [PROP]
    assert {r["rule"] for r in whole["reasons"]} == {2}


@pytest.mark.parametrize("name,old,new,want", [
    # pytest and ballot-guard read these tables by exact name: a case variant is not the judge
    ("pyproject.toml", b"", b"[tool.PYTEST.ini_options]\naddopts = '-k x'\n", "behavior"),
    ("pyproject.toml", b"", b"[tool.Ballot_Guard]\nagents = []\n", "behavior"),
    ("pyproject.toml", b"", b"[tool.pytest.ini_options]\naddopts = '-k x'\n", "oracle"),
    ("setup.cfg", b"", b"[TOOL:PYTEST]\naddopts = -k x\n", "behavior"),
    ("tox.ini", b"", b"[Pytest]\naddopts = -k x\n", "behavior"),
    ("tox.ini", b"", b"[pytest]\naddopts = -k x\n", "oracle"),
])
def test_judge_tables_are_named_as_their_readers_name_them(name: str, old: bytes, new: bytes,
                                                           want: str) -> None:
    assert tables.judge(name, old, new) == want


def test_pytest_ignores_a_case_variant_table(tmp_path: Path) -> None:
    """The premise of the test above, checked on the real pytest."""
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text("[tool.PYTEST.ini_options]\naddopts = '-k nope'\n")
    (tmp_path / "tox.ini").write_text("[Pytest]\naddopts = -k nope\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_a.py"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout


@pytest.mark.parametrize("hook", ["pre-commit", "pre-push.legacy"])
def test_tracked_hooks_under_core_hooks_path_are_oracle(hook: str, tmp_path: Path) -> None:
    """With ``core.hooksPath`` naming a tracked directory (where ``ballot-guard install``
    puts its hooks), editing a hook there edits the judge's entry point."""
    repo = init_repo(tmp_path / "repo")
    repo.write(".githooks/pre-commit", "#!/bin/sh\nballot-guard hook pre-commit\n")
    adopt(repo, AGENTS)
    repo.git("config", "core.hooksPath", ".githooks")
    repo.write(f".githooks/{hook}", "#!/bin/sh\nexit 0\n")
    repo.write("src/app.py", "RETRIES = 9\n")
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    assert res.json()["oracle"] == [f".githooks/{hook}"]


def test_a_hook_named_file_outside_the_hooks_dir_is_behaviour(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, AGENTS)
    repo.write("scripts/pre-commit", "#!/bin/sh\n")
    repo.stage()
    res = run_cli(["scope", "--agent", "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["behavior"] == ["scripts/pre-commit"]


@pytest.mark.parametrize("who", [
    "Helper  Agent <helper@example.com>",
    "Helper Agent<helper@example.com>",
    "helper\tagent < helper@example.com >",
    "HELPER AGENT <HELPER@EXAMPLE.COM>",
])
def test_agent_patterns_see_through_spacing_and_case(who: str) -> None:
    assert identity.any_agent(["Helper Agent <helper@example.com>"], [who])
    assert not identity.any_agent(["Helper Agent <helper@example.com>"],
                                  ["Helper Agents <helper@example.com>"])


def test_an_agent_author_spelled_with_two_spaces_is_still_the_agent(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    adopt(repo, '[tool.ballot_guard]\nagents = ["Helper Agent <helper@example.com>"]\n')
    repo.write(PROP, "x = 1\n")
    sha = repo.commit_all("tweak", author="Helper  Agent <helper@example.com>")
    assert "Helper  Agent" in repo.git("cat-file", "commit", sha)
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1, res.out
    assert [r["rule"] for r in res.json()["reasons"]] == [2]


@pytest.mark.parametrize("first_parent", ["main", "side"])
def test_scope_commit_on_a_merge_of_a_pre_adoption_branch_is_judged(first_parent: str,
                                                                    tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    repo.write(PROP, "def test_retry():\n    assert True\n")
    repo.write("pyproject.toml", AGENTS)
    repo.commit_all("import", author="Human <h@example.com>")
    repo.git("branch", "side")
    repo.write("fixture_digest.txt", "sha256-v2:" + "0" * 64 + "\n")
    repo.commit_all("adopt", author="Human <h@example.com>")
    repo.git("checkout", "-q", "side")
    repo.write(PROP, "def test_retry():\n    assert 1\n")
    repo.commit_all("agent work", author=BOT)
    repo.git("checkout", "-q", first_parent)
    repo.git("merge", "-q", "--no-ff", "-m", "merge",
             "side" if first_parent == "main" else "main")
    res = run_cli(["scope", "--commit", "HEAD", "--json"], repo.path)
    assert res.code == 1, res.out
    assert res.json()["oracle"] == [PROP]
    assert {r["rule"] for r in res.json()["reasons"]} == {2}
