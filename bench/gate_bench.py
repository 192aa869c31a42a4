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
without PYTHONDONTWRITEBYTECODE.  Gate figures are the median of --samples
runs; the article's method is timed once (it is already a sum of 40 processes).

    python bench/gate_bench.py [--samples 3] [--keep]
"""
from __future__ import annotations

import argparse
import os
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


def article(repo: Path, names: list[str], repeats: int) -> float:
    start = time.perf_counter()
    for name in names:
        for _ in range(repeats):
            subprocess.run([sys.executable, "-m", "pytest", f"properties/test_{name}.py", "-q"],
                           cwd=repo, env=env(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def gate(repo: Path, jobs: int, expect: int = 0) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ballot_guard", "gate", "--seed", "1",
                           "--jobs", str(jobs)], cwd=repo, env=env(), capture_output=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != expect:
        sys.exit(f"gate exited {proc.returncode}:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    return elapsed


def median_gate(repo: Path, jobs: int, samples: int) -> float:
    return statistics.median(gate(repo, jobs) for _ in range(samples))


def line(label: str, seconds: float, base: float, target: float) -> str:
    ratio = seconds / base
    verdict = "ok" if ratio <= target else "MISSED"
    return f"  {label:<28} {seconds:7.2f} s  {ratio:5.2f}x  (target <= {target}x: {verdict})"


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
        fresh = article(trivial, names, 2)
        serial = median_gate(trivial, 1, args.samples)
        two = median_gate(trivial, 2, args.samples)
        print(f"cpus: {os.cpu_count()}; python {sys.version.split()[0]}; "
              f"load average {os.getloadavg()[0]:.2f}")
        print("20 trivial properties x 2 repeats (Hypothesis installed):")
        print(f"  {'article: fresh pytest per run':<28} {fresh:7.2f} s  "
              f"({fresh / 40:.3f} s per run)")
        print(line("gate --jobs 1", serial, fresh, 0.3))
        print(line("gate --jobs 2", two, fresh, 0.15))

        sleepers = [f"s{i}" for i in range(5)]
        sleepy = project(base, "sleepy", {n: SLEEPY for n in sleepers})
        gate(sleepy, 1)
        floor1, floor2 = 2 * 5 * 0.5, 2 * 5 * 0.5 / 2
        print("5 properties sleeping 0.5 s x 2 repeats, against N*sum(sleep)/jobs:")
        print(line("gate --jobs 1", median_gate(sleepy, 1, args.samples), floor1, 1.1))
        print(line("gate --jobs 2", median_gate(sleepy, 2, args.samples), floor2, 1.2))
    finally:
        if args.keep:
            print(f"projects kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
