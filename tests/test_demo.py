"""`ballot-guard demo`: the whole walk, its refusals, and how it reports a verdict
that did not come out as expected."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from ballot_guard.demo import build, scenarios
from ballot_guard.demo.scenarios import Check, Git, Say, Step
from ballot_guard.exit_codes import CLEAN, DRIFT
from tests.helpers import git, run_bg, run_cli

ROOT = Path(__file__).resolve().parent.parent


def expected_exits() -> list[tuple[str, int]]:
    return [(" ".join(a.args), a.expect) for s in scenarios.STEPS for a in s.actions
            if isinstance(a, Check)]


def test_the_full_demo_plays_every_verdict_as_expected(tmp_path: Path) -> None:
    """With no DIR, in a new temporary folder (here under TMPDIR=tmp_path)."""
    global_config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    before = global_config.read_bytes()
    started = time.monotonic()
    res = run_bg(["demo"], cwd=tmp_path, env=dict(os.environ, TMPDIR=str(tmp_path)))
    seconds = time.monotonic() - started
    assert res.code == 0, res.out + res.err
    [target] = tmp_path.glob("ballot-guard-demo-*")
    assert f"building the example repository in {target}\n" in res.out
    assert "demo: every verdict came out as expected" in res.out
    for number, step in enumerate(scenarios.STEPS, 1):
        assert f"== {number}. {step.title} ==" in res.out
    # Every check prints its command, then its exit code beside the expected one, in order.
    printed = re.findall(r"^\$ ballot-guard (.*)$|^exit (\d) \(expected (\d)\)$", res.out, re.MULTILINE)
    commands = [c for c, _, _ in printed if c]
    exits = [(int(got), int(want)) for c, got, want in printed if not c]
    assert len(commands) == len(exits) == len(expected_exits())
    assert [want for _, want in exits] == [e for _, e in expected_exits()]
    assert all(got == want for got, want in exits)
    assert sorted({want for _, want in exits}) == [0, 1, 2, 3]
    assert "(skipped" not in res.out  # every command of the contract is in this build
    # The repository stays behind, with the story in its history.
    log = git(target, "log", "--format=%an|%s", "--all")
    assert "Coding Agent|Rename the retry helper" in log
    assert "Dana Reviewer|bounded_retry: allow a fourth attempt (from the agent patch)" in log
    assert git(target, "status", "--porcelain", "--untracked-files=no") == ""
    freeze = json.loads((target / "freeze_set.json").read_text())
    assert freeze["frozen"] == []
    assert [(h["event"], h["name"]) for h in freeze["history"]] == [
        ("frozen", "bounded_retry"), ("assigned", "bounded_retry"), ("unfrozen", "bounded_retry")]
    assert git(target, "config", "--local", "user.email").strip() == "dana@example.com"
    assert global_config.read_bytes() == before  # identities are the repository's own
    print(f"demo took {seconds:.1f} s")


def test_a_non_empty_dir_is_refused_with_4(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    res = run_cli(["demo", str(tmp_path)], cwd=tmp_path)
    assert res.code == 4
    assert res.err.startswith("ballot-guard: error: demo:") and "not empty" in res.err
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_a_file_as_dir_is_refused_with_4(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert run_cli(["demo", str(tmp_path / "f")], cwd=tmp_path).code == 4


def test_an_unexpected_verdict_fails_the_demo_naming_the_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = (
        Step("Pinned and clean", (Check(("digest", "--check"), CLEAN),)),
        Step("Claimed drift", (Say("The check expects drift on clean fixtures."),
                               Check(("digest", "--check"), DRIFT))),
    )
    monkeypatch.setattr(scenarios, "STEPS", steps)
    res = run_cli(["demo", str(tmp_path / "d")], cwd=tmp_path)
    assert res.code == 1
    assert "exit 0 (expected 0)" in res.out
    assert "exit 0 (expected 2)  <-- not as expected" in res.out
    assert "demo: step 2 (Claimed drift): `ballot-guard digest --check` did not exit 2" in res.out
    assert "every verdict came out as expected" not in res.out


def test_a_failed_setup_stops_the_demo_naming_the_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = (Step("Broken setup", (Git(("switch", "-q", "no-such-branch")),
                                   Check(("digest", "--check"), CLEAN))),
             Step("Never reached", (Check(("digest", "--check"), CLEAN),)))
    monkeypatch.setattr(scenarios, "STEPS", steps)
    res = run_cli(["demo", str(tmp_path / "d")], cwd=tmp_path)
    assert res.code == 1
    assert "demo: step 1 (Broken setup): could not set up: " in res.out
    assert "Never reached" not in res.out


def test_a_command_missing_from_the_build_is_reported_when_optional(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = (Step("Later", (Check(("no-such-command",), CLEAN),
                            Check(("digest", "--check"), DRIFT))),)
    monkeypatch.setattr(scenarios, "STEPS", steps)
    monkeypatch.setattr(scenarios, "OPTIONAL_COMMANDS", frozenset({"no-such-command"}))
    res = run_cli(["demo", str(tmp_path / "d")], cwd=tmp_path)
    assert res.code == 0, res.out
    assert "`ballot-guard no-such-command` is not in this build: skipped" in res.out
    assert "(skipped: it follows a skipped command)" in res.out
    monkeypatch.setattr(scenarios, "OPTIONAL_COMMANDS", frozenset())
    res = run_cli(["demo", str(tmp_path / "d2")], cwd=tmp_path)
    assert res.code == 1


def test_without_pytest_the_demo_says_what_to_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([str(python), "-m", "ballot_guard", "demo", str(tmp_path / "d")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 4, proc.stderr
    assert "pip install 'ballot-guard[demo]'" in proc.stderr
    assert "pytest" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "d").exists()


def test_package_data_carries_every_example_file() -> None:
    """What setuptools' package-data globs take (hidden files not) is every example file."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["ballot_guard"]
    pkg = ROOT / "ballot_guard"
    taken = {p for pattern in patterns
             for p in glob.glob(pattern, root_dir=pkg, recursive=True) if (pkg / p).is_file()}
    example = {p.relative_to(pkg).as_posix() for p in build.EXAMPLE.rglob("*")
               if p.is_file() and not build.skipped(p.relative_to(build.EXAMPLE))}
    assert example and example <= taken
    assert "demo/example/gitignore" in example
