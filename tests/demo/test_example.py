"""The demo's example service and its pieces: the properties are real tests that really
pass, fail and flip (run with real pytest), and the demo directory rules hold."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ballot_guard.config import parse_pyproject
from ballot_guard.demo import build, scenarios, shell
from ballot_guard.demo.play import apply_edit
from ballot_guard.demo.scenarios import Edit
from ballot_guard.errors import CannotJudge


def run_property(repo: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                           f"properties/test_{name}.py"], cwd=repo, capture_output=True,
                          text=True, env=shell.demo_env(), check=False)


def outcomes(repo: Path, name: str, runs: int = 2) -> list[int]:
    return [run_property(repo, name).returncode for _ in range(runs)]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dest = tmp_path / "example"
    dest.mkdir()
    build.copy_example(dest, sys.executable)
    return dest


def edit(repo: Path, *edits: Edit) -> None:
    for e in edits:
        apply_edit(repo, e)


def test_copy_renames_package_data_and_names_the_interpreter(example: Path) -> None:
    names = sorted(p.relative_to(example).as_posix() for p in example.rglob("*") if p.is_file())
    assert ".gitignore" in names and "pyproject.toml" in names
    assert "gitignore" not in names and "pyproject.toml.in" not in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert {"properties/test_bounded_retry.py", "properties/test_idempotent_write.py",
            "properties/test_no_secret_in_log.py"} <= set(names)
    assert [n for n in names if n.startswith("fixtures/")] == [
        "fixtures/charges.json", "fixtures/log_lines.json", "fixtures/retry_policy.json"]
    config = parse_pyproject((example / "pyproject.toml").read_bytes())
    assert config.python == sys.executable
    assert "*agent@example.com*" in config.agents and "*[bot]*" in config.agents


def test_copy_skips_caches_left_in_the_source_tree(tmp_path: Path) -> None:
    assert build.skipped(Path("properties/__pycache__/test_x.cpython-311.pyc"))
    assert build.skipped(Path(".mypy_cache/x.json"))
    assert build.skipped(Path("properties/.hypothesis/examples/x"))
    assert not build.skipped(Path("billing/client.py"))
    assert not build.skipped(Path("gitignore"))


def test_prepare_without_dir_makes_a_new_empty_temporary_dir() -> None:
    made = build.prepare(None)
    try:
        assert made.is_dir() and not any(made.iterdir())
        assert made.name.startswith("ballot-guard-demo-")
    finally:
        made.rmdir()


def test_copy_writes_an_interpreter_path_with_quotes_as_valid_toml(tmp_path: Path) -> None:
    odd = '/opt/py "3"\\bin/python'
    build.copy_example(tmp_path, odd)
    assert parse_pyproject((tmp_path / "pyproject.toml").read_bytes()).python == odd


def test_every_property_passes_stably(example: Path) -> None:
    for name in ("bounded_retry", "idempotent_write", "no_secret_in_log"):
        assert outcomes(example, name) == [0, 0], run_property(example, name).stdout


def test_the_broken_cap_fails_every_time(example: Path) -> None:
    edit(example, scenarios.RENAME, scenarios.RAISE_CAP)
    assert outcomes(example, "bounded_retry") == [1, 1]
    out = run_property(example, "bounded_retry").stdout
    assert "assert 4 == 3" in out


def test_the_agents_loosened_property_hides_the_broken_cap(example: Path) -> None:
    edit(example, scenarios.RENAME, scenarios.RAISE_CAP, *scenarios.LOOSEN)
    assert outcomes(example, "bounded_retry") == [0, 0]


def test_the_real_clock_check_passes_then_fails_then_the_fake_clock_repairs_it(
        example: Path) -> None:
    edit(example, *scenarios.ADD_REAL_CLOCK)
    first, second = outcomes(example, "bounded_retry")
    assert (first, second) == (0, 1)
    assert "BreakerOpen" in run_property(example, "bounded_retry").stdout
    assert (example / ".billing-state" / "breaker").is_file()  # the state left behind
    edit(example, *scenarios.FAKE_CLOCK)
    assert "billing.connect" not in (example / scenarios.RETRY).read_text()
    assert outcomes(example, "bounded_retry") == [0, 0]


def test_a_moved_fixture_is_a_real_byte_change(example: Path) -> None:
    before = (example / "fixtures/retry_policy.json").read_bytes()
    edit(example, scenarios.MOVE_FIXTURE)
    assert (example / "fixtures/retry_policy.json").read_bytes() != before


def test_the_redaction_property_can_fail(example: Path) -> None:
    edit(example, Edit("billing/redact.py", "[0-9]{12,}", "[0-9]{20,}", "weaker card pattern"))
    assert outcomes(example, "no_secret_in_log", runs=1) == [1]


def test_the_idempotence_property_can_fail(example: Path) -> None:
    edit(example, Edit("billing/ledger.py", "        if existing is None:\n",
                       "        if existing is None or amount_cents > 0:\n", "append replays"))
    assert outcomes(example, "idempotent_write", runs=1) == [1]


def test_an_edit_whose_text_is_missing_is_refused(example: Path) -> None:
    with pytest.raises(CannotJudge, match="does not contain"):
        apply_edit(example, Edit("billing/client.py", "NO SUCH TEXT", "x", "nothing"))


def test_prepare_refuses_a_non_empty_dir_or_a_file(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(CannotJudge, match="not empty"):
        build.prepare(str(tmp_path / "full"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(CannotJudge, match="not a directory"):
        build.prepare(str(tmp_path / "file"))
    (tmp_path / "empty").mkdir()
    assert build.prepare(str(tmp_path / "empty")) == tmp_path / "empty"
    assert build.prepare(str(tmp_path / "a" / "b")).is_dir()


def test_missing_modules_asks_the_interpreter() -> None:
    assert shell.missing_modules("pytest", "hypothesis") == []
    assert shell.missing_modules("json", "no_such_module_xyz") == ["no_such_module_xyz"]


def test_the_demo_environment_drops_what_would_change_a_verdict(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    env = shell.demo_env()
    assert not {"BALLOT_GUARD_AGENT", "GIT_DIR", "PYTEST_ADDOPTS", "GIT_AUTHOR_NAME"} & set(env)
