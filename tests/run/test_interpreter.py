"""The runner loads Hypothesis only where a file of the checkout names it:
where none does, a run that reaches Hypothesis anyway is an error, never a vote."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from ballot_guard import git
from ballot_guard.run.interpreter import names_hypothesis
from testing.gate_support import PASS, _shared_pycache, make_project, project, scorecard
from testing.helpers import Repo, run_bg

__all__ = ["_shared_pycache", "project"]

# A property that reaches Hypothesis without naming it, as one written with a library
# built on Hypothesis does (the word is split so that no file of its checkout holds it).
COMPUTED = (
    "import importlib\n"
    "\n"
    "def test_draws():\n"
    "    hyp = importlib.import_module('hypo' + 'thesis')\n"
    "    st = importlib.import_module('hypo' + 'thesis.strategies')\n"
    "\n"
    "    @hyp.given(st.integers())\n"
    "    def check(n):\n"
    "        assert n == n\n"
    "\n"
    "    check()\n"
)


@pytest.mark.parametrize(("files", "ignored", "named"), [
    ({"properties/test_a.py": PASS}, "", False),
    ({"properties/test_a.py": "from hypothesis import given\n"}, "", True),
    ({"src/lib.py": "# strategies built on hypothesis\n"}, "", True),  # behaviour code too
    ({"notes/hypothesis.txt": "x\n"}, "", False),  # a file's name is not its text
    ({"tmp/a.py": "import hypothesis\n"}, "tmp/\n", False),  # ignored: not the checkout's
    ({"data.bin": b"\0hypothesis\0"}, "", False),  # binary files are not read
])
def test_the_checkout_names_hypothesis_in_a_file_it_holds(
        project: Repo, files: dict[str, str | bytes], ignored: str, named: bool) -> None:
    project.write("README", "a project\n")
    if ignored:
        project.write(".gitignore", ignored)
    project.stage(".")
    project.commit("start")
    for rel, text in files.items():
        project.write(rel, text)  # untracked, as a new file before its commit
    assert names_hypothesis(str(project.path)) is named
    project.stage(".")
    project.commit("tracked", allow_empty=True)
    assert names_hypothesis(str(project.path)) is named


def test_a_search_that_cannot_finish_in_time_loads_hypothesis(project: Repo) -> None:
    """The search is on the runner's start path: given up on, it answers "load"."""
    project.write("src/lib.py", "x = 1\n")
    project.stage(".")
    project.commit("start")
    assert names_hypothesis(str(project.path)) is False
    assert names_hypothesis(str(project.path), timeout=0.0) is True


def test_a_bounded_git_call_ends_with_what_it_started(project: Repo, tmp_path: Path) -> None:
    """Out of time, git and the helper it started (holding its pipes) are killed: the
    call returns at once, not when the helper would have ended."""
    pidfile = tmp_path / "helper.pid"
    start = time.monotonic()
    res = git.run(["-c", f"alias.hang=!echo $$ > {pidfile}; exec sleep 30", "hang"],
                  cwd=str(project.path), check=False, timeout=1.0)
    assert res.code == git.TIMED_OUT
    assert time.monotonic() - start < 10
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(pid)


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_a_run_that_reaches_an_unloaded_hypothesis_is_an_error_not_a_vote(project: Repo) -> None:
    make_project(project, {"plain": PASS, "computed": COMPUTED}, table='sandbox = "off"\n')
    res = run_bg(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    props = scorecard(project)["properties"]
    assert props["plain"]["ballot"] == "pass"  # the runs that need nothing more still vote
    assert props["computed"]["ballot"] == "error"
    assert [r["outcome"] for r in props["computed"]["runs"]] == ["error", "error"]
    assert "the run imported hypothesis, which no file of the checkout names" in res.out
    assert "`import hypothesis` in a conftest.py of the properties directory" in res.out


def test_where_the_checkout_names_hypothesis_the_same_property_votes(project: Repo) -> None:
    make_project(project, {"computed": COMPUTED}, table='sandbox = "off"\n')
    project.write("properties/conftest.py", "import hypothesis  # noqa: F401\n")
    project.stage(".")
    project.commit("the properties name Hypothesis")
    res = run_bg(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert scorecard(project)["properties"]["computed"]["ballot"] == "pass"
