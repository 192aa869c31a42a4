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

Each gate row is printed twice: at the hermetic level (``sandbox = "off"``,
what the targets are set for) and with the OS sandbox on (``sandbox =
"required"``), followed by the sandbox's cost per run (wall and CPU, the
difference of the medians divided by the number of runs).

Both sides run with a warm bytecode cache (one warm-up each first) and
without PYTHONDONTWRITEBYTECODE.  Figures are medians of --samples rounds,
the two sides interleaved so that both see the same machine load; CPU time
(user + sys of every process waited for) is printed beside the wall time, as
it depends far less on what else the machine is doing.

    python bench/gate_bench.py [--samples 3] [--keep]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRIVIAL = "def test_holds():\n    assert sum([1, 2, 3]) == 6\n"
SLEEPY = "import time\n\ndef test_sleeps():\n    time.sleep(0.5)\n"


def env() -> dict[str, str]:
    e = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "BALLOT_GUARD_PYCACHE",
                 "BALLOT_GUARD_NO_FORK"):
        e.pop(name, None)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={
        **env(), "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"})


MODES = (("hermetic", "off"), ("sandbox", "required"))


def project(base: Path, name: str, props: dict[str, str], sandbox: str = "off") -> Path:
    from ballot_guard import config, pin

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
    pin.write_pin(str(repo), cfg.digest_file, got.digest)
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
    ap.add_argument("--keep", action="store_true", help="keep the temporary projects")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    try:
        names = [f"p{i:02d}" for i in range(20)]
        trivial = {level: project(base, f"trivial-{level}", {n: TRIVIAL for n in names}, mode)
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
        sleepy = {level: project(base, f"sleepy-{level}", {n: SLEEPY for n in sleepers}, mode)
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
    finally:
        if args.keep:
            print(f"projects kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
