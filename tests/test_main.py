from __future__ import annotations

from pathlib import Path

from testing.helpers import run_bg, run_cli


def test_help_is_zero(tmp_path: Path) -> None:
    res = run_cli(["--help"], tmp_path)
    assert res.code == 0
    assert "usage: ballot-guard" in res.out


def test_usage_error_is_four_not_two(tmp_path: Path) -> None:
    res = run_cli(["no-such-command"], tmp_path)
    assert res.code == 4
    assert res.err.startswith("ballot-guard: error:")
    assert len(res.err.strip().splitlines()) == 1


def test_no_command_is_four(tmp_path: Path) -> None:
    assert run_cli([], tmp_path).code == 4


def test_module_entry_point_runs(tmp_path: Path) -> None:
    res = run_bg(["--version"], tmp_path)
    assert res.code == 0
    assert res.out.startswith("ballot-guard ")
