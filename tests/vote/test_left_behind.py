"""A gate killed hard cannot remove its run directory; the next gate does, never a live
gate's (each holds its own through a lock the kernel drops when the process ends)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from testing.gate_support import _shared_pycache, make_project, project
from testing.helpers import Repo, run_cli, unprivileged

__all__ = ["_shared_pycache", "project"]

HOLDS = (
    "import sys, time\n"
    "from ballot_guard.scratch import new_run_dir\n"
    "path, fd = new_run_dir(sys.argv[1])\n"
    "print(path, flush=True)\n"
    "time.sleep(600)\n"
)


def waits_while(flag: Path) -> str:
    return (
        "import pathlib, time\n"
        "def test_waits():\n"
        f"    while pathlib.Path({str(flag)!r}).exists():\n"
        "        time.sleep(0.05)\n"
    )


def runs(sdir: Path) -> list[str]:
    return sorted(p.name for p in sdir.glob("run-*"))


def test_a_killed_gates_run_directory_goes_with_the_next_gate_and_a_live_ones_stays(
        project: Repo, tmp_path: Path) -> None:
    flag = tmp_path / "hold"
    flag.write_text("")
    make_project(project, {"waits": waits_while(flag)})
    sdir = project.path / ".ballot_guard"
    sdir.mkdir()
    # a gate that stays alive throughout (it makes its directory as a gate does)
    live = subprocess.Popen([sys.executable, "-c", HOLDS, str(sdir)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert live.stdout is not None
        held = Path(live.stdout.readline().strip()).name
        killed = subprocess.Popen([sys.executable, "-m", "ballot_guard", "gate"],
                                  cwd=project.path, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not list(sdir.glob("run-*/run-*")) and time.monotonic() < deadline:
                time.sleep(0.05)  # its first run's directory: the gate is voting
        finally:
            killed.kill()
            killed.wait()
        [dead] = [name for name in runs(sdir) if name != held]
        # what a run may leave in it: directories nobody may list or write
        for name, mode in (("unlistable", 0o300), ("unwritable", 0o500), ("closed", 0o000)):
            d = sdir / dead / name
            d.mkdir()
            (d / "file").write_text("x")
            d.chmod(mode)
        flag.unlink()
        res = unprivileged(["gate"], project.path)  # modes bind it, as any user but root
        assert res.code == 0, res.out + res.err
        assert runs(sdir) == [held]  # the killed gate's is gone; the live one's kept
    finally:
        live.kill()
        live.wait()
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert runs(sdir) == []
