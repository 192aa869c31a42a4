"""Judge every merge of a real project's history, to see that the merge rule does not
block ordinary merges.

    python bench/merge_history.py PATH/TO/CLONE [--tests tests] [--branch main]

The project never adopted ballot-guard, so its history is copied with the adoption
added at every root commit (``git fast-export --no-data`` | this filter |
``git fast-import``, into a temporary clone; the original is not touched): a
fixture pin, and a ``[tool.ballot_guard]`` table (``properties_dir`` = the
project's tests dir) appended to every version of ``pyproject.toml`` (or a
``pyproject.toml`` holding only the table where the project had none).  Equal
contents stay equal and different ones different, so every merge keeps its
relation to its parents.  Then ``ballot-guard scope --range ROOT..TIP --json``
judges the whole history and the merges' verdicts are summarised: how many have
paths of their own, how many are blocked and by which rule, and whether a blocked
merge's own paths are hand resolutions (content that differs from every parent)
or content equal to a parent's (which would point at a false block).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import IO

PIN = b"sha256-v2:" + b"0" * 64 + b"\n"


def git(cwd: str, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          check=True).stdout


def table(tests: str) -> bytes:
    return (f'\n[tool.ballot_guard]\nproperties_dir = "{tests}"\n'
            f'fixtures_dir = "{tests}/fixtures"\n').encode()


class Filter:
    """Rewrites a ``fast-export --no-data`` stream: blobs are referenced by object id."""

    def __init__(self, repo: str, tests: str, ref: str) -> None:
        self.repo, self.table, self.ref = repo, table(tests), ref
        self.cache: dict[bytes, bytes] = {}
        self.pin = self._blob(PIN)
        self.alone = self._blob(self.table.lstrip(b"\n"))

    def _blob(self, data: bytes) -> bytes:
        return git(self.repo, "hash-object", "-w", "--stdin", input=data).strip()

    def _pyproject(self, oid: bytes) -> bytes:
        if oid not in self.cache:
            data = git(self.repo, "cat-file", "blob", oid.decode())
            if data and not data.endswith(b"\n"):
                data += b"\n"
            self.cache[oid] = self._blob(data + self.table)
        return self.cache[oid]

    def run(self, src: IO[bytes], dst: IO[bytes]) -> None:
        in_commit = False
        has_from = False
        pending_root = False
        while True:
            line = src.readline()
            if not line:
                break
            if line.startswith(b"data "):
                n = int(line[5:])
                dst.write(line + src.read(n))
                continue
            if line.startswith((b"commit ", b"reset ")):
                line = line.split(b" ", 1)[0] + b" " + self.ref.encode() + b"\n"
                in_commit, has_from = line.startswith(b"commit "), False
                pending_root = in_commit
            elif in_commit and line.startswith((b"from ", b"merge ")):
                has_from = True
            elif in_commit and line.startswith((b"M ", b"D ", b"deleteall")) and pending_root:
                dst.write(self._root_lines(has_from))
                pending_root = False
            if in_commit and line.startswith(b"M ") and line.rstrip(b"\n").endswith(
                    b" pyproject.toml"):
                mode, ref, _ = line[2:].split(b" ", 2)
                line = b"M " + mode + b" " + self._pyproject(ref) + b" pyproject.toml\n"
            elif in_commit and line == b"D pyproject.toml\n":
                line = b"M 100644 " + self.alone + b" pyproject.toml\n"
            elif in_commit and line == b"deleteall\n":
                dst.write(line)
                line = (b"M 100644 " + self.pin + b" fixture_digest.txt\n"
                        b"M 100644 " + self.alone + b" pyproject.toml\n")
            if in_commit and line == b"\n":
                if pending_root:
                    dst.write(self._root_lines(has_from))
                in_commit = pending_root = False
            dst.write(line)

    def _root_lines(self, has_from: bool) -> bytes:
        if has_from:
            return b""
        return (b"M 100644 " + self.pin + b" fixture_digest.txt\n"
                b"M 100644 " + self.alone + b" pyproject.toml\n")


def adopted_copy(source: str, work: str, tests: str, branch: str) -> str:
    """A clone of ``source`` whose ``refs/heads/adopted`` is ``branch`` with the adoption
    added at its roots; returns the clone's path."""
    clone = os.path.join(work, "clone")
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--no-local", source, clone],
                   check=True)
    ref = "refs/heads/adopted"
    export = subprocess.Popen(["git", "fast-export", "--no-data", "--reencode=yes",
                               "--signed-tags=strip", f"refs/remotes/origin/{branch}"],
                              cwd=clone, stdout=subprocess.PIPE)
    imp = subprocess.Popen(["git", "fast-import", "--quiet", "--force"], cwd=clone,
                           stdin=subprocess.PIPE)
    assert export.stdout is not None and imp.stdin is not None
    Filter(clone, tests, ref).run(export.stdout, imp.stdin)
    imp.stdin.close()
    if export.wait() != 0 or imp.wait() != 0:
        raise SystemExit("fast-export | fast-import failed")
    return clone


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="a clone of the project (its history is not changed)")
    p.add_argument("--tests", default="tests", help="the project's tests dir (the oracle)")
    p.add_argument("--branch", default="main")
    p.add_argument("--show", type=int, default=10, help="blocked merges to list")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="merge-history-") as work:
        clone = adopted_copy(os.path.abspath(args.source), work, args.tests, args.branch)
        tip = "refs/heads/adopted"
        roots = git(clone, "rev-list", "--max-parents=0", tip).decode().split()
        merges = set(git(clone, "rev-list", "--min-parents=2", tip).decode().split())
        total = len(git(clone, "rev-list", tip).decode().split())
        octopus = len(git(clone, "rev-list", "--min-parents=3", tip).decode().split())
        cc = sum(1 for m in merges if git(clone, "diff-tree", "--cc", "--raw", "-r",
                                          "--no-commit-id", m).strip())
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ballot_guard", "scope", "--range",
                               f"{roots[0]}..{tip}", "--json"], cwd=clone,
                              capture_output=True, check=False)
        seconds = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            print(proc.stderr.decode(), file=sys.stderr)
            return proc.returncode
        commits = json.loads(proc.stdout)["commits"]
        by_merge = [c for c in commits if c["commit"] in merges]
        blocked = [c for c in by_merge if c["verdict"] == "blocked"]
        rules = collections.Counter(r["rule"] for c in blocked for r in c["reasons"])
        plain = [c for c in commits if c["commit"] not in merges]
        print(f"history: {total} commits, {len(merges)} merges ({octopus} octopus), "
              f"{len(roots)} root(s); scope --range took {seconds:.1f} s")
        print(f"non-merge commits: {len(plain)} judged, "
              f"{sum(c['verdict'] == 'blocked' for c in plain)} blocked "
              f"(a commit that edits tests and code together is mixed by the rules)")
        print(f"merges: {len(by_merge)} with paths of their own "
              f"(git diff-tree --cc shows paths for {cc}), {len(blocked)} blocked "
              f"({', '.join(f'rule {k}: {v}' for k, v in sorted(rules.items())) or 'none'})")
        for c in blocked[:args.show]:
            sha = c["commit"]
            resolved = set(git(clone, "diff-tree", "-c", "-r", "--name-only", "--no-commit-id",
                               sha).decode().split("\n")) - {""}
            own = c["oracle"] + c["behavior"] + c["neutral"]
            kind = ("all hand resolutions" if set(own) <= resolved else
                    f"{len(set(own) - resolved)} path(s) equal to a parent's")
            subject = git(clone, "log", "-1", "--format=%s", sha).decode().strip()
            print(f"  blocked {sha[:12]} {subject[:60]!r}: oracle {c['oracle'][:3]}, "
                  f"behaviour {c['behavior'][:3]}; {kind}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
