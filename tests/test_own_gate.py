"""ballot-guard judges its own repository: a copy of it, broken on purpose, fails our CI.

The repository is copied (its tracked files) into a fresh git repository; there its own
gate, as `.ci/run` calls it, votes 0 on the clean copy, 2 on a moved fixture, 1 on a broken
invariant of the code under test, and 3 on a flipping property.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from testing.helpers import Repo, init_repo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def copy(tmp_path: Path) -> Repo:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard", "--", "ballot_guard", "properties",
                            "fixtures", "fixture_digest.txt", "pyproject.toml"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    repo = init_repo(tmp_path / "ballot-guard")
    for rel in filter(None, (os.fsdecode(f) for f in files)):
        dest = repo.path / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, dest)
    # `python = ".venv/bin/python"`: a runner venv that reaches this suite's pytest and
    # Hypothesis through a path, so the properties import the copy's ballot_guard (the
    # repository root comes first on their path), as in CI
    venv = repo.path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "test_tools.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (repo.path / ".gitignore").write_text(".venv\n")
    repo.commit_all("copy of ballot-guard")
    return repo


def gate(repo: Repo, *voters: str) -> tuple[int, str]:
    args = ["gate", "--seed", "1"] + [a for v in voters for a in ("--property", v)]
    # the judge is the installed command, never the copy's own (broken) code: `python -m`
    # from the copy would import the copy's ballot_guard for the judge too
    judge = Path(sys.executable).parent / "ballot-guard"
    res = subprocess.run([str(judge), *args], cwd=repo.path, capture_output=True, timeout=600,
                         check=False)
    return res.returncode, os.fsdecode(res.stdout) + os.fsdecode(res.stderr)


def test_the_clean_copy_votes_pass(copy: Repo) -> None:
    code, out = gate(copy)
    assert code == 0, out
    for voter in ("v2_framing", "push_lines", "freeze_files", "mixed_patches"):
        assert f"{voter}" in out


def test_a_moved_fixture_is_drift(copy: Repo) -> None:
    path = copy.path / "fixtures" / "freeze" / "seed-plain.json"
    path.write_text(path.read_text().replace("bounded_retry", "bounded_retries"))
    copy.commit_all("move a fixture without re-pinning")
    code, out = gate(copy)
    assert code == 2, out
    assert "fixtures/freeze/seed-plain.json" in out


def test_a_broken_invariant_is_a_stable_failure(copy: Repo) -> None:
    digest = copy.path / "ballot_guard" / "digest" / "framing.py"
    source = digest.read_text()
    broken = source.replace("return kind + len(path).to_bytes(8, \"big\")",
                            "return len(path).to_bytes(8, \"big\")")
    assert broken != source
    digest.write_text(broken)  # v2 framing without its type byte: not injective
    copy.commit_all("drop the type byte")
    code, out = gate(copy, "v2_framing")
    assert code == 1, out
    assert "v2_framing" in out and "fail" in out


def test_a_flipping_property_abstains(copy: Repo, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    copy.write("properties/test_flips.py", (
        "import pathlib\n"
        f"COUNTER = pathlib.Path({str(counter)!r})\n"
        "def test_flips():\n"
        "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
        "    COUNTER.write_text(str(n + 1))\n"
        "    assert n % 2 == 0\n"))
    # the counter is state between runs, which the OS sandbox discards: turn it off here
    pyproject = copy.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.ballot_guard]\n", '[tool.ballot_guard]\nsandbox = "off"\n', 1))
    copy.commit_all("a property that flips")
    code, out = gate(copy, "flips")
    assert code == 3, out
    assert "froze flips" in out
