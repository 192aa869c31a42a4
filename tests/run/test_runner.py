"""Which interpreter runs the properties, and how a run is isolated."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ballot_guard.config import Config, load_worktree
from ballot_guard.errors import CannotJudge
from ballot_guard.run.runner import (
    RunnerInfo,
    _tampered,
    find_interpreter,
    outcome_of,
    pytest_args,
    resolve_runner,
)
from testing.gate_support import (
    FAIL,
    KEEPS_STATE,
    PASS,
    _shared_pycache,
    flip,
    make_project,
    project,
    scorecard,
)
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]


def fake_python(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "python"
    exe.symlink_to(sys.executable)
    (directory / "python3").symlink_to(sys.executable)
    return exe


def test_a_configured_python_is_used_as_given(tmp_path: Path) -> None:
    assert find_interpreter(str(tmp_path), Config(python=sys.executable), environ={}) == \
        sys.executable
    with pytest.raises(CannotJudge, match="python"):
        find_interpreter(str(tmp_path), Config(python=str(tmp_path / "nope")), environ={})
    with pytest.raises(CannotJudge, match="not found on PATH"):
        find_interpreter(str(tmp_path), Config(python="no-such-python-here"), environ={"PATH": ""})


def test_the_steps_skip_ballot_guards_own_environment(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    venv = tmp_path / "venv"
    py = fake_python(venv / "bin")
    env = {"VIRTUAL_ENV": str(venv), "PATH": ""}
    assert find_interpreter(str(root), Config(), environ=env) == str(py)
    # ballot-guard's own environment on VIRTUAL_ENV and PATH (what pre-commit does) is skipped
    own = {"VIRTUAL_ENV": sys.prefix, "PATH": os.path.join(sys.prefix, "bin")}
    dotvenv = fake_python(root / ".venv" / "bin")
    assert find_interpreter(str(root), Config(), environ=own) == str(dotvenv)
    # --rev: the temporary worktree has no .venv; the main checkout's is used
    tree = tmp_path / "tree"
    tree.mkdir()
    assert find_interpreter(str(root), Config(), environ=own, run_root=str(tree)) == str(dotvenv)
    (root / ".venv" / "bin" / "python").unlink()
    other = fake_python(tmp_path / "other-bin")
    env = {"VIRTUAL_ENV": sys.prefix, "PATH": os.pathsep.join(
        [os.path.join(sys.prefix, "bin"), str(other.parent)])}
    assert find_interpreter(str(root), Config(), environ=env) == str(other.parent / "python3")
    with pytest.raises(CannotJudge, match="set `python`"):
        find_interpreter(str(root), Config(), environ=own)


def test_a_dot_venv_that_is_ballot_guards_own_environment_is_skipped(tmp_path: Path) -> None:
    """A checkout's ``.venv`` that resolves to the environment ballot-guard runs in (a
    link to it) is not the project's: the next step decides."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    other = fake_python(tmp_path / "other-bin")
    env = {"PATH": str(other.parent)}
    assert find_interpreter(str(root), Config(), environ=env) == str(other.parent / "python3")
    with pytest.raises(CannotJudge, match="set `python`"):
        find_interpreter(str(root), Config(), environ={"PATH": os.path.join(sys.prefix, "bin")})


def test_an_interpreter_tracked_by_git_is_refused(project: Repo) -> None:
    make_project(project, {"ok": PASS}, python="tools/python", commit=False)
    project.symlink("tools/python", sys.executable)
    project.commit_all("ship our own judge")
    res = run_cli(["gate"], project.path)
    assert res.code == 4 and "tracked by git" in res.err
    with pytest.raises(CannotJudge, match="tracked"):
        resolve_runner(str(project.path), load_worktree(str(project.path)))


def test_an_interpreter_whose_environment_holds_tracked_files_is_refused(project: Repo) -> None:
    """A tracked sitecustomize.py in the runner's own virtualenv would run inside the judge."""
    make_project(project, {"ok": PASS}, python="venv/bin/python", commit=False)
    project.write("venv/pyvenv.cfg", "home = /usr/bin\n")
    project.symlink("venv/bin/python", sys.executable)
    project.write("venv/lib/site-packages/sitecustomize.py", "import os\n")
    project.git("add", "-f", "venv/lib/site-packages/sitecustomize.py", "venv/pyvenv.cfg")
    project.git("rm", "-q", "--cached", "--ignore-unmatch", "venv/bin/python")
    project.git("add", "pyproject.toml", "fixtures", "properties", "fixture_digest.txt")
    project.commit("vendor a site hook")
    assert "venv/bin/python" not in project.git("ls-files")
    res = run_cli(["gate"], project.path)
    assert res.code == 4 and "tracked by git" in res.err, res.out + res.err


def test_an_interpreter_without_pytest_is_4_naming_it(project: Repo, tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bare = str(venv / "bin" / "python")
    make_project(project, {"bad": FAIL}, python=bare)
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert bare in res.err and "pytest" in res.err
    card = scorecard(project)
    assert card["exit"] == 4 and card["properties"] == {} and card["digest"]["ok"] is True
    with pytest.raises(CannotJudge, match="cannot import pytest"):
        resolve_runner(str(project.path), load_worktree(str(project.path)))
    assert resolve_runner(str(project.path), Config(python=sys.executable)) == sys.executable


def test_a_crashing_run_is_an_error_never_a_failure(project: Repo) -> None:
    crash = "import os, signal\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    make_project(project, {"crash": crash, "bad": FAIL})
    res = run_cli(["gate"], project.path)
    assert res.code == 4
    runs = scorecard(project)["properties"]["crash"]["runs"]
    assert [r["outcome"] for r in runs] == ["error", "error"]


def test_the_fresh_process_fallback_votes_alike(project: Repo, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BALLOT_GUARD_NO_FORK", "1")
    make_project(project, {"ok": PASS, "bad": FAIL, "flaky": flip(tmp_path / "c")})
    res = run_cli(["gate", "--jobs", "2"], project.path)
    assert res.code == 1, res.out + res.err
    props = scorecard(project)["properties"]
    assert {n: p["ballot"] for n, p in props.items()} == {
        "ok": "pass", "bad": "fail", "flaky": "freeze"}


def test_filterwarnings_error_does_not_turn_preloading_into_a_failure(project: Repo) -> None:
    # The forkserver imports Hypothesis before pytest marks it for rewriting; under
    # filterwarnings = error that warning must not fail the run.
    table = ('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    prop = ("from hypothesis import given, strategies as st\n"
            "@given(st.integers())\n"
            "def test_ints(x):\n"
            "    assert x == x\n")
    make_project(project, {"ints": prop}, table="\n" + table)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


@pytest.mark.parametrize("code, timed_out, outcome", [
    (0, False, "pass"), (1, False, "fail"), (2, False, "error"), (3, False, "error"),
    (4, False, "error"), (5, False, "error"), (None, False, "error"), (70, False, "error"),
    (None, True, "timeout"), (0, True, "timeout"),
])
def test_pytest_exit_codes_map_to_outcomes(code: int | None, timed_out: bool,
                                           outcome: str) -> None:
    assert outcome_of(code, timed_out) == outcome


@pytest.mark.parametrize("where", ["conftest", "addopts-plugin", "property-module"])
def test_no_project_code_of_one_run_overlaps_another(project: Repo, tmp_path: Path,
                                                     where: str) -> None:
    # The next run's pytest start-up is prepared while a run goes; project code
    # (a conftest, or a -p plugin of the project that pytest imports earlier)
    # must still start only after the previous run ended.
    log = tmp_path / "events.log"
    logger = (KEEPS_STATE + f"import os, time\nwith open({str(log)!r}, 'a') as f:\n"
              "    f.write(f'start {os.getpid()}\\n')\n")
    prop = (KEEPS_STATE + "import os, time\n"
            "def test_slow():\n"
            "    time.sleep(0.3)\n"
            f"    with open({str(log)!r}, 'a') as f:\n"
            "        f.write(f'end {os.getpid()}\\n')\n")
    early = where == "addopts-plugin"
    # a plugin module of the project judges only when the oracle names it
    table = ('oracle_paths = ["localplug.py"]\n'
             '\n[tool.pytest.ini_options]\naddopts = "-p localplug"\n' if early else "")
    if where == "property-module":
        prop = logger + prop
    make_project(project, {"a": prop, "b": prop}, table="repeats = 3\n" + table, commit=False)
    if where != "property-module":
        project.write("localplug.py" if early else "conftest.py", logger)
    project.commit_all("project")
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    events = [line.split() for line in log.read_text().splitlines()]
    assert len(events) == 12
    for i in range(0, 12, 2):
        (kind1, pid1), (kind2, pid2) = events[i], events[i + 1]
        assert (kind1, kind2) == ("start", "end") and pid1 == pid2, events


def test_the_seed_reaches_every_plugin_that_takes_one() -> None:
    full = pytest_args("properties/test_a.py", RunnerInfo("py", "9", "6.1", True, True), 42)
    assert full[0] == "properties/test_a.py"
    assert "--hypothesis-seed=42" in full and "--randomly-seed=42" in full
    assert "no:cacheprovider" in full
    bare = pytest_args("properties/test_a.py", RunnerInfo("py", "9", None, False, True), 42)
    assert not [a for a in bare if "seed" in a]
    # a runner that does not load Hypothesis (no file of the checkout names it) is given
    # no option of its plugin: one would make every run import it
    unloaded = pytest_args("properties/test_a.py", RunnerInfo("py", "9", "6.1", True, True), 42,
                           hypothesis=False)
    assert "--randomly-seed=42" in unloaded and "no:hypothesispytest" in unloaded
    assert not [a for a in unloaded if a.startswith("--hypothesis")]


@pytest.mark.parametrize("key", ["late", "registered", "replaced", "unrepointable",
                                 "from_main"])
@pytest.mark.parametrize("value", [1, True, "x", {"a": 1}, 2.5])
def test_a_result_of_another_shape_still_counts_against_the_run(key: str, value: object) -> None:
    # the run's code can write its own result file: a value that is not a list of
    # names is a reason too (never a traceback, never ignored)
    reason = _tampered({"passed": 1, "collected": 1, key: value})
    assert isinstance(reason, str) and reason
    assert _tampered({"passed": 1, "collected": 1, key: []}) is None


def test_a_runner_that_dies_is_an_error_and_the_next_runs_go_on(project: Repo) -> None:
    # (in the OS sandbox the run's parent is its namespace's init, which it cannot kill)
    killer = (KEEPS_STATE + "import os, signal\n"
              "def test_kills_its_runner():\n"
              "    with open(f'/proc/{os.getppid()}/cmdline', 'rb') as f:\n"
              "        if b'forkserver.py' in f.read():\n"
              "            os.kill(os.getppid(), signal.SIGKILL)\n")
    make_project(project, {"a_killer": killer, "b_ok": PASS})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    props = scorecard(project)["properties"]
    assert props["a_killer"]["ballot"] == "error"
    assert props["b_ok"]["ballot"] == "pass"


TIMED = (KEEPS_STATE + "import os, time\n"
         "def ticks():\n"
         "    with open('/proc/self/stat') as f:\n"
         "        return int(f.read().rpartition(')')[2].split()[19])\n"
         "def test_timed():\n"
         "    {body}\n"
         "    with open('/proc/uptime') as f:\n"
         "        now = float(f.read().split()[0])\n"
         "    with open({log!r}, 'a') as f:\n"
         "        f.write(f'{{ticks() / os.sysconf(\"SC_CLK_TCK\")}} {{now}}\\n')\n")
SLEEPS = "time.sleep(1.0)"
COMPUTES = "end = time.process_time() + 0.4\n    while time.process_time() < end:\n        pass"


def _starts_and_ends(log: Path) -> list[tuple[float, float]]:
    """(when each run's process started, when its test ended), in run order."""
    runs = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    log.unlink()
    return runs  # type: ignore[return-value]


def test_beside_runs_that_wait_the_next_run_is_prepared_from_the_first_one(
        project: Repo, tmp_path: Path) -> None:
    """Runs that mostly wait (the last scorecard says so): each next run's process is
    started, and its preparation made, while the run before it goes, the first run of
    the gate included (a prepared run says when it is held, before any project code)."""
    log = tmp_path / "runs.log"
    make_project(project, {n: TIMED.format(body=SLEEPS, log=str(log)) for n in "ab"})
    assert run_cli(["gate"], project.path).code == 0  # no history yet: none overlaps
    card = scorecard(project)
    assert all(0 <= r["cpu"] < r["seconds"] / 4 for p in card["properties"].values()
               for r in p["runs"]), card
    _starts_and_ends(log)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    runs = _starts_and_ends(log)
    assert len(runs) == 4
    for (_, ended), (started, _) in itertools.pairwise(runs):
        assert started < ended, runs  # the first run included


def test_beside_a_run_that_computes_nothing_is_prepared(project: Repo,
                                                       tmp_path: Path) -> None:
    """A run on a CPU most of its time never shares the machine with the next run's
    preparation (what it measures of time would change): each next run's process
    starts only once the run before it has ended, in a first gate and in a second one
    that knows from the scorecard."""
    log = tmp_path / "runs.log"
    make_project(project, {n: TIMED.format(body=COMPUTES, log=str(log)) for n in "ab"})
    for _ in range(2):
        res = run_cli(["gate"], project.path)
        assert res.code == 0, res.out + res.err
        runs = _starts_and_ends(log)
        assert len(runs) == 4
        for (_, ended), (started, _) in itertools.pairwise(runs):
            assert started >= ended - 0.02, runs  # clock ticks of 10 ms
    assert all(r["cpu"] > r["seconds"] / 4 for p in scorecard(project)["properties"].values()
               for r in p["runs"])
