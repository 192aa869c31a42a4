"""A run's directory leaves the next run's way at once, and is gone when the gate is."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.run.trash import Trash
from testing.gate_support import PASS, _shared_pycache, make_project, project
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]


def _run_dir(parent: Path, name: str, files: int) -> Path:
    d = parent / name
    for sub in ("tmp", "home", "pycache/a/b"):
        (d / sub).mkdir(parents=True)
    for i in range(files):
        (d / "tmp" / f"f{i}").write_text("x" * i)
    return d


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=6))
def test_put_takes_each_directory_away_at_once_and_close_removes_all(
        tmp_path_factory: pytest.TempPathFactory, runs: list[int]) -> None:
    parent = tmp_path_factory.mktemp("runs")
    trash = Trash(str(parent))
    names = set()
    for i, files in enumerate(runs):
        d = _run_dir(parent, f"run-{i}", files)
        trash.put(str(d))
        assert not d.exists()  # gone from where the next run would look, at once
        names.add(f"run-{i}")
    mode = stat.S_IMODE(os.stat(parent / "trash").st_mode)
    assert mode == 0o300  # nobody lists it: the gate only writes there
    assert not names & set(os.listdir(parent))
    trash.close()
    assert os.listdir(parent) == []
    trash.put(str(_run_dir(parent, "late", 1)))  # after close: removed all the same
    trash.close()
    assert os.listdir(parent) == []
    parent.rmdir()


def test_a_missing_directory_is_no_error(tmp_path: Path) -> None:
    trash = Trash(str(tmp_path))
    trash.put(str(tmp_path / "never-made"))
    trash.close()
    assert os.listdir(tmp_path) == []


def test_the_gate_leaves_no_run_directory_nor_trash(project: Repo) -> None:
    make_project(project, {"a": PASS, "b": PASS}, table='sandbox = "off"\nrepeats = 3\n')
    res = run_cli(["gate", "--jobs", "2"], project.path)
    assert res.code == 0, res.out + res.err
    assert sorted(os.listdir(project.path / ".ballot_guard")) == [".gitignore",
                                                                  "scorecard.json"]
