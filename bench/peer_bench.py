"""Gate speed against what a team would run instead: ``pytest -n 2 --count 2``.

The peer: ``python -m pytest -n 2 --count 2 properties/`` (pytest-xdist and
pytest-repeat), which repeats every property in two long-lived workers, with no
fresh process state per run, no seed discipline and no freeze.  ballot-guard:
the whole ``python -m ballot_guard gate --jobs 2`` command (``repeats = 2``),
every run in a fresh process state, in both gate modes: the default
(``sandbox = "auto"``: the OS sandbox where the machine allows it) and
``sandbox = "off"`` (the hermetic level).

Each size builds one repository of N Hypothesis properties, each
``@given(st.integers())`` with one assertion, plus (``--work``) a variant whose
properties each do about 50 ms of real work (CPU, calibrated on this machine), and
(``--package``) one whose properties import a package of the project (30 modules of
about 200 lines, dataclasses among them), as a service's properties import its code.
Both sides run under the same interpreter (this one; it must have pytest,
Hypothesis, pytest-xdist and pytest-repeat: ``pip install -e '.[test,bench]'``),
with bytecode writing on (PYTHONDONTWRITEBYTECODE and PYTEST_ADDOPTS cleared),
one warm-up each, then ``--samples`` rounds in interleaved turns, so every side
sees the same machine load.  Printed per size: wall and CPU medians (CPU is user
+ sys of every process waited for), the ratio gate / peer, and the gate's CPU
beyond the peer's per run.  Target (issue 12): <= 1.0x wall at 100 x 2 and
300 x 2.

    python bench/peer_bench.py [--sizes 20,100,300] [--work 100] [--package 100]
                               [--samples 3] [--keep]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gate_bench import git, med, timed  # noqa: E402 - the bench scripts' shared helpers

TRIVIAL = ("from hypothesis import given, strategies as st\n\n\n"
           "@given(st.integers())\ndef test_holds(x):\n    assert x + 0 == x\n")
# ~50 ms a property: Hypothesis's 100 examples, each about 0.5 ms of arithmetic
WORK = ("from hypothesis import given, strategies as st\n\n\n"
        "@given(st.integers())\ndef test_holds(x):\n"
        "    assert sum(i * i for i in range({loops})) + x - x >= 0\n")
# A property that imports the project: a package of 30 modules of about 200 lines (12
# functions and 3 dataclasses each), as a service's code under test would be.
PACKAGE_MODULES = 30
IMPORTS = ("from hypothesis import given, strategies as st\nimport app\n\n\n"
           "@given(st.integers())\ndef test_holds(x):\n    assert app.m0.f1(x % 50) >= -x * x\n")


def package_module(i: int) -> str:
    """Module ``app/m{i}.py`` of the package row."""
    out = ["from __future__ import annotations", "import dataclasses", ""]
    for j in range(12):
        out += [f"def f{j}(x: int, y: int = {j}) -> int:",
                f"    \"\"\"Function {j} of module {i}.\"\"\"",
                "    total = 0", "    for k in range(x):", f"        if k % {j + 2} == 0:",
                "            total += k * y", "        elif k > 100:", "            total -= 1",
                "        else:", "            total ^= k", "    return total", "", ""]
    for c in range(3):
        out += ["@dataclasses.dataclass", f"class C{c}:", "    a: int = 0", "    b: str = ''", "",
                "    def scale(self, n: int) -> int:", "        return self.a * n + len(self.b)",
                "", "    def describe(self) -> str:",
                f"        return f'C{c}({{self.a}}, {{self.b!r}})'", "", ""]
    return "\n".join(out) + "\n"


def package() -> dict[str, str]:
    files = {f"app/m{i}.py": package_module(i) for i in range(PACKAGE_MODULES)}
    files["app/__init__.py"] = "".join(f"from app import m{i}\n" for i in range(PACKAGE_MODULES))
    return files


MODES = (("gate default", "auto"), ("gate sandbox off", "off"))
PEER = "pytest -n 2 --count 2"


def loops_for(seconds: float) -> int:
    """How many loop steps of WORK's sum take ``seconds`` here (median of 5 trials)."""
    n = 20000
    took = []
    for _ in range(5):
        start = time.perf_counter()
        sum(i * i for i in range(n))
        took.append(time.perf_counter() - start)
    return max(1, int(n * seconds / statistics.median(took)))


def project(base: Path, name: str, n: int, source: str, sandbox: str,
            extra: dict[str, str] | None = None) -> Path:
    from ballot_guard import config
    from ballot_guard.digest import pin
    from ballot_guard.digest.pin_file import write_pin

    repo = base / name
    (repo / "properties").mkdir(parents=True)
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "cases.json").write_text('{"n": 1}\n')
    (repo / "pyproject.toml").write_text(f'[tool.ballot_guard]\npython = "{sys.executable}"\n'
                                         f'repeats = 2\nsandbox = "{sandbox}"\n')
    (repo / ".gitignore").write_text(".pytest_cache/\n__pycache__/\n.hypothesis/\n"
                                     ".ballot_guard/\n")
    for i in range(n):
        (repo / "properties" / f"test_p{i:03d}.py").write_text(source)
    for rel, text in (extra or {}).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q")
    cfg = config.load_worktree(str(repo))
    got = pin.digest_worktree(str(repo), cfg)
    assert got.digest is not None
    write_pin(str(repo), cfg.digest_file, got.digest)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench project")
    return repo


def gate(repo: Path) -> tuple[float, float]:
    return timed([sys.executable, "-m", "ballot_guard", "gate", "--seed", "1", "--jobs", "2"],
                 repo, expect=0)


def peer(repo: Path) -> tuple[float, float]:
    return timed([sys.executable, "-m", "pytest", "-n", "2", "--count", "2", "properties/",
                  "-q"], repo, expect=0)


def isolation_of(repo: Path) -> str:
    """The isolation level the last gate recorded in its scorecard."""
    import json

    try:
        card = json.loads((repo / ".ballot_guard" / "scorecard.json").read_text())
        return str(card.get("isolation", {}).get("level", "?"))
    except (OSError, ValueError, AttributeError):
        return "?"


def row(label: str, n: int, source: str, base: Path, samples: int,
        extra: dict[str, str] | None = None) -> None:
    repos = {level: project(base, f"{label}-{n}-{mode}", n, source, mode, extra)
             for level, mode in MODES}
    peer_repo = repos[MODES[0][0]]
    got: dict[str, list[tuple[float, float]]] = {level: [] for level, _ in MODES}
    got[PEER] = []
    peer(peer_repo)  # warm-up: bytecode, the peer's .hypothesis and the gates' scorecards
    for repo in repos.values():
        gate(repo)
    for _ in range(samples):  # interleaved turns
        got[PEER].append(peer(peer_repo))
        for level, repo in repos.items():
            got[level].append(gate(repo))
    runs = 2 * n
    p = med(got[PEER])
    print(f"{label} {n} x 2 ({runs} runs), load average {os.getloadavg()[0]:.2f}:")
    print(f"  {PEER:<34} {p[0]:7.2f} s wall, cpu {p[1]:7.2f} s "
          f"({p[1] / runs * 1000:.1f} ms a run)")
    for level, _ in MODES:
        g = med(got[level])
        print(f"  {level + ' (' + isolation_of(repos[level]) + ')':<34} {g[0]:7.2f} s wall "
              f"{g[0] / p[0]:5.2f}x, cpu {g[1]:7.2f} s {g[1] / p[1]:5.2f}x "
              f"({g[1] / runs * 1000:.1f} ms a run, {(g[1] - p[1]) / runs * 1000:+.1f} ms a run "
              "beyond the peer)")
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,100,300",
                    help="property counts of the trivial rows, comma-separated")
    ap.add_argument("--work", type=int, default=100,
                    help="property count of the ~50 ms-a-property row (0: none)")
    ap.add_argument("--package", type=int, default=100,
                    help="property count of the row importing a 30-module package (0: none)")
    ap.add_argument("--samples", type=int, default=3, help="rounds per figure (median)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary projects")
    args = ap.parse_args()
    missing = [m for m in ("pytest", "hypothesis", "xdist", "pytest_repeat")
               if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"this interpreter lacks {', '.join(missing)}: "
                 "pip install -e '.[test,bench]'")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = Path(tempfile.mkdtemp(prefix="peer-bench-"))
    print(f"cpus: {os.cpu_count()}; python {sys.version.split()[0]}; "
          f"load average {os.getloadavg()[0]:.2f}; medians of {args.samples}, interleaved")
    try:
        for n in sizes:
            row("trivial", n, TRIVIAL, base, args.samples)
        if args.work:
            loops = loops_for(0.0005)
            row("50ms-work", args.work, WORK.format(loops=loops), base, args.samples)
        if args.package:
            row("package", args.package, IMPORTS, base, args.samples, package())
    finally:
        if args.keep:
            print(f"projects kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
