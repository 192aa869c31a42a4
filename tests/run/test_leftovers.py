"""A run leaves nothing behind: every process a property starts ends with its run.

Every gate here runs with a marker of its own in its environment, which the fork
server, each run's keeper, each run and every process a run starts inherit (a
fork keeps its parent's environment block, an exec is handed it); leftovers are
found through /proc by that marker, in the environment block or the command
line, after the command has returned.  The same holds at the hermetic level
(``sandbox = "off"``: the keeper ends them) and in the OS sandbox (``sandbox =
"required"``: the run's PID namespace ends them), where the machine allows it.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gate_support import (
    KEEPS_STATE,
    MODES,
    _shared_pycache,
    make_project,
    project,
    scorecard,
)
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds processes through /proc")

MARK_VAR = "BALLOT_GUARD_TEST_LEFTOVER"



DAEMON = (
    "import os, sys, time\n"
    "if os.fork(): os._exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): os._exit(0)\n"
    "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
    "time.sleep(300)\n"
)


def leaky(body: str = "", *, pool: bool = True) -> str:
    """A passing property that leaves 4 processes running: a plain child, a daemon that
    left its session (double fork, setsid) and a pool of two busy workers (forks of
    the run; without ``pool``, only the first two)."""
    source = (
        "import multiprocessing, os, subprocess, sys, time\n"
        f"DAEMON = {DAEMON!r}\n"
        "POOLS = []\n"
        "def hold(path):\n"
        "    with open(path, 'a') as f:\n"
        "        f.write(f'{os.getpid()}\\n')\n"
        "    time.sleep(300)\n"
        "def test_leaks(tmp_path):\n"
        "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "    ready = tmp_path / 'ready'\n"
        "    subprocess.run([sys.executable, '-c', DAEMON, str(ready)], check=True)\n"
        "    while not ready.exists() or not ready.read_text():\n"
        "        time.sleep(0.01)\n"
    )
    if pool:
        source += (
            "    pool = multiprocessing.get_context('fork').Pool(2)\n"
            "    POOLS.append(pool)\n"
            "    mine = tmp_path / 'workers'\n"
            "    pool.map_async(hold, [str(mine)] * 2, chunksize=1)\n"
            "    while not mine.exists() or mine.read_text().count('\\n') < 2:\n"
            "        time.sleep(0.01)\n"
        )
    return source + body


def marked(marker: str) -> list[int]:
    """Live (not zombie) processes whose environment block or command line holds
    ``marker``."""
    found = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rindex(b")") + 2:][:1] == b"Z":
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                blob = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                blob += f.read()
        except OSError:
            continue  # gone meanwhile
        if needle in blob:
            found.append(int(name))
    return found


@pytest.fixture
def marker(monkeypatch: pytest.MonkeyPatch) -> str:
    """A marker every process of the gates of this test carries, checked to be seen:
    a process started with it in its environment is found, and gone once ended."""
    mark = f"bg-leftover-{uuid.uuid4().hex}"
    probe = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env={**os.environ, MARK_VAR: mark})
    try:  # looked for until seen (a loaded machine may show it late), never past 10 s
        deadline = time.monotonic() + 10.0
        while marked(mark) != [probe.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marked(mark) == [probe.pid]
    finally:
        probe.kill()
        probe.wait()
    assert marked(mark) == []
    monkeypatch.setenv(MARK_VAR, mark)
    return mark


def warning(name: str, count: int, runs: int) -> str:
    return (f"warning: {name} left {count} process(es) running after {runs} of {runs} runs; "
            "they were ended with their run (a property should stop what it starts)")


def isolation(repo: Repo) -> str:
    return str(scorecard(repo)["isolation"]["level"])


@pytest.mark.parametrize("mode", MODES)
def test_a_property_that_starts_processes_leaves_none_after_the_gate(
        project: Repo, marker: str, mode: str) -> None:
    make_project(project, {"leaky": leaky()}, table=mode)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert marked(marker) == []
    assert isolation(project) == ("hermetic" if "off" in mode else "sandbox")
    runs = scorecard(project)["properties"]["leaky"]["runs"]
    assert [(r["outcome"], r["ended"]) for r in runs] == [("pass", 4), ("pass", 4)]
    assert res.out.splitlines().count(warning("leaky", 8, 2)) == 1


def test_fresh_processes_leave_none_either(project: Repo, marker: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback (one fresh process per run) runs under the same keeper."""
    monkeypatch.setenv("BALLOT_GUARD_NO_FORK", "1")
    make_project(project, {"leaky": leaky()}, table='sandbox = "off"\n')
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert marked(marker) == []
    runs = scorecard(project)["properties"]["leaky"]["runs"]
    assert [(r["outcome"], r["ended"]) for r in runs] == [("pass", 4), ("pass", 4)]
    assert res.out.splitlines().count(warning("leaky", 8, 2)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_clean_property_reports_nothing_ended(project: Repo, marker: str, mode: str) -> None:
    spawns = ("import subprocess, sys\n"
              "def test_waits():\n"
              "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n")
    make_project(project, {"tidy": spawns}, table=mode)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert [r["ended"] for r in scorecard(project)["properties"]["tidy"]["runs"]] == [0, 0]
    assert "left" not in res.out
    assert marked(marker) == []


@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_left_after_unfreeze(project: Repo, marker: str, mode: str) -> None:
    make_project(project, {"leaky": leaky()}, table=mode, freeze={"frozen": ["leaky"]})
    res = run_cli(["unfreeze", "leaky", "--repeats", "2"], project.path)
    assert res.code == 0, res.out + res.err
    assert marked(marker) == []
    record = json.loads((project.path / "freeze_set.json").read_text())["history"][-1]
    assert record["runs"] == ["pass"] * 2
    assert res.out.splitlines().count(warning("leaky", 8, 2)) == 1


TIMED_OUT = [pytest.param('sandbox = "off"\n', False, id="hermetic-forked"),
             pytest.param('sandbox = "off"\n', True, id="hermetic-fresh"),
             pytest.param(*MODES[1].values, False, id="sandbox", marks=MODES[1].marks)]


@pytest.mark.parametrize(("mode", "fresh"), TIMED_OUT)
def test_nothing_is_left_after_a_timed_out_run(project: Repo, marker: str, mode: str,
                                               fresh: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if fresh:
        monkeypatch.setenv("BALLOT_GUARD_NO_FORK", "1")
    stuck = leaky(pool=False, body="    time.sleep(120)\n")
    make_project(project, {"stuck": stuck, "tidy": "def test_ok():\n    pass\n"},
                 table=mode + "timeout = 8\n")
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    assert marked(marker) == []
    runs = scorecard(project)["properties"]["stuck"]["runs"]
    assert [(r["outcome"], r["exit"]) for r in runs] == [("timeout", None)] * 2
    # both runs had started their two processes when the timeout came: both were ended
    assert [r["ended"] for r in runs] == [2, 2]
    assert res.out.splitlines().count(warning("stuck", 4, 2)) == 1


HANGS = ("import subprocess, sys, time\n"
         "def test_hangs():\n"
         "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
         "    time.sleep(300)\n")


def sleepers(marker: str) -> list[int]:
    """The marked processes the hanging property started (``time.sleep(300)``)."""
    found = []
    for pid in marked(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"time.sleep(300)" in f.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def gone_within(marker: str, seconds: float) -> list[int]:
    """What is still marked after ``seconds`` at most (nothing, as soon as it is so)."""
    deadline = time.monotonic() + seconds
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize(("mode", "fresh"), TIMED_OUT)
def test_nothing_is_left_after_the_gate_is_killed_hard(project: Repo, marker: str, mode: str,
                                                       fresh: bool) -> None:
    """A gate killed with SIGKILL (a cancelled CI job, the OOM killer) cannot end its runs,
    and a run's timeout was the gate's to enforce: the runner sees its requests' pipe
    close, each run's keeper sees the one it answers to gone, and they end the run and
    all it started, long before the run would have ended on its own."""
    make_project(project, {"hangs": HANGS}, table=mode + "timeout = 600\n")
    env = {**os.environ, **({"BALLOT_GUARD_NO_FORK": "1"} if fresh else {})}
    gate = subprocess.Popen([sys.executable, "-m", "ballot_guard", "gate"], cwd=project.path,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not sleepers(marker) and gate.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleepers(marker), "the property's run never started its process"
    finally:
        gate.kill()
        gate.wait()
    assert gone_within(marker, 15) == []


# --- a run prepared ahead waits at the idle priority ------------------------------------

OWN_POLICY = (
    "import os\n"
    "def test_runs_at_the_normal_priority():\n"
    "    assert os.sched_getscheduler(0) == os.SCHED_OTHER\n"
)


@pytest.fixture
def may_leave_idle() -> Iterator[None]:
    """RLIMIT_NICE 20: a process may leave the idle priority without CAP_SYS_NICE (which
    a user namespace, as the sandbox's, does not give for this)."""
    old = resource.getrlimit(resource.RLIMIT_NICE)
    try:
        resource.setrlimit(resource.RLIMIT_NICE, (20, 20))
    except (ValueError, OSError):
        pytest.skip("cannot raise RLIMIT_NICE here")
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NICE, old)


@pytest.mark.parametrize("mode", MODES)
def test_every_run_runs_at_the_normal_priority(project: Repo, mode: str,
                                               request: pytest.FixtureRequest) -> None:
    """Prepared ahead at the idle priority, every run goes at the normal one (in the
    sandbox: the run below the namespace's init, both forked idle)."""
    if "required" in mode:
        request.getfixturevalue("may_leave_idle")
    make_project(project, dict.fromkeys(("a", "b", "c", "d"), OWN_POLICY), table=mode)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


POLICY = (
    KEEPS_STATE +
    "import json, os, pathlib, time\n"
    "LOG = pathlib.Path({log!r})\n"
    "def policy(pid):\n"
    "    with open(f'/proc/{{pid}}/sched') as f:\n"
    "        return next(int(line.split(':')[1]) for line in f if line.startswith('policy'))\n"
    "def test_policy():\n"
    "    time.sleep(0.8)  # a run that mostly waits: the next one is prepared beside it\n"
    "    here = os.getcwd()\n"
    "    waiting = []\n"
    "    for name in os.listdir('/proc'):\n"
    "        if not name.isdigit() or int(name) == os.getpid():\n"
    "            continue\n"
    "        try:\n"
    "            if os.readlink(f'/proc/{{name}}/cwd') == here and \\\n"
    "                    b'forkserver.py' in open(f'/proc/{{name}}/cmdline', 'rb').read():\n"
    "                waiting.append(policy(name))\n"
    "        except (OSError, StopIteration):\n"
    "            pass\n"
    "    with LOG.open('a') as f:\n"
    "        f.write(json.dumps({{'mine': policy(os.getpid()), 'others': waiting}}) + '\\n')\n"
)


def test_a_run_prepared_ahead_waits_idle_and_runs_at_the_normal_priority(
        project: Repo, tmp_path: Path) -> None:
    """At the hermetic level a run sees the others: the one prepared ahead waits idle
    (the second gate knows from the first one's scorecard that the runs mostly wait)."""
    log = tmp_path / "policy.log"
    make_project(project, {n: POLICY.format(log=str(log)) for n in ("a", "b", "c")})
    assert run_cli(["gate"], project.path).code == 0
    log.unlink()
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 6
    assert {s["mine"] for s in seen} == {os.SCHED_OTHER}  # every run, prepared ahead or not
    if os.geteuid() == 0:  # leaving SCHED_IDLE needs CAP_SYS_NICE: root here
        # while runs 2 to 5 went, the next run waited, prepared, at SCHED_IDLE
        assert sum(os.SCHED_IDLE in s["others"] for s in seen) >= 4, seen
