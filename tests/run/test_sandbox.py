"""The OS sandbox of the runs, on this machine's real namespaces, through real gates.

Each property checks its own view from inside and fails when the sandbox does not
hold; the test then checks the files on disk and the processes left afterwards.
The refusal path is real too: the gate runs in a user namespace whose
``user.max_user_namespaces`` is 0, as on hosts that disable user namespaces.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid

import pytest

from testing.gate_support import (
    PASS,
    _shared_pycache,
    keys_follow_the_types,
    make_project,
    project,
    sandbox_works,
    scorecard,
)
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]


pytestmark = pytest.mark.skipif(not sandbox_works(), reason="no user namespaces here")

SANDBOXED = "; sandbox (user, mount, pid, ipc, net namespaces; no network)"


def gate(project: Repo, *args: str) -> tuple[int, str]:
    res = run_cli(["gate", *args], project.path)
    return res.code, res.out + res.err


def test_the_scorecard_and_the_header_name_the_sandbox(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    code, out = gate(project)
    assert code == 0, out
    assert out.splitlines()[0].endswith(SANDBOXED)
    assert scorecard(project)["isolation"] == {
        "level": "sandbox", "namespaces": ["user", "mount", "pid", "ipc", "net"],
        "network": False, "reason": None}
    keys_follow_the_types(scorecard(project))


def test_sandbox_off_is_recorded_as_the_hermetic_level(project: Repo) -> None:
    make_project(project, {"ok": PASS}, table='sandbox = "off"\n')
    code, out = gate(project)
    assert code == 0, out
    assert out.splitlines()[0].endswith('; hermetic, no OS sandbox: sandbox = "off"')
    assert scorecard(project)["isolation"]["level"] == "hermetic"
    keys_follow_the_types(scorecard(project))


def _sees_no_other_process() -> str:
    return ("import os\n"
            f"GATE = {os.getpid()}\n"
            "def test_alone():\n"
            "    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "    assert pids == [1, 2] and os.getpid() == 2, pids\n"
            "    assert not os.path.exists(f'/proc/{GATE}')\n")


@pytest.mark.parametrize("sandbox, expect", [("auto", 0), ("off", 1)])
def test_a_run_sees_only_its_own_processes(project: Repo, sandbox: str, expect: int) -> None:
    make_project(project, {"alone": _sees_no_other_process()},
                 table=f'sandbox = "{sandbox}"\n')
    code, out = gate(project, "--jobs", "2")
    assert code == expect, out


def test_a_write_to_the_checkout_vanishes_with_the_run(project: Repo) -> None:
    """Each run finds the checkout as committed (so every run passes) and may write in
    it; afterwards the files on disk are as they were, in the main checkout too."""
    writer = ("import pathlib\n"
              "ROOT = pathlib.Path(__file__).resolve().parent.parent\n"
              "def test_writes():\n"
              "    app = ROOT / 'src' / 'app.py'\n"
              "    assert app.read_text() == 'LIMIT = 3\\n'\n"
              "    assert not (ROOT / 'planted.py').exists()\n"
              "    app.write_text('LIMIT = 4\\n')\n"
              "    (ROOT / 'planted.py').write_text('x = 1\\n')\n"
              "    (ROOT / 'fixtures' / 'cases.json').write_text('{}')\n"
              "    assert app.read_text() == 'LIMIT = 4\\n'\n")
    project.write("src/app.py", "LIMIT = 3\n")
    make_project(project, {"writes": writer}, table="repeats = 3\n")
    for args in ([], ["--rev", "HEAD"]):
        code, out = gate(project, *args)
        assert code == 0, out
        assert (project.path / "src" / "app.py").read_text() == "LIMIT = 3\n"
        assert not (project.path / "planted.py").exists()
        assert (project.path / "fixtures" / "cases.json").read_text() == '{"retries": 3}\n'
        assert project.git("status", "--porcelain") == ""


def test_the_main_checkout_is_untouched_from_a_rev_worktree(project: Repo) -> None:
    """Under --rev the runs see the main checkout copy-on-write as well."""
    main = str(project.path)
    writer = ("import pathlib\n"
              f"MAIN = pathlib.Path({main!r})\n"
              "def test_writes_main():\n"
              "    assert pathlib.Path.cwd().resolve() != MAIN.resolve()\n"
              "    (MAIN / 'src' / 'app.py').write_text('LIMIT = 4\\n')\n")
    project.write("src/app.py", "LIMIT = 3\n")
    make_project(project, {"main": writer})
    code, out = gate(project, "--rev", "HEAD")
    assert code == 0, out
    assert (project.path / "src" / "app.py").read_text() == "LIMIT = 3\n"


def test_the_git_directory_is_read_only_to_runs(project: Repo) -> None:
    """Issue 15: a run cannot set core.hooksPath or plant a hook, in the main checkout
    or from a --rev worktree (whose common dir is the main .git)."""
    prop = ("import os, pathlib, subprocess\n"
            "def test_git_dir():\n"
            "    common = subprocess.run(['git', 'rev-parse', '--path-format=absolute',\n"
            "                             '--git-common-dir'], capture_output=True, text=True,\n"
            "                            check=True).stdout.strip()\n"
            "    for rel in ('config', 'hooks/pre-commit', 'info/attributes'):\n"
            "        try:\n"
            "            with open(os.path.join(common, rel), 'a') as f:\n"
            "                f.write('\\n[core]\\n\\thooksPath = /dev/null\\n')\n"
            "        except OSError as exc:\n"
            "            assert exc.errno == 30, exc  # EROFS\n"
            "        else:\n"
            "            raise AssertionError(f'wrote {rel}')\n"
            "    res = subprocess.run(['git', 'config', 'core.hooksPath', '/dev/null'])\n"
            "    assert res.returncode != 0\n")
    make_project(project, {"gitdir": prop})
    hook = project.path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    (project.path / ".git" / "info").mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    config_before = (project.path / ".git" / "config").read_bytes()
    for args in ([], ["--rev", "HEAD"]):
        code, out = gate(project, *args)
        assert code == 0, out
        assert (project.path / ".git" / "config").read_bytes() == config_before
        assert hook.read_text() == "#!/bin/sh\nexit 0\n"
        assert not (project.path / ".git" / "info" / "attributes").exists()
        assert project.git("config", "--get", "core.hooksPath", check=False).strip() == ""


def test_a_run_cannot_undo_its_view(project: Repo) -> None:
    prop = ("import ctypes, os, pathlib\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "def test_undo():\n"
            "    root = str(pathlib.Path(__file__).resolve().parent.parent).encode()\n"
            "    assert libc.umount2(root, 2) != 0\n"
            "    assert ctypes.get_errno() == 1  # EPERM: no capability left\n"
            "    assert libc.mount(None, b'/', None, 32 | 4096, None) != 0  # remount rw\n"
            "    assert libc.unshare(0x20000) != 0\n")
    make_project(project, {"undo": prop})
    code, out = gate(project)
    assert code == 0, out


def test_a_run_has_a_private_empty_tmp(project: Repo) -> None:
    fd, outside = __import__("tempfile").mkstemp(prefix="ballot-guard-outside-", dir="/tmp")
    os.close(fd)
    try:
        prop = ("import os\n"
                f"OUTSIDE = {outside!r}\n"
                "def test_tmp():\n"
                "    assert not os.path.exists(OUTSIDE)\n"
                "    assert not os.path.exists('/tmp/left-by-a-run')\n"
                "    open('/tmp/left-by-a-run', 'w').close()\n"
                "    assert not os.path.exists('/dev/shm/left-by-a-run')\n"
                "    open('/dev/shm/left-by-a-run', 'w').close()\n")
        make_project(project, {"tmp": prop}, table="repeats = 3\n")
        code, out = gate(project)
        assert code == 0, out
        assert not os.path.exists("/tmp/left-by-a-run")
        assert not os.path.exists("/dev/shm/left-by-a-run")
    finally:
        os.unlink(outside)


def test_a_run_sees_no_other_run_of_the_gate(project: Repo) -> None:
    """In the gate's run directory a run finds its own directory and nothing else: not
    the runs going beside it (``--jobs 2``), nor what is left of the runs before it
    (their directories wait in the trash, which no run can see)."""
    prop = ("import os\n"
            "def test_alone():\n"
            "    mine = os.path.dirname(os.environ['TMPDIR'])\n"
            "    open(os.path.join(mine, 'left-by-a-run'), 'w').close()\n"
            "    assert os.listdir(os.path.dirname(mine)) == [os.path.basename(mine)]\n")
    make_project(project, {"a": prop, "b": prop, "c": prop}, table="repeats = 3\n")
    code, out = gate(project, "--jobs", "2")
    assert code == 0, out
    assert [r["outcome"] for p in scorecard(project)["properties"].values()
            for r in p["runs"]] == ["pass"] * 9
    assert sorted(os.listdir(project.path / ".ballot_guard")) == [".gitignore",
                                                                  "scorecard.json"]


def test_a_run_holds_no_descriptor_of_the_runner(project: Repo) -> None:
    prop = ("import os, stat\n"
            "def test_fds():\n"
            "    pipes = [fd for fd in map(int, os.listdir('/proc/self/fd'))\n"
            "             if fd > 2 and os.path.exists(f'/proc/self/fd/{fd}')\n"
            "             and stat.S_ISFIFO(os.stat(f'/proc/self/fd/{fd}').st_mode)]\n"
            "    assert pipes == [], pipes\n")
    make_project(project, {"a": prop, "b": prop})
    code, out = gate(project, "--jobs", "2")
    assert code == 0, out


@pytest.mark.parametrize("network, expect", [(False, 1), (True, 0)])
def test_no_network_unless_asked(project: Repo, network: bool, expect: int) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        port = server.getsockname()[1]
        prop = ("import socket\n"
                "def test_connects():\n"
                f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n")
        make_project(project, {"net": prop},
                     table=f"network = {'true' if network else 'false'}\n")
        code, out = gate(project)
        assert code == expect, out
        if not network:
            assert "Network is unreachable" in out
        assert scorecard(project)["isolation"]["network"] is network
    finally:
        server.close()


def _running_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_what_a_run_starts_ends_with_it_and_is_counted(project: Repo) -> None:
    """Two workers, one in a session of its own (out of the run's process group), live
    on after the property returns: the end of the run's PID namespace ends both."""
    marker = f"ballot-guard-leak-{uuid.uuid4().hex}"
    prop = ("import subprocess, sys\n"
            "def test_starts_workers():\n"
            "    worker = [sys.executable, '-c', 'import time; time.sleep(300)', "
            f"{marker!r}]\n"
            "    subprocess.Popen(worker, start_new_session=True)\n"
            "    subprocess.Popen(worker)\n")
    make_project(project, {"leaks": prop})
    code, out = gate(project)
    assert code == 0, out
    assert _running_with(marker) == []
    runs = scorecard(project)["properties"]["leaks"]["runs"]
    assert [r["ended"] for r in runs] == [2, 2]


def test_a_clean_run_ended_nothing(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    code, out = gate(project)
    assert code == 0, out
    assert [r["ended"] for r in scorecard(project)["properties"]["ok"]["runs"]] == [0, 0]


def _refusing(project: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """The gate as a user runs it, on a host whose kernel refuses user namespaces."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1)")
    script = ('echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -m ballot_guard '
              '"$@"')
    return subprocess.run([unshare, "--user", "--map-root-user", "--fork", "sh", "-c", script,
                           sys.executable, "gate", *args], cwd=project.path, text=True,
                          capture_output=True, timeout=300, check=False)


def test_auto_falls_back_to_the_hermetic_level_and_says_so(project: Repo) -> None:
    make_project(project, {"alone": _sees_no_other_process(), "ok": PASS},
                 table='sandbox = "auto"\n')
    proc = _refusing(project, "--property", "ok")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header = proc.stdout.splitlines()[0]
    assert header.endswith("; hermetic, no OS sandbox: the OS refused the sandbox "
                           "(unshare(user, mount): No space left on device)"), header
    isolation = scorecard(project)["isolation"]
    assert isolation["level"] == "hermetic" and isolation["namespaces"] == []
    assert "No space left on device" in isolation["reason"]
    proc = _refusing(project, "--property", "alone")
    assert proc.returncode == 1, proc.stdout  # the check that needs the sandbox fails


def test_required_is_4_when_the_sandbox_is_refused(project: Repo) -> None:
    make_project(project, {"ok": PASS}, table='sandbox = "required"\n')
    proc = _refusing(project)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [('ballot-guard: error: sandbox = "required" but the runs cannot be sandboxed: '
                      'the OS refused the sandbox (unshare(user, mount): No space left on '
                      'device)')], proc.stderr
    assert proc.stdout == ""
    card = scorecard(project)
    assert card["exit"] == 4 and card["properties"] == {}
    assert card["isolation"]["level"] == "hermetic"
    code, out = gate(project)  # where namespaces are allowed, required is met
    assert code == 0, out


@pytest.mark.parametrize("table, message", [
    ('sandbox = "maybe"', "sandbox: must be one of 'auto', 'required', 'off', got 'maybe'"),
    ("sandbox = true", "sandbox: must be one of 'auto', 'required', 'off', got True"),
    ('network = "yes"', "network: must be true or false, got 'yes'"),
])
def test_bad_sandbox_keys_are_config_errors(project: Repo, table: str, message: str) -> None:
    make_project(project, {"ok": PASS})
    with (project.path / "pyproject.toml").open("a") as f:
        f.write(table + "\n")
    project.commit_all("bad config")
    res = run_cli(["gate"], project.path)
    assert res.code == 4
    assert message in res.err, res.err
