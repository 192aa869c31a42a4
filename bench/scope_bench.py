"""Scope guard timings, side by side with what they are compared to, in one run.

    python bench/scope_bench.py [--runs N] [--files N] [--rows 1,2,3,4]

1. ``ballot-guard scope`` on a 5-file staged change vs pre-commit-hooks'
   ``check-added-large-files`` on the same repository      (target ratio <= 1.5)
2. ``ballot-guard scope`` on a 20,000-file staged change vs a bare
   ``git diff --cached --name-status -z -M``                (target ratio <= 3)
3. ``ballot-guard scope --patch`` on a 20,000-file unified diff vs a bare
   unidiff ``PatchSet`` parse of the same file (in-process, parse only)
                                                            (target ratio <= 0.5)

Every figure is the median wall time of N runs of a real process (the unidiff
parse excepted, timed in-process so that only the parse counts); the two sides
of a row run alternately, and a second line gives the minima.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

BG = [sys.executable, "-m", "ballot_guard"]
# Bytecode is written and read as on a user's machine: with PYTHONDONTWRITEBYTECODE set (as
# on some CI machines) an editable install would compile every module on every run.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=input, check=True,
                          capture_output=True).stdout


def run_once(cmd: Sequence[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()}")
    return elapsed


def interleaved(runs: int, ours: Callable[[], float],
                theirs: Callable[[], float]) -> tuple[list[float], list[float]]:
    """Time both sides alternately, N times each after one warm-up round, so that load
    on a shared machine falls on both alike."""
    a: list[float] = []
    b: list[float] = []
    for i in range(runs + 1):
        x, y = ours(), theirs()
        if i:
            a.append(x)
            b.append(y)
    return a, b


def make_repo(where: Path) -> Path:
    repo = where / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com"),
                       ("commit.gpgsign", "false")):
        git(repo, "config", key, value)
    (repo / "properties").mkdir()
    (repo / "properties" / "test_a.py").write_text("def test_a():\n    assert True\n")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "cases.json").write_text("[1, 2, 3]\n")
    (repo / "fixture_digest.txt").write_text("sha256-v2:" + "0" * 64 + "\n")
    (repo / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    src = repo / "src"
    src.mkdir()
    for i in range(200):
        (src / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adopted base")
    return repo


def stage_files(repo: Path, count: int, sub: str) -> list[str]:
    d = repo / sub
    d.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(count):
        name = f"{sub}/file_{i:05d}.py"
        (repo / name).write_text(f"def f{i}():\n    return {i}\n")
        names.append(name)
    git(repo, "add", "-A", "--", sub)
    return names


def row(label: str, ours: list[float], theirs: list[float], target: str, vs: str) -> None:
    """The medians, and on a second line the minima (the least disturbed runs)."""
    med_a, med_b = statistics.median(ours), statistics.median(theirs)
    print(f"{label:<34} {med_a * 1000:9.1f} ms   {vs:<40} {med_b * 1000:9.1f} ms   "
          f"ratio {med_a / med_b:5.2f} (target {target})")
    low_a, low_b = min(ours), min(theirs)
    print(f"{'  (minima)':<34} {low_a * 1000:9.1f} ms   {'':<40} {low_b * 1000:9.1f} ms"
          f"   ratio {low_a / low_b:5.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--rows", default="1,2,3,4", help="which rows to run (a short run "
                    "on a shared machine: --rows 3,4)")
    args = ap.parse_args(argv)
    runs, many = args.runs, args.files
    rows = {int(r) for r in args.rows.split(",")}
    with tempfile.TemporaryDirectory(prefix="scope-bench-") as tmp:
        repo = make_repo(Path(tmp))
        env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, {runs} runs each"
        print(f"scope bench ({env_note})")

        # 1. a 5-file staged change
        small = stage_files(repo, 5, "small")
        large = [sys.executable, "-m", "pre_commit_hooks.check_added_large_files", *small]
        if 1 in rows:
            ours, theirs = interleaved(runs, lambda: run_once([*BG, "scope"], repo),
                                       lambda: run_once(large, repo))
            row("scope, 5-file staged change", ours, theirs, "<= 1.5",
                "check-added-large-files, same files")

        # 2. a many-file staged change
        git(repo, "reset", "-q", "--hard")
        stage_files(repo, many, "big")
        bare = ["git", "diff", "--cached", "--name-status", "-z", "-M"]
        if 2 in rows:
            ours, theirs = interleaved(runs, lambda: run_once([*BG, "scope"], repo),
                                       lambda: run_once(bare, repo))
            row(f"scope, {many}-file staged change", ours, theirs, "<= 3",
                "git diff --cached --name-status -z -M")

        # 3. the same change as a unified diff, judged before it is applied
        diff = git(repo, "diff", "--cached")
        git(repo, "reset", "-q", "--hard")
        patch_file = Path(tmp) / "big.diff"
        patch_file.write_bytes(diff)

        import unidiff

        def parse() -> float:
            t0 = time.perf_counter()
            with open(patch_file, encoding="utf-8") as f:
                unidiff.PatchSet(f)
            return time.perf_counter() - t0
        if 3 in rows:
            ours, theirs = interleaved(
                runs, lambda: run_once([*BG, "scope", "--patch", str(patch_file)], repo),
                parse)
            row(f"scope --patch, {many}-file diff", ours, theirs, "<= 0.5",
                f"unidiff PatchSet parse ({len(diff) / 1e6:.1f} MB)")

        # 4. hook pre-commit: the hooks section below
        if 4 in rows:
            hook_pre_commit(Path(tmp), runs)
    return 0


# --- hooks section: `ballot-guard hook pre-commit` --------------------------------------------

def hook_pre_commit(tmp: Path, runs: int) -> None:
    """``ballot-guard hook pre-commit`` on a 5-file staged change vs check-added-large-files.

    Both are real processes on the same repository and the same staged files. They run
    interleaved (one of each, N times) so that load on a shared machine falls on both
    alike; the row shows medians, the line below the minima (the least disturbed runs).
    """
    where = tmp / "hooks"
    where.mkdir()
    repo = make_repo(where)
    small = stage_files(repo, 5, "small")
    cmds = {"ours": [*BG, "hook", "pre-commit"],
            "theirs": [sys.executable, "-m", "pre_commit_hooks.check_added_large_files", *small]}
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for i in range(runs + 1):
        for key, cmd in cmds.items():
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=repo, env=ENV, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: "
                                 f"{proc.stderr.decode()}")
            if i:  # the first round warms the caches
                times[key].append(time.perf_counter() - t0)
    row("hook pre-commit, 5-file change", times["ours"], times["theirs"], "<= 1.5",
        "check-added-large-files, same files")  # medians, then minima


if __name__ == "__main__":
    raise SystemExit(main())
