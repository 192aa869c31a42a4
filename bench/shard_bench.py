"""Sharded gate speed on one machine, and the merge's own cost, printed as ratios.

1. N shard gates (`gate --shard K/N`, each in its own worktree, as N machines
   would run them) started at once, against one gate at `--jobs N`, on the same
   project (12 properties sleeping 0.3 s x 2 repeats). On one machine the
   shards compete for the same cores, so this shows the shards' fixed cost
   (each starts its own CLI, pin check and runner), not the speed-up a real
   matrix of N machines gives: that is roughly one gate's time divided by N,
   plus one shard's fixed cost.
2. `gate --merge` of shard scorecards holding 1,000 voters (target: under 0.5 s).

    python bench/shard_bench.py [--samples 3] [--shards 2]
"""
from __future__ import annotations

import argparse
import json
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

from bench.gate_bench import env, git, project  # noqa: E402

SLEEPY = "import time\n\ndef test_sleeps():\n    time.sleep(0.3)\n"


def cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "ballot_guard", *args]


def one_gate(repo: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run(cmd("gate", "--seed", "1", "--jobs", str(jobs)), cwd=repo, env=env(),
                   capture_output=True, check=True)
    return time.perf_counter() - start


def shards(trees: list[Path], out: Path) -> float:
    n = len(trees)
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd("gate", "--seed", "1", "--shard", f"{k}/{n}", "--scorecard",
                                  str(out / f"s{k}.json")), cwd=tree, env=env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for k, tree in enumerate(trees, 1)]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - start
    if any(codes):
        sys.exit(f"a shard exited {codes}")
    return wall


def synthetic_cards(repo: Path, out: Path, voters: int, n: int) -> list[Path]:
    """Shard scorecards of 1,000 voters, made by the product's own assignment code."""
    from ballot_guard.config import load_worktree
    from ballot_guard.vote.shard import ShardSpec, assign, record

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()
    pinned = (repo / "fixture_digest.txt").read_text().strip()
    names = [f"v{i:04d}" for i in range(voters)]
    plan = assign(names, n)
    config = load_worktree(str(repo))
    paths = []
    run = {"outcome": "pass", "exit": 0, "seconds": 0.25, "passed": 1, "failed": 0}
    for k in range(1, n + 1):
        card = {"schema": "ballot-guard/scorecard/1", "version": "bench",
                "started_at": "2026-12-01T00:00:00Z", "finished_at": "2026-12-01T00:01:00Z",
                "commit": head, "dirty": False,
                "digest": {"pinned": pinned, "actual": pinned, "format": "v2", "ok": True},
                "seed": 1, "python": sys.executable, "pytest": "bench",
                "properties": {v: {"ballot": "pass", "repeats": 2, "runs": [run, run]}
                               for v in plan[k - 1]},
                "shard": record(ShardSpec(k, n), names, plan, config), "exit": 0}
        path = out / f"big{k}.json"
        path.write_text(json.dumps(card))
        paths.append(path)
    return paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--shards", type=int, default=2)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="shard-bench-"))
    try:
        n = args.shards
        repo = project(base, "sleepy", {f"s{i:02d}": SLEEPY for i in range(12)})
        trees = []
        for k in range(1, n + 1):
            tree = base / f"machine{k}"
            git(repo, "worktree", "add", "-q", "--detach", str(tree), "HEAD")
            trees.append(tree)
        one_gate(repo, n)  # warm-up
        shards(trees, base)
        single, sharded = [], []
        for _ in range(args.samples):
            single.append(one_gate(repo, n))
            sharded.append(shards(trees, base))
        s, h = statistics.median(single), statistics.median(sharded)
        print(f"cpus: {os.cpu_count()}; python {sys.version.split()[0]}; "
              f"load average {os.getloadavg()[0]:.2f}; medians of {args.samples}")
        print(f"12 properties sleeping 0.3 s x 2 repeats, {n} shards on this one machine:")
        print(f"  one gate --jobs {n}:             {s:6.2f} s wall")
        print(f"  {n} shard gates in parallel:      {h:6.2f} s wall ({h / s:.2f}x one gate)")

        cards = synthetic_cards(repo, base, 1000, 4)
        times, cpus = [], []
        for _ in range(args.samples):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd("gate", "--merge", *map(str, cards), "--scorecard",
                               str(base / "merged.json")), cwd=repo, env=env(),
                           capture_output=True, check=True)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        m, c = statistics.median(times), statistics.median(cpus)
        print(f"gate --merge of 4 shard scorecards, 1,000 voters x 2 runs: {m:.3f} s wall, "
              f"{c:.3f} s cpu (target < 0.5 s wall: {'ok' if m < 0.5 else 'MISSED'})")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
