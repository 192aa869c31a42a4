"""Fixture digest timings, side by side with what they are compared to, in one run.

    python bench/digest_bench.py [--big-mib N] [--big-files N] [--small N]
                                 [--small-bytes N] [--rss-mib N] [--runs N] [--dir DIR]

1. ``ballot-guard digest`` on N MiB in 8 files vs ``openssl dgst -sha256`` over
   one file of the same bytes                           (target: throughput >= 0.9x)
2. ``ballot-guard digest`` on 100,000 files of 1 KiB vs the seed article's
   function run the way the article runs it (``python -`` with its snippet)
                                                        (target: >= 2x faster)
3. ``ballot-guard digest --rev HEAD`` on the same files vs the working-tree
   digest, with the objects loose and after ``git repack -ad``  (target: <= 2x)
4. Peak RSS of ``ballot-guard digest`` (v2, and v1) on a single-file pack of
   2 GiB                                                (target: <= 64 MiB)

Every timing is the median wall time of N runs of a real process, with the page
cache warmed by one untimed run first and writeback flushed (``sync``); the
commands compared take turns, so a change of machine load hits both.  The defaults are the full
sizes; pass smaller ones for a quick run.  Temporary files are removed at the end.
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
from collections.abc import Sequence
from pathlib import Path

BG = [sys.executable, "-m", "ballot_guard", "digest"]
MIB = 1 << 20

ARTICLE = """\
import hashlib, pathlib
root = pathlib.Path('fixtures')
h = hashlib.sha256()
for p in sorted(root.rglob('*')):
    if p.is_file():
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
print(h.hexdigest())
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com"),
                       ("commit.gpgsign", "false"), ("gc.auto", "0")):
        git(path, "config", key, value)
    return path


def run_once(cmd: Sequence[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()}")
    return proc.stdout


Job = tuple[Sequence[str], Path, "bytes | None"]


def timed(runs: int, *jobs: Job) -> list[float]:
    """Median wall time of each job; the jobs take turns, so a change of load hits all."""
    os.sync()  # no writeback of freshly written files during the timings
    for cmd, cwd, stdin in jobs:
        run_once(cmd, cwd, stdin)  # warm the page cache and the interpreter's files
    times: list[list[float]] = [[] for _ in jobs]
    for _ in range(runs):
        for n, (cmd, cwd, stdin) in enumerate(jobs):
            t0 = time.perf_counter()
            run_once(cmd, cwd, stdin)
            times[n].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


# Linux carries a process's high-water RSS across exec into ru_maxrss, and this
# script is large by then; a small launcher forks and execs the measured
# command, so its figure starts from the launcher's few MiB, not from ours.
LAUNCHER = """\
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
raise SystemExit(os.waitstatus_to_exitcode(status))
"""


def peak_rss_mib(cmd: Sequence[str], cwd: Path) -> float:
    """ru_maxrss of exactly the measured process, in MiB."""
    out = run_once([sys.executable, "-c", LAUNCHER, *cmd], cwd)
    return int(out.split()[-1]) / 1024


def write_random(path: Path, size: int, block: bytes) -> None:
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n


def bench_throughput(where: Path, total_mib: int, files: int, runs: int) -> None:
    repo = make_repo(where / "big")
    (repo / "fixtures").mkdir()
    block = os.urandom(16 * MIB)
    per = total_mib * MIB // files
    one = where / "one.bin"
    with open(one, "wb") as whole:
        for i in range(files):
            part = block[i % 16 * MIB // files:] + block[:i % 16 * MIB // files]
            write_random(repo / "fixtures" / f"part{i}.bin", per, part)
            with open(repo / "fixtures" / f"part{i}.bin", "rb") as f:
                shutil.copyfileobj(f, whole, 4 * MIB)
    ours, ssl = timed(runs, (BG, repo, None),
                      (["openssl", "dgst", "-sha256", str(one)], where, None))
    size = files * per / MIB
    print(f"1. {size:.0f} MiB in {files} files")
    print(f"   ballot-guard digest    {ours:8.3f} s  {size / ours:8.0f} MiB/s")
    print(f"   openssl dgst -sha256   {ssl:8.3f} s  {size / ssl:8.0f} MiB/s  (one file)")
    print(f"   throughput ratio       {ssl / ours:8.2f}x   (target >= 0.9x)")
    shutil.rmtree(repo)
    one.unlink()


def bench_small(where: Path, count: int, size: int, runs: int) -> None:
    repo = make_repo(where / "small")
    top = repo / "fixtures"
    per_dir = 1000
    for i in range(count):
        d = top / f"d{i // per_dir:03d}"
        if i % per_dir == 0:
            d.mkdir(parents=True)
        (d / f"case-{i:06d}.json").write_bytes(os.urandom(size))
    ours, ours_v1, article = timed(runs, (BG, repo, None), ([*BG, "--format", "v1"], repo, None),
                                   ([sys.executable, "-"], repo, ARTICLE.encode()))
    v1 = run_once([*BG, "--format", "v1"], repo).strip()
    assert v1 == run_once([sys.executable, "-"], repo, ARTICLE.encode()).strip(), "v1 differs"
    print(f"2. {count} files of {size} bytes")
    print(f"   ballot-guard digest (v2)     {ours:8.3f} s")
    print(f"   ballot-guard digest (v1)     {ours_v1:8.3f} s  (same value as the article's)")
    print(f"   the article's function       {article:8.3f} s")
    print(f"   speed-up v2 / v1             {article / ours:8.2f}x / {article / ours_v1:.2f}x"
          "   (target >= 2x)")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixtures")
    assert run_once([*BG, "--rev", "HEAD"], repo) == run_once(BG, repo), "--rev differs"
    oids = b"".join(line.split()[2] + b"\n" for line in
                    run_once(["git", "ls-tree", "-r", "HEAD"], repo).splitlines())
    cat = (["git", "cat-file", "--batch", "--buffer"], repo, oids)
    tree, loose, cat_loose = timed(runs, (BG, repo, None), ([*BG, "--rev", "HEAD"], repo, None),
                                   cat)
    git(repo, "repack", "-adq")
    git(repo, "prune-packed")
    tree2, packed, cat_packed = timed(runs, (BG, repo, None),
                                      ([*BG, "--rev", "HEAD"], repo, None), cat)
    print(f"3. --rev HEAD on the same {count} files")
    print("   loose objects (as just committed, gc.auto=0):")
    print(f"     working-tree digest        {tree:8.3f} s")
    print(f"     --rev HEAD                 {loose:8.3f} s  ratio {loose / tree:.2f}x"
          "   (target <= 2x)")
    print(f"     git cat-file --batch alone {cat_loose:8.3f} s  (the same blobs, no hashing)")
    print("   after git repack -ad (as in any clone):")
    print(f"     working-tree digest        {tree2:8.3f} s")
    print(f"     --rev HEAD                 {packed:8.3f} s  ratio {packed / tree2:.2f}x")
    print(f"     git cat-file --batch alone {cat_packed:8.3f} s")
    shutil.rmtree(repo)


def bench_rss(where: Path, mib: int) -> None:
    repo = make_repo(where / "rss")
    (repo / "fixtures").mkdir()
    write_random(repo / "fixtures" / "huge.bin", mib * MIB, os.urandom(16 * MIB))
    v2 = peak_rss_mib(BG, repo)
    v1 = peak_rss_mib([*BG, "--format", "v1"], repo)
    base = peak_rss_mib([sys.executable, "-c", "import ballot_guard.main"], repo)
    launcher = peak_rss_mib([sys.executable, "-c", "pass"], repo)
    print(f"4. peak RSS on a single-file pack of {mib} MiB")
    print(f"   ballot-guard digest v2 / v1  {v2:6.1f} / {v1:.1f} MiB   (target <= 64 MiB)")
    print(f"   (python importing ballot_guard alone: {base:.1f} MiB; bare python: "
          f"{launcher:.1f} MiB)")
    shutil.rmtree(repo)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--big-mib", type=int, default=1024, help="size of the 8-file pack")
    p.add_argument("--big-files", type=int, default=8)
    p.add_argument("--small", type=int, default=100_000, help="number of small files")
    p.add_argument("--small-bytes", type=int, default=1024)
    p.add_argument("--rss-mib", type=int, default=2048, help="size of the single-file pack")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--dir", default=None, help="where to put the temporary packs")
    args = p.parse_args(argv)
    where = Path(tempfile.mkdtemp(prefix="digest-bench-", dir=args.dir))
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, runs={args.runs}, "
              "median wall time of real processes")
        bench_throughput(where, args.big_mib, args.big_files, args.runs)
        bench_small(where, args.small, args.small_bytes, args.runs)
        bench_rss(where, args.rss_mib)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
