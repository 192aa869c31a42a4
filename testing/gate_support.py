"""Projects with real property files, pinned fixtures and the test interpreter configured."""
from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ballot_guard.run.protocol import Isolation
from ballot_guard.vote.ballot import PropertyCard, RunCard
from ballot_guard.vote.scorecard import DigestCard, MergedShard, Scorecard, ShardRecord
from testing.helpers import Repo, adopted_repo, holds_the_keys, init_repo, pin

PASS = "def test_ok():\n    assert 1 + 1 == 2\n"
FAIL = "def test_bad():\n    assert 1 + 1 == 3\n"
EMPTY = "# no tests here\n"


# A property source holding this line keeps state between runs (a file outside the
# repository, or beside it), which the OS sandbox discards after each run:
# make_project turns the sandbox off for it, to test what it tests at the hermetic level.
KEEPS_STATE = "# keeps state between runs\n"


def flip(counter: Path) -> str:
    """A property that passes on odd runs and fails on even ones (state outside the repo)."""
    return (
        KEEPS_STATE +
        "import pathlib\n"
        f"COUNTER = pathlib.Path({str(counter)!r})\n"
        "def test_flips():\n"
        "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
        "    COUNTER.write_text(str(n + 1))\n"
        "    assert n % 2 == 0\n"
    )


def counting(log: Path, body: str = "") -> str:
    """A passing property that appends what it sees to ``log`` (outside the repo)."""
    return (
        KEEPS_STATE +
        "import os, sys, json, pathlib\n"
        f"LOG = pathlib.Path({str(log)!r})\n"
        "def test_counts():\n"
        "    seen = {'hashseed': os.environ.get('PYTHONHASHSEED'), 'hash': hash('ballot'),\n"
        "            'addopts': os.environ.get('PYTEST_ADDOPTS'), 'pid': os.getpid(),\n"
        "            'leak': 'ballot_guard_leak' in sys.modules}\n"
        "    sys.modules['ballot_guard_leak'] = sys\n"
        "    with LOG.open('a') as f:\n"
        "        f.write(json.dumps(seen) + '\\n')\n"
        + body
    )


def make_project(repo: Repo, props: Mapping[str, str], *, table: str = "",
                 python: str | None = sys.executable, freeze: Any = None,
                 commit: bool = True) -> Repo:
    lines = ["[tool.ballot_guard]"]
    if python is not None:
        lines.append(f"python = {json.dumps(python)}")
    if any(KEEPS_STATE in source for source in props.values()) and "sandbox" not in table:
        lines.append('sandbox = "off"')
    files = {"pyproject.toml": "\n".join(lines) + "\n" + table,
             "fixtures/cases.json": '{"retries": 3}\n',
             **{f"properties/test_{name}.py": source for name, source in props.items()}}
    if freeze is not None:
        files["freeze_set.json"] = json.dumps(freeze, indent=2) + "\n"
    return adopted_repo(repo, files, message="project" if commit else None)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def scorecard(repo: Repo) -> Any:
    return read_json(repo.path / ".ballot_guard" / "scorecard.json")


def keys_follow_the_types(card: Any) -> None:
    """A written scorecard holds the keys its TypedDicts declare, and no other: its
    properties and runs, and its digest, isolation, shard and shards records."""
    holds_the_keys(Scorecard, card)
    for prop in card["properties"].values():
        assert set(prop) == PropertyCard.__required_keys__
        for run in prop["runs"]:
            holds_the_keys(RunCard, run)
    if card["digest"] is not None:
        holds_the_keys(DigestCard, card["digest"])
    if card.get("isolation") is not None:
        holds_the_keys(Isolation, card["isolation"])
    if "shard" in card:
        holds_the_keys(ShardRecord, card["shard"])
    for shard in card.get("shards", ()):
        holds_the_keys(MergedShard, shard)
        if shard["isolation"] is not None:
            holds_the_keys(Isolation, shard["isolation"])


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture(autouse=True)
def _shared_pycache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept for the tests that import it: the gate no longer reads this variable (each
    run has its own bytecode folder), so setting it must change nothing."""
    cache = tmp_path_factory.getbasetemp() / "bg-pycache"
    monkeypatch.setenv("BALLOT_GUARD_PYCACHE", str(cache))


@pytest.fixture
def project(tmp_path: Path) -> Repo:
    return init_repo(tmp_path / "repo")


__all__ = [
    "EMPTY",
    "FAIL",
    "PASS",
    "counting",
    "flip",
    "keys_follow_the_types",
    "lines",
    "make_project",
    "pin",
    "project",
    "read_json",
    "scorecard",
]


@functools.cache
def sandbox_works() -> bool:
    """Whether this machine lets a process make user and mount namespaces (the OS
    sandbox's first step)."""
    code = ("import ctypes, sys\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "sys.exit(0 if libc.unshare(0x10000000 | 0x20000) == 0 else 1)\n")
    return sys.platform.startswith("linux") and subprocess.run(
        [sys.executable, "-c", code], check=False).returncode == 0


# the two isolation levels a gate test is run at, as ``[tool.ballot_guard]`` lines
MODES = [pytest.param('sandbox = "off"\n', id="hermetic"),
         pytest.param('sandbox = "required"\n', id="sandbox",
                      marks=pytest.mark.skipif(not sandbox_works(),
                                               reason="no user namespaces here"))]
