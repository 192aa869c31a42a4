"""Every wait of the runner has a deadline: code under test that stops its fork server,
or floods the server's pipes, cannot hold the gate past its runs' timeouts."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from testing.gate_support import PASS, _shared_pycache, make_project, project, scorecard
from testing.helpers import Repo, run_bg

__all__ = ["_shared_pycache", "project"]

TIMEOUT = 3

# Each run notes its own pid and its parent's (the fork server), then attacks the server.
PRELUDE = """\
import os, pathlib, signal, time
PIDS = pathlib.Path({pids!r})

def _server():
    ppid = os.getppid()
    with open(f"/proc/{{ppid}}/cmdline", "rb") as f:
        assert b"forkserver.py" in f.read()
    (PIDS / f"run-{{os.getpid()}}").touch()
    (PIDS / f"server-{{ppid}}").touch()
    return ppid
"""

ATTACKS = {
    # stopped: the run's end can never be reported; the run itself passes at once
    "stop": "def test_stops_its_runner():\n"
            "    os.kill(_server(), signal.SIGSTOP)\n",
    # every pipe of the server filled with junk that holds no line end, then a long sleep
    "flood": "def test_floods_its_runner():\n"
             "    ppid = _server()\n"
             "    for fd in os.listdir(f'/proc/{ppid}/fd'):\n"
             "        path = f'/proc/{ppid}/fd/{fd}'\n"
             "        if not os.readlink(path).startswith('pipe:'):\n"
             "            continue\n"
             "        w = os.open(path, os.O_WRONLY | os.O_NONBLOCK)\n"
             "        try:\n"
             "            while os.write(w, b'{' * 65536):\n"
             "                pass\n"
             "        except BlockingIOError:\n"
             "            pass\n"
             "    time.sleep(600)\n",
}


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_run_that_attacks_its_runner_cannot_hold_the_gate(project: Repo, tmp_path: Path,
                                                             attack: str) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    make_project(project, {"attack": PRELUDE.format(pids=str(pids)) + ATTACKS[attack],
                           "later": PASS}, table=f'timeout = {TIMEOUT}\nsandbox = "off"\n')
    start = time.monotonic()
    res = run_bg(["gate", "--rev", "HEAD"], project.path, timeout=600)
    took = time.monotonic() - start
    props = scorecard(project)["properties"]
    assert [r["outcome"] for r in props["attack"]["runs"]] == ["timeout", "timeout"], res.out
    assert props["attack"]["ballot"] == "fail"
    assert props["later"]["ballot"] == "pass"  # a new server took over
    assert res.code == 1, res.out + res.err
    # each run of the attacker ends within its timeout and a few seconds (generous bounds:
    # the machine may be loaded), and so does the gate
    assert all(r["seconds"] < TIMEOUT + 30 for r in props["attack"]["runs"]), props
    assert took < 240, took
    noted = {p.name.partition("-")[0]: int(p.name.partition("-")[2]) for p in pids.iterdir()}
    seen = [int(p.name.partition("-")[2]) for p in pids.iterdir()]
    assert len(seen) == 4 and set(noted) == {"run", "server"}  # two runs, two servers
    time.sleep(0.2)
    assert [pid for pid in seen if not _gone(pid)] == []
    assert project.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_at_jobs_above_1_a_stopped_server_costs_the_others_nothing(project: Repo,
                                                                  tmp_path: Path) -> None:
    """A real SIGSTOP with --jobs 2: the voters whose runs were on the stopped server beside
    the attacker's (slow enough to be going when it stops) are run again alone and pass;
    the attacker's runs, alone too, are timeouts: its ballot is fail, and the gate ends."""
    pids = tmp_path / "pids"
    pids.mkdir()
    timeout = 10  # room for the others' runs on a loaded machine: only the attacker's pass it
    slow = "import time\n\ndef test_slow():\n    time.sleep(1.5)\n"
    make_project(project, {"attack": PRELUDE.format(pids=str(pids)) + ATTACKS["stop"],
                           "slow_a": slow, "slow_b": slow, "later": PASS},
                 table=f'timeout = {timeout}\nsandbox = "off"\n')
    start = time.monotonic()
    res = run_bg(["gate", "--rev", "HEAD", "--jobs", "2"], project.path, timeout=600)
    took = time.monotonic() - start
    props = scorecard(project)["properties"]
    assert [r["outcome"] for r in props["attack"]["runs"]] == ["timeout", "timeout"], res.out
    assert {n: p["ballot"] for n, p in props.items()} == {
        "attack": "fail", "slow_a": "pass", "slow_b": "pass", "later": "pass"}, res.out
    assert res.code == 1, res.out + res.err
    assert all(r["seconds"] < timeout + 30 for r in props["attack"]["runs"]), props
    assert took < 400, took
    servers = [int(p.name.partition("-")[2]) for p in pids.iterdir()
               if p.name.startswith("server-")]
    assert len(set(servers)) >= 2  # the stopped server was replaced
    time.sleep(0.2)
    seen = [int(p.name.partition("-")[2]) for p in pids.iterdir()]
    assert [pid for pid in seen if not _gone(pid)] == []
    assert project.git("worktree", "list", "--porcelain").count("worktree ") == 1
