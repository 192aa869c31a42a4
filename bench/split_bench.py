"""split timings next to doing the same split by hand with git, in one run.

    python bench/split_bench.py [--runs N] [--files N]

For a staged change of 6 files and one of N files (half under ``properties/``,
half under ``src/``), compare:

- ``ballot-guard split`` (a real process: classify, temporary index, commit-tree,
  update-ref), with
- the by-hand split the scope report suggests: ``git restore --staged -- src``,
  ``git commit --no-verify``, ``git add -- src`` (three real git processes).

Between runs HEAD is moved back with ``git update-ref``; split leaves the index
as it was, and the by-hand sequence re-stages what it unstaged.  Every figure
is the median wall time of N runs.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BG = [sys.executable, "-m", "ballot_guard"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def median_of(runs: int, func: Callable[[], object], reset: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
        reset()
    return statistics.median(times)


def make_repo(path: Path, files: int) -> str:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Bench")
    git(path, "config", "user.email", "bench@example.com")
    half = max(1, files // 2)
    for i in range(half):
        for top in ("properties", "src"):
            p = path / top / f"d{i % 50}" / f"f{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"VALUE = {i}\n")
    (path / "fixture_digest.txt").write_text("0" * 64 + "\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-verify", "-m", "base")
    for p in path.glob("*/d*/f*.py"):
        p.write_text(p.read_text() + "CHANGED = True\n")
    git(path, "add", "-A")
    return git(path, "rev-parse", "HEAD").strip()


def bench(root: Path, files: int, runs: int) -> tuple[float, float]:
    repo = root / f"repo{files}"
    base = make_repo(repo, files)

    def reset() -> None:
        git(repo, "update-ref", "HEAD", base)

    def by_tool() -> None:
        subprocess.run([*BG, "split"], cwd=repo, check=True, capture_output=True)

    def by_hand() -> None:
        git(repo, "restore", "--staged", "--", "src")
        git(repo, "commit", "-q", "--no-verify", "-m", "oracle part")
        git(repo, "add", "--", "src")

    tool = median_of(runs, by_tool, reset)
    hand = median_of(runs, by_hand, reset)
    return tool, hand


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in (6, args.files):
            tool, hand = bench(Path(tmp), n, args.runs)
            print(f"split of a {n}-file staged change: ballot-guard split {tool * 1000:.0f} ms, "
                  f"by hand (restore --staged, commit, add) {hand * 1000:.0f} ms, "
                  f"ratio {tool / hand:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
