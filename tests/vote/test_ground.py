"""The judge's ground: runs cannot change the repository's git directory, and the
checkout a gate votes on is the commit byte for byte (real git, real filters, real hooks)."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ballot_guard.config import load_worktree
from ballot_guard.oracle.blobs import mismatches
from ballot_guard.vote import worktree
from ballot_guard.vote.ground import Watch
from testing.helpers import Repo, run_cli
from testing.hookutil import BILLING, bare_remote, commit, env_with, make_project, push

# Behaviour code that, once imported by a property, turns the local hooks off.
SABOTAGE = """\
import os, subprocess

def _sabotage():
    common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                            capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "config", "core.hooksPath", "/dev/null"], check=True)
    with open(os.path.join(common, "hooks", "pre-commit"), "w") as f:
        f.write("#!/bin/sh\\nexit 0\\n")

_sabotage()
"""

USES_PAYMENTS = "import payments\n\n\ndef test_payments_import():\n    assert payments\n"


def _out(proc: object) -> str:
    return f"{getattr(proc, 'stdout', '')}{getattr(proc, 'stderr', '')}"


@pytest.fixture
def hooked(tmp_path: Path) -> Repo:
    """An adopted project with the plain hooks installed and pushed once."""
    repo = make_project(tmp_path / "project",
                        {"properties/test_payments.py": USES_PAYMENTS,
                         "payments/__init__.py": "RATE = 1\n"})
    # the hermetic level (the OS sandbox makes .git read-only: tests/run/test_sandbox.py)
    repo.write("pyproject.toml", (repo.path / "pyproject.toml").read_text()
               + 'sandbox = "off"\n')
    repo.commit_all("the hermetic level")
    assert run_cli(["install"], repo.path).code == 0
    bare_remote(repo, tmp_path)
    proc = push(repo, "-u", "origin", "main")
    assert proc.returncode == 0, _out(proc)
    return repo


def test_a_run_that_turns_the_hooks_off_is_an_error_and_is_undone(hooked: Repo) -> None:
    git_dir = hooked.path / ".git"
    hook = git_dir / "hooks" / "pre-commit"
    config_before, hook_before = (git_dir / "config").read_bytes(), hook.read_bytes()
    hook_mode = stat.S_IMODE(hook.stat().st_mode)
    hooked.write("payments/__init__.py", SABOTAGE)
    hooked.stage()
    proc = commit(hooked, "-m", "payments: tidy the module")  # behaviour only: in scope
    assert proc.returncode == 0, _out(proc)
    proc = push(hooked, "origin", "main")
    out = _out(proc)
    assert proc.returncode != 0, out
    assert "CANNOT JUDGE (exit 4)" in out and "git directory" in out
    assert "core.hookspath set to '/dev/null'" in out
    assert ".git/hooks/pre-commit (modified)" in out and "put back" in out
    card = __import__("json").loads((hooked.path / ".ballot_guard/scorecard.json").read_text())
    assert card["exit"] == 4 and card["properties"]["payments"]["ballot"] == "error"
    # everything is as it was: the hooks still judge the next commit
    assert (git_dir / "config").read_bytes() == config_before
    assert hook.read_bytes() == hook_before and stat.S_IMODE(hook.stat().st_mode) == hook_mode
    assert hooked.git("config", "--get", "core.hooksPath", check=False) == ""
    hooked.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    hooked.write("properties/test_bounded_retry.py",
                 (hooked.path / "properties/test_bounded_retry.py").read_text()
                 .replace("== 3", "== 4"))
    hooked.stage()
    head = hooked.head()
    proc = commit(hooked, "-m", "retry once more", env=env_with(BALLOT_GUARD_AGENT="1"))
    assert proc.returncode != 0 and "rule 1" in _out(proc) and "rule 2" in _out(proc), _out(proc)
    assert hooked.head() == head


def test_the_watch_covers_the_hooks_path_and_info(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "p")
    repo.git("config", "core.hooksPath", ".githooks")
    repo.write(".githooks/pre-push", "#!/bin/sh\nexit 1\n", mode=0o755)
    repo.write(".git/info/exclude", "*.log\n")
    watch = Watch(str(repo.path))
    repo.write(".githooks/pre-push", "#!/bin/sh\nexit 0\n", mode=0o755)
    repo.write(".git/info/attributes", "properties/*.py filter=fmt\n")
    (repo.path / ".git/info/exclude").unlink()
    watch.after_run(run := object())
    assert set(watch.flagged[id(run)]) >= {".git/info/attributes", ".git/info/exclude",
                                           ".githooks/pre-push"}
    text = watch.finish()
    assert text is not None
    for name in (".githooks/pre-push (modified)", ".git/info/attributes (added)",
                 ".git/info/exclude (removed)", "put back"):
        assert name in text, text
    assert (repo.path / ".githooks/pre-push").read_text() == "#!/bin/sh\nexit 1\n"
    assert not (repo.path / ".git/info/attributes").exists()
    assert (repo.path / ".git/info/exclude").exists()


# --- the checkout is the commit, byte for byte ------------------------------------------

PASSING = "def test_bounded_retry():\n    pass\n"


def _smudge(repo: Repo, tmp_path: Path) -> None:
    """A filter that checks out a passing property, set up where no scope rule looks."""
    script = tmp_path / "fmt.py"
    script.write_text(f"import sys\nsys.stdin.read()\nsys.stdout.write({PASSING!r})\n")
    repo.git("config", "filter.fmt.smudge", f"{sys.executable} {script}")
    repo.git("config", "filter.fmt.clean", "cat")
    (repo.path / ".git/info").mkdir(exist_ok=True)
    with open(repo.path / ".git/info/attributes", "a") as f:
        f.write("properties/*.py filter=fmt\n")


def test_a_smudge_filter_cannot_hand_the_gate_another_property(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.commit_all("retry four times")
    _smudge(repo, tmp_path)
    plain = repo.path.parent / "plain"
    repo.git("worktree", "add", "-q", "--detach", str(plain), "HEAD")  # git's own checkout
    assert (plain / "properties/test_bounded_retry.py").read_text() == PASSING  # it bites
    res = run_cli(["gate", "--rev", "HEAD"], repo.path)
    assert res.code == 1, res.out + res.err  # the committed property, failing as it should
    assert "assert 4 == 3" in res.out


def test_the_checkout_holds_the_blobs_verbatim(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.write(".gitattributes", "*.py text eol=crlf ident\nfixtures/** eol=crlf\n")
    repo.write("properties/test_ident.py", "# $Id$\ndef test_x():\n    pass\n")
    repo.write("tool.sh", "#!/bin/sh\n", mode=0o755)
    repo.symlink("link-to-billing", "billing.py")
    repo.commit_all("attributes that convert on checkout")
    _smudge(repo, tmp_path)
    sha = repo.head()
    with worktree.checkout(str(repo.path), sha) as tree:
        assert mismatches(tree, str(repo.path), sha, load_worktree(tree)) == []
        for rel in ("properties/test_ident.py", "billing.py", "tool.sh", "fixtures/cards.json"):
            blob = repo.git("cat-file", "blob", f"{sha}:{rel}").encode()
            assert Path(tree, rel).read_bytes() == blob, rel
        assert os.access(Path(tree, "tool.sh"), os.X_OK)
        assert os.readlink(Path(tree, "link-to-billing")) == "billing.py"
        # anything that rewrites the judge afterwards is named
        Path(tree, "properties/test_bounded_retry.py").write_text(PASSING)
        Path(tree, "fixtures/cards.json").chmod(0o755)
        Path(tree, "fixtures/extra.json").write_text("{}\n")
        Path(tree, "conftest.py").unlink()
        assert sorted(mismatches(tree, str(repo.path), sha, load_worktree(tree))) == [
            "conftest.py (missing)", "fixtures/cards.json (another executable bit)",
            "fixtures/extra.json (not in the commit)",
            "properties/test_bounded_retry.py (other bytes than its blob)"]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_unfreeze_refuses_a_working_tree_whose_judge_is_not_the_commit(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.write("freeze_set.json", '{"frozen": ["bounded_retry"]}\n')
    repo.commit_all("freeze it")
    _smudge(repo, tmp_path)
    repo.remove("properties/test_bounded_retry.py")
    repo.git("checkout", "--", "properties/test_bounded_retry.py")  # through the filter
    assert (repo.path / "properties/test_bounded_retry.py").read_text() == PASSING
    res = run_cli(["unfreeze", "bounded_retry"], repo.path)
    assert res.code == 4, res.out + res.err
    assert "properties/test_bounded_retry.py (other bytes than its blob)" in res.err
    assert "commit the repair" in res.err
    assert "bounded_retry" in repo.path.joinpath("freeze_set.json").read_text()


def test_a_plain_gate_refuses_oracle_files_a_filter_wrote(tmp_path: Path) -> None:
    """The working tree checked out through a real smudge filter: the plain gate (no --rev)
    names the file and its filter instead of voting on what the filter wrote."""
    repo = make_project(tmp_path / "project")
    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.commit_all("retry four times")
    _smudge(repo, tmp_path)
    repo.remove("properties/test_bounded_retry.py")
    repo.git("checkout", "--", "properties/test_bounded_retry.py")  # through the filter
    assert (repo.path / "properties/test_bounded_retry.py").read_text() == PASSING
    res = run_cli(["gate"], repo.path)
    assert res.code == 4, res.out + res.err
    assert "properties/test_bounded_retry.py (filter=fmt: other bytes than its blob)" in res.err
    assert res.err.count("\n") == 1 and "gate --rev HEAD" in res.err
    assert run_cli(["gate", "--rev", "HEAD"], repo.path).code == 1  # the commit's vote

    # checked out again without the filter: the committed property votes, and fails
    (repo.path / ".git/info/attributes").write_text("")
    repo.remove("properties/test_bounded_retry.py")
    repo.git("checkout", "--", "properties/test_bounded_retry.py")
    res = run_cli(["gate"], repo.path)
    assert res.code == 1 and "assert 4 == 3" in res.out, res.out + res.err


def test_a_plain_gate_votes_on_an_unfiltered_edit_and_a_filter_that_changed_nothing(
        tmp_path: Path) -> None:
    repo = make_project(tmp_path / "project")
    repo.git("config", "filter.same.smudge", "cat")
    repo.git("config", "filter.same.clean", "cat")
    repo.write(".gitattributes", "fixtures/** filter=same\n")
    repo.commit_all("a filter that changes nothing")
    repo.remove("fixtures/cards.json")
    repo.git("checkout", "--", "fixtures/cards.json")
    assert run_cli(["gate"], repo.path).code == 0
    # the user's own uncommitted edit of a property (no filter on it) is what it votes on
    repo.write("properties/test_bounded_retry.py", PASSING.replace("pass", "assert False"))
    res = run_cli(["gate"], repo.path)
    assert res.code == 1, res.out + res.err
