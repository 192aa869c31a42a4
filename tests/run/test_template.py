"""Session templates: at either isolation level, the runs of a directory with no conftest.py
are forked from a copy of the fork server that made pytest's session start once, up to
collection.  Each run still is a fresh process state of its own: its own file, its own
log and captured output, nothing of the template's descriptors, and nobody's verdict
changes."""
from __future__ import annotations

import os

import pytest

from testing.gate_support import MODES, make_project, project, scorecard
from testing.helpers import Repo, run_cli

__all__ = ["project"]

HERMETIC = 'sandbox = "off"\n'

# Each run records its keeper's parent and that process's parent: a run forked from a
# template has the template there, itself a child of the fork server.
ANCESTRY = ("import os\n\n\n"
            "def parent_of(pid):\n"
            "    with open(f'/proc/{pid}/stat') as f:\n"
            "        return int(f.read().rsplit(')', 1)[1].split()[1])\n\n\n"
            "def test_where_from():\n"
            "    keeper = os.getppid()\n"
            "    above = parent_of(keeper)\n"
            "    assert False, f'above={above} above2={parent_of(above)}'\n")


def _ancestry(card: dict) -> list[tuple[int, int]]:
    out = []
    for prop in card["properties"].values():
        for run in prop["runs"]:
            above = run["failure"].split("above=")[1].split()[0]
            above2 = run["failure"].split("above2=")[1].split()[0].rstrip("'\"")
            out.append((int(above), int(above2)))
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_runs_of_one_directory_are_forked_from_its_template(project: Repo, jobs: str) -> None:
    make_project(project, dict.fromkeys("abc", ANCESTRY), table=f"repeats = 3\n{HERMETIC}")
    res = run_cli(["gate", "--jobs", jobs], project.path)
    assert res.code == 1, res.out + res.err
    chains = _ancestry(scorecard(project))
    servers = {above for above, _ in chains}
    # the first run comes from the fork server; once it is held, every later run of the
    # directory comes from the template, a child of that same server
    templates = {above for above, above2 in chains if above2 in servers}
    assert len(templates) == 1, chains
    assert sum(above in templates for above, _ in chains) >= 3, chains


def test_without_templates_every_run_is_forked_from_the_server(
        project: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BALLOT_GUARD_NO_TEMPLATE", "1")
    make_project(project, dict.fromkeys("ab", ANCESTRY), table=f"repeats = 3\n{HERMETIC}")
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    chains = _ancestry(scorecard(project))
    assert len({above for above, _ in chains}) == 1, chains


def test_a_directory_with_a_conftest_gets_no_template(project: Repo) -> None:
    make_project(project, dict.fromkeys("ab", ANCESTRY), table=f"repeats = 3\n{HERMETIC}",
                 commit=False)
    project.write("properties/conftest.py", "")
    project.commit_all("a conftest beside the properties")
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    chains = _ancestry(scorecard(project))
    assert len({above for above, _ in chains}) == 1, chains


# What a run prints is captured into its own files: pytest's capture files are made
# by the template once, and each run gets fresh ones (runs of two properties go side by
# side at --jobs 2: with shared files, each would read the other's output, or lose its
# own to the other's truncation).
OWN_OUTPUT = ("import os, sys, time\n\n\n"
              "def test_says_{name}(request):\n"
              "    capman = request.config.pluginmanager.getplugin('capturemanager')\n"
              "    for i in range(5):\n"
              "        print('marker-{name}-out', flush=True)\n"
              "        print('marker-{name}-err', file=sys.stderr, flush=True)\n"
              "        os.write(1, b'marker-{name}-fd\\n')\n"
              "        time.sleep(0.05)\n"
              "    out, err = capman.read_global_capture()\n"
              "    assert sorted(out.split()) == ['marker-{name}-fd'] * 5 + "
              "['marker-{name}-out'] * 5, out\n"
              "    assert err.split() == ['marker-{name}-err'] * 5, err\n")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_run_captures_its_own_output_only(project: Repo, jobs: str, mode: str) -> None:
    names = ["a", "b", "c"]
    make_project(project, {n: OWN_OUTPUT.format(name=n) for n in names},
                 table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--jobs", jobs], project.path)
    assert res.code == 0, res.out + res.err
    card = scorecard(project)
    assert {n: [r["outcome"] for r in card["properties"][n]["runs"]] for n in names} == \
        {n: ["pass"] * 3 for n in names}


# A run holds no socket (the template's, through which runs are asked for) and nothing
# open on the template's own log.
NO_SOCKETS = ("import os, stat\n\n\n"
              "def test_no_socket_no_template_log():\n"
              "    found = []\n"
              "    for fd in os.listdir('/proc/self/fd'):\n"
              "        try:\n"
              "            st = os.fstat(int(fd))\n"
              "            where = os.readlink(f'/proc/self/fd/{fd}')\n"
              "        except OSError:\n"
              "            continue\n"
              "        if stat.S_ISSOCK(st.st_mode) or 'template-' in where:\n"
              "            found.append(where)\n"
              "    assert not found\n")


@pytest.mark.parametrize("mode", MODES)
def test_a_run_holds_no_socket_nor_the_templates_log(project: Repo, mode: str) -> None:
    make_project(project, dict.fromkeys("ab", NO_SOCKETS), table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--jobs", "2"], project.path)
    assert res.code == 0, res.out + res.err
    runs = [r for p in scorecard(project)["properties"].values() for r in p["runs"]]
    assert [r["outcome"] for r in runs] == ["pass"] * 6, runs


# Under the OS sandbox a run cannot see its parents (its own PID namespace), so it tells
# where it comes from by its session: a run forked from a template goes on in the
# template's pytest session, which has the template's own plugin registered.  It also
# records its pid in its namespace, what it finds in /dev/shm (where the template keeps
# its own capture files), and then writes there and into the checkout: as every
# sandboxed run, it must be PID 2, find /dev/shm empty (nothing of the template's, nor
# of an earlier run's), and nothing it writes into the checkout is seen outside.
SANDBOXED = ("import os\n\n\n"
             "def test_where_from(request):\n"
             "    names = {type(p).__name__ for p in "
             "request.config.pluginmanager.get_plugins()}\n"
             "    shm = sorted(os.listdir('/dev/shm'))\n"
             "    with open('/dev/shm/left_by_NAME', 'w') as f:\n"
             "        f.write('x')\n"
             "    try:\n"
             "        with open('left_by_NAME.txt', 'a') as f:\n"
             "            f.write('x')\n"
             "    except OSError:\n"
             "        pass\n"
             "    assert False, "
             "f'template={\"_Fork\" in names} shm={shm} pid={os.getpid()} end'\n")


@pytest.mark.parametrize("mode", MODES[1:])  # the sandbox's, skipped where it cannot be
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sandboxed_runs_are_forked_from_a_template_into_their_own_sandbox(
        project: Repo, jobs: str, mode: str) -> None:
    names = ["a", "b"]
    make_project(project, {n: SANDBOXED.replace("NAME", n) for n in names},
                 table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--jobs", jobs], project.path)
    assert res.code == 1, res.out + res.err
    failures = [r["failure"] for p in scorecard(project)["properties"].values()
                for r in p["runs"]]
    assert len(failures) == 6, failures
    # every run is PID 2 of its own namespace, and what it wrote stayed in its view
    assert all("shm=[] pid=2 end" in f for f in failures), failures
    assert not list(project.path.glob("left_by_*")), list(project.path.iterdir())
    # the first run of the directory comes from the server; later ones from the template
    from_template = sum("template=True" in f for f in failures)
    assert from_template >= 3, failures


# A template's session start is CPU work beside the runs: where releasing a run would
# leave no core for it, that run's "go" waits until the template serves (as a run is
# prepared ahead only where a core is left over).  Each run records when its test ran
# (the clock every process shares) and, forked from the template, when the template
# began to serve: at that moment at most one run fewer than the cores was running.
WINDOW = ("import os, time\n\n\n"
          "def test_window(request):\n"
          "    fork = [p for p in request.config.pluginmanager.get_plugins()\n"
          "            if type(p).__name__ == '_Fork']\n"
          "    start = time.monotonic()\n"
          "    time.sleep(0.3)\n"
          "    ready = fork[0].ready_at if fork else None\n"
          "    assert False, f'ready={ready} start={start} end={time.monotonic()} end'\n")


@pytest.mark.parametrize("mode", MODES)
def test_a_run_waits_while_a_template_starts_where_no_core_is_left(
        project: Repo, mode: str) -> None:
    cores = len(os.sched_getaffinity(0))
    names = [f"p{i}" for i in range(cores + 1)]
    make_project(project, dict.fromkeys(names, WINDOW), table=f"repeats = 2\n{mode}")
    res = run_cli(["gate", "--jobs", str(cores + 1)], project.path)
    assert res.code == 1, res.out + res.err
    runs = []
    for prop in scorecard(project)["properties"].values():
        for run in prop["runs"]:
            fields = dict(f.split("=") for f in run["failure"].split()
                          if f.startswith(("ready=", "start=", "end=")))
            runs.append(fields)
    readies = {float(r["ready"]) for r in runs if r["ready"] != "None"}
    assert len(readies) == 1, runs  # one template, and runs came from it
    ready = readies.pop()
    beside = [r for r in runs if r["ready"] == "None"
              and float(r["start"]) < ready < float(r["end"])]
    assert len(beside) <= cores - 1, (cores, ready, runs)
