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


def project(base: Path, name: str, props: dict[str, str]) -> Path:
    from ballot_guard import config, pin

    repo = base / name
    (repo / "properties").mkdir(parents=True)
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "cases.json").write_text('{"n": 1}\n')
    (repo / "pyproject.toml").write_text(f'[tool.ballot_guard]\npython = "{sys.executable}"\n')
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
    return (f"  {label:<30} {got[0]:6.2f} s wall {ratio:5.2f}x (target <= {target}x: {verdict});"
            f" cpu {got[1]:6.2f} s ({got[1] / base[1]:.2f}x)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3, help="gate runs per figure (median)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary projects")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    try:
        names = [f"p{i:02d}" for i in range(20)]
        trivial = project(base, "trivial", {n: TRIVIAL for n in names})
        article(trivial, names[:1], 1)
        gate(trivial, 1)  # warm-up: the runs' bytecode cache
        fresh, one, two = [], [], []
        for _ in range(args.samples):  # interleaved, so both sides see the same load
            one.append(gate(trivial, 1))
            two.append(gate(trivial, 2))
            fresh.append(article(trivial, names, 2))
        print(f"cpus: {os.cpu_count()}; python {sys.version.split()[0]}; "
              f"load average {os.getloadavg()[0]:.2f}; medians of {args.samples}")
        print("20 trivial properties x 2 repeats (Hypothesis installed):")
        f = med(fresh)
        print(f"  {'article: fresh pytest per run':<30} {f[0]:6.2f} s wall ({f[0] / 40:.3f} s "
              f"per run); cpu {f[1]:6.2f} s")
        print(line("gate --jobs 1", med(one), f, 0.3))
        print(line("gate --jobs 2", med(two), f, 0.15))

        sleepers = [f"s{i}" for i in range(5)]
        sleepy = project(base, "sleepy", {n: SLEEPY for n in sleepers})
        gate(sleepy, 1)
        one = [gate(sleepy, 1) for _ in range(args.samples)]
        two = [gate(sleepy, 2) for _ in range(args.samples)]
        print("5 properties sleeping 0.5 s x 2 repeats, against N*sum(sleep)/jobs "
              f"(load average {os.getloadavg()[0]:.2f}):")
        for label, got, floor, target in (("gate --jobs 1 (floor 5.0 s)", med(one), 5.0, 1.1),
                                          ("gate --jobs 2 (floor 2.5 s)", med(two), 2.5, 1.2)):
            print(line(label, got, (floor, got[1]), target).split(";")[0]
                  + f"; cpu {got[1]:.2f} s")
    finally:
        if args.keep:
            print(f"projects kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
