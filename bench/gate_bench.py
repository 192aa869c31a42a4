"""Gate speed against the article's method, printed as ratios in one run.

The article's method: one fresh ``python -m pytest properties/test_<name>.py -q``
process per run, one after another.  ballot-guard's gate: the whole
``python -m ballot_guard gate`` command (CLI start, git, pin check, runner
start, every run in a fresh process state, reports), serially and with
``--jobs 2``.

1. 20 trivial properties x 2 repeats, Hypothesis installed in the runner.
   Targets: gate <= 0.3x the article's method serially, <= 0.15x at --jobs 2.
2. 5 properties that each sleep 0.5 s x 2 repeats, against the floor
   N * sum(sleep) / jobs.  Targets: <= 1.1x at --jobs 1, <= 1.2x at --jobs 2.
3. Timing sensitivity: a property whose test times about 20 ms of busy work and
   reports the time (in its failure message, so every run says it, sandboxed or
   not).  2 copies x 2 repeats through the gate (hermetic and sandboxed, at
   --jobs 1 and 2, and with nothing prepared ahead), against one fresh plain
   pytest per run, the sides interleaved call by call (4 runs a call, about a second)
   so that a slow spell of the machine, which lasts seconds, meets every side alike,
   and their order rotated each round.  The
   budget is set afterwards: the 90th percentile of the plain runs of the same
   rounds; each side's fail rate is its share of runs over it, printed with the 95%
   interval of its gap to plain pytest, bootstrapped by call (a call's 4 runs are
   close in time, and a slow spell of the machine hits them together: they are not
   independent draws).  At 100 runs a side it is about +-8 points wide: two sides
   that differ in nothing read that far apart.
   Target: the gate --jobs 1 within 5 points.

Each gate row is printed twice: at the hermetic level (``sandbox = "off"``,
what the targets are set for) and with the OS sandbox on (``sandbox =
"required"``), followed by the sandbox's cost per run (wall and CPU, the
difference of the medians divided by the number of runs).

Both sides run with a warm bytecode cache (one warm-up each first) and
without PYTHONDONTWRITEBYTECODE.  Figures are medians of --samples rounds,
the two sides interleaved so that both see the same machine load; CPU time
(user + sys of every process waited for) is printed beside the wall time, as
it depends far less on what else the machine is doing.

    python bench/gate_bench.py [--samples 3] [--timing-rounds 25] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRIVIAL = "def test_holds():\n    assert sum([1, 2, 3]) == 6\n"
SLEEPY = "import time\n\ndef test_sleeps():\n    time.sleep(0.5)\n"
TIGHT = """import time

def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x

def test_in_time():
    start = time.perf_counter()
    work({n})
    took = time.perf_counter() - start
    assert False, f"took={{took:.6f}}"  # every run reports its time in its failure
"""
TOOK = re.compile(r"took=(\d+\.\d{6})(?!\d)")


def env() -> dict[str, str]:
    e = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "BALLOT_GUARD_PYCACHE",
                 "BALLOT_GUARD_NO_FORK", "BALLOT_GUARD_NO_AHEAD"):
        e.pop(name, None)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={
        **env(), "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"})


MODES = (("hermetic", "off"), ("sandbox", "required"))


def project(base: Path, name: str, props: dict[str, str], sandbox: str = "off") -> Path:
    from ballot_guard import config
    from ballot_guard.digest import pin
    from ballot_guard.digest.pin_file import write_pin

    repo = base / name
    (repo / "properties").mkdir(parents=True)
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "cases.json").write_text('{"n": 1}\n')
    (repo / "pyproject.toml").write_text(f'[tool.ballot_guard]\npython = "{sys.executable}"\n'
                                         f'sandbox = "{sandbox}"\n')
    (repo / ".gitignore").write_text(".pytest_cache/\n__pycache__/\n")
    for prop, source in props.items():
        (repo / "properties" / f"test_{prop}.py").write_text(source)
    git(repo, "init", "-q")
    cfg = config.load_worktree(str(repo))
    got = pin.digest_worktree(str(repo), cfg)
    assert got.digest is not None
    write_pin(str(repo), cfg.digest_file, got.digest)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench project")
    return repo


def timed(cmd: list[str], cwd: Path, expect: int | None = None) -> tuple[float, float]:
    """(wall, cpu) of one command, cpu counting every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if expect is not None and proc.returncode != expect:
        sys.exit(f"{cmd} exited {proc.returncode}:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def article(repo: Path, names: list[str], repeats: int) -> tuple[float, float]:
    wall = cpu = 0.0
    for name in names:
        for _ in range(repeats):
            w, c = timed([sys.executable, "-m", "pytest", f"properties/test_{name}.py", "-q"],
                         repo)
            wall, cpu = wall + w, cpu + c
    return wall, cpu


def gate(repo: Path, jobs: int) -> tuple[float, float]:
    return timed([sys.executable, "-m", "ballot_guard", "gate", "--seed", "1", "--jobs",
                  str(jobs)], repo, expect=0)


def busy_iterations(target: float = 0.020) -> int:
    """How many loop steps of TIGHT's ``work`` take ``target`` seconds here."""
    def work(n: int) -> int:
        x = 0
        for i in range(n):
            x += i * i
        return x
    best = min(_timed_call(work, 100_000) for _ in range(7))
    return max(1000, int(100_000 * target / best))


def _timed_call(fn: object, n: int) -> float:
    start = time.perf_counter()
    fn(n)  # type: ignore[operator]
    return time.perf_counter() - start


def plain_runs(repo: Path, names: list[str]) -> list[float]:
    """How long the busy work took in one fresh plain pytest per name."""
    took = []
    for name in names:
        proc = subprocess.run([sys.executable, "-m", "pytest", f"properties/test_{name}.py",
                               "-q", "-p", "no:cacheprovider"], cwd=repo,
                              env=env(), capture_output=True, check=False)
        found = TOOK.findall(proc.stdout.decode(errors="replace"))
        if proc.returncode != 1 or not found:
            sys.exit(f"plain pytest exited {proc.returncode}:\n{proc.stdout.decode()}")
        took.append(float(found[-1]))
    return took


def gate_runs(repo: Path, jobs: int, *, ahead: bool = True) -> list[float]:
    """How long the busy work took in each run of one gate (from its scorecard)."""
    extra = {} if ahead else {"BALLOT_GUARD_NO_AHEAD": "1"}
    proc = subprocess.run([sys.executable, "-m", "ballot_guard", "gate", "--jobs", str(jobs)],
                          cwd=repo, env={**env(), **extra}, capture_output=True, check=False)
    card = repo / ".ballot_guard" / "scorecard.json"
    if proc.returncode != 1 or not card.exists():
        sys.exit(f"gate exited {proc.returncode}:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    took = []
    for prop in json.loads(card.read_text())["properties"].values():
        for run in prop["runs"]:
            found = TOOK.findall(run.get("failure", ""))
            if run["outcome"] != "fail" or not found:
                sys.exit(f"a gate run did not report its time: {run}")
            took.append(float(found[-1]))
    return took


def timing(base: Path, rounds: int) -> None:
    """Every run of the tight property records how long its busy work took; the budget
    is set afterwards, from the plain runs of the same rounds (their 90th percentile:
    10% of them over it), and each side's fail rate is its share of runs over it, so
    the figure does not depend on a calibration taken at another load."""
    n = busy_iterations()
    names = ["t00", "t01"]
    repos = {level: project(base, f"tight-{level}",
                            {name: TIGHT.format(n=n) for name in names}, mode)
             for level, mode in MODES}
    plain_runs(repos["hermetic"], names)  # warm-up: bytecode, page cache
    for repo in repos.values():
        gate_runs(repo, 1)
    sides: dict[str, Callable[[], list[float]]] = {
        "plain pytest, one per run": (lambda: plain_runs(repos["hermetic"], names * 2)),
        "gate --jobs 1, hermetic": (lambda: gate_runs(repos["hermetic"], 1)),
        "  same, none prepared ahead": (lambda: gate_runs(repos["hermetic"], 1,
                                                      ahead=False)),
        "gate --jobs 1, sandbox": (lambda: gate_runs(repos["sandbox"], 1)),
        "gate --jobs 2, sandbox": (lambda: gate_runs(repos["sandbox"], 2))}
    calls: dict[str, list[list[float]]] = {side: [] for side in sides}
    loads = []
    order = list(sides)
    for r in range(rounds):  # interleaved, so every side sees the same load, and rotated,
        for side in order[r % len(order):] + order[:r % len(order)]:  # so that no side
            calls[side].append(sides[side]())  # always follows the same one
        loads.append(os.getloadavg()[0])
    got = {side: [t for call in runs for t in call] for side, runs in calls.items()}
    plain = sorted(got["plain pytest, one per run"])
    limit = plain[int(0.9 * len(plain))]

    def over(side: str) -> tuple[int, int]:
        return sum(t > limit for t in got[side]), len(got[side])

    base_rate = 100 * over("plain pytest, one per run")[0] / len(plain)

    def interval(side: str) -> tuple[float, float]:
        """The 95% interval of a side's rate minus plain pytest's, in points: calls
        (not runs) drawn again with replacement on both sides, 2,000 times."""
        rng = random.Random(0)

        def rate(runs: list[list[float]]) -> float:
            drawn = [t for call in rng.choices(runs, k=len(runs)) for t in call]
            return 100 * sum(t > limit for t in drawn) / max(1, len(drawn))
        gaps = sorted(rate(calls[side]) - rate(calls["plain pytest, one per run"])
                      for _ in range(2000))
        return gaps[49], gaps[1949]
    print(f"timing-tight property ({statistics.median(plain) * 1000:.1f} ms of busy work in "
          f"plain pytest, budget {limit * 1000:.1f} ms: the 90th percentile of the "
          f"{len(plain)} plain runs), {rounds} rounds, load average {min(loads):.2f} to "
          f"{max(loads):.2f}:")
    for side in sides:
        failed, runs = over(side)
        rate = 100 * failed / max(1, runs)
        text = (f"  {side:<28} {failed} of {runs} over budget ({rate:.0f}%), median "
                f"{statistics.median(got[side]) * 1000:.1f} ms")
        if "--jobs 1" in side:
            gap, (low, high) = rate - base_rate, interval(side)
            text += (f": {gap:+.0f} points, 95% interval by call {low:+.0f} to "
                     f"{high:+.0f} (target within 5: "
                     f"{'ok' if abs(gap) <= 5 else 'MISSED'})")
        print(text)


def med(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))


def line(label: str, got: tuple[float, float], base: tuple[float, float],
         target: float) -> str:
    ratio = got[0] / base[0]
    verdict = "ok" if ratio <= target else "MISSED"
    return (f"  {label:<40} {got[0]:6.2f} s wall {ratio:5.2f}x (target <= {target}x: {verdict});"
            f" cpu {got[1]:6.2f} s ({got[1] / base[1]:.2f}x)")


def cost(label: str, hermetic: tuple[float, float], sandbox: tuple[float, float],
         runs: int) -> str:
    return (f"  {label:<40} sandbox cost per run: {(sandbox[0] - hermetic[0]) / runs * 1000:+.1f}"
            f" ms wall, {(sandbox[1] - hermetic[1]) / runs * 1000:+.1f} ms cpu")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3, help="gate runs per figure (median)")
    ap.add_argument("--timing-rounds", type=int, default=25,
                    help="rounds of the timing-sensitivity row (4 runs a side each)")
    ap.add_argument("--only-timing", action="store_true", help="only the timing row")
    ap.add_argument("--keep", action="store_true", help="keep the temporary projects")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    try:
        if args.only_timing:
            timing(base, args.timing_rounds)
            return 0
        names = [f"p{i:02d}" for i in range(20)]
        trivial = {level: project(base, f"trivial-{level}", dict.fromkeys(names, TRIVIAL), mode)
                   for level, mode in MODES}
        article(trivial["hermetic"], names[:1], 1)
        for repo in trivial.values():
            gate(repo, 1)  # warm-up: the runs' bytecode cache
        fresh: list[tuple[float, float]] = []
        one: dict[str, list[tuple[float, float]]] = {level: [] for level, _ in MODES}
        two: dict[str, list[tuple[float, float]]] = {level: [] for level, _ in MODES}
        for _ in range(args.samples):  # interleaved, so every side sees the same load
            for level, repo in trivial.items():
                one[level].append(gate(repo, 1))
                two[level].append(gate(repo, 2))
            fresh.append(article(trivial["hermetic"], names, 2))
        print(f"cpus: {os.cpu_count()}; python {sys.version.split()[0]}; "
              f"load average {os.getloadavg()[0]:.2f}; medians of {args.samples}")
        print("20 trivial properties x 2 repeats (Hypothesis installed):")
        f = med(fresh)
        print(f"  {'article: fresh pytest per run':<30} {f[0]:6.2f} s wall ({f[0] / 40:.3f} s "
              f"per run); cpu {f[1]:6.2f} s")
        for level, _ in MODES:
            print(line(f"gate --jobs 1 ({level})", med(one[level]), f, 0.3))
            print(line(f"gate --jobs 2 ({level})", med(two[level]), f, 0.15))
        print(cost("--jobs 1", med(one["hermetic"]), med(one["sandbox"]), 40))
        print(cost("--jobs 2", med(two["hermetic"]), med(two["sandbox"]), 40))

        sleepers = [f"s{i}" for i in range(5)]
        sleepy = {level: project(base, f"sleepy-{level}", dict.fromkeys(sleepers, SLEEPY), mode)
                  for level, mode in MODES}
        got: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for repo in sleepy.values():
            gate(repo, 1)
        for _ in range(args.samples):
            for level, repo in sleepy.items():
                for jobs in (1, 2):
                    got.setdefault((level, jobs), []).append(gate(repo, jobs))
        print("5 properties sleeping 0.5 s x 2 repeats, against N*sum(sleep)/jobs "
              f"(load average {os.getloadavg()[0]:.2f}):")
        for level, _ in MODES:
            for jobs, floor, target in ((1, 5.0, 1.1), (2, 2.5, 1.2)):
                m = med(got[(level, jobs)])
                print(line(f"gate --jobs {jobs} ({level}, floor {floor} s)", m, (floor, m[1]),
                           target).split(";")[0] + f"; cpu {m[1]:.2f} s")
        for jobs in (1, 2):
            print(cost(f"--jobs {jobs}", med(got[("hermetic", jobs)]),
                       med(got[("sandbox", jobs)]), 10))
        timing(base, args.timing_rounds)
    finally:
        if args.keep:
            print(f"projects kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
