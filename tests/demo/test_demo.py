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

from ballot_guard.demo import build, scenarios, shell
from ballot_guard.demo.scenarios import Check, Edit, Git, Hooked, Hooks, Say, Step
from ballot_guard.exit_codes import BLOCKED, CLEAN, DRIFT
from testing.helpers import git, run_bg, run_cli

ROOT = Path(__file__).resolve().parents[2]


def expected_exits() -> list[tuple[str, int]]:
    return [(" ".join(a.args), a.expect) for s in scenarios.STEPS for a in s.actions
            if isinstance(a, Check)]


def expected_hooked() -> list[tuple[str, int]]:
    return [(" ".join(a.args), a.expect) for s in scenarios.STEPS for a in s.actions
            if isinstance(a, Hooked)]


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
    assert len(re.findall(r"^hook exit", res.out, re.MULTILINE)) == len(expected_hooked())
    assert "(skipped" not in res.out  # every command of the contract is in this build
    # Through the hooks: the framework is importable here, so its hooks are installed...
    assert "$ pre-commit install --hook-type pre-commit --hook-type pre-push\n" in res.out
    assert "    pre-commit installed at .git/hooks/pre-push\n" in res.out
    hooked = re.findall(r"^\$ git (commit|push) .*$\n(?:    .*\n|\n)*?hook exit (\d) "
                        r"\(expected (\d)\): git \w+ (went ahead|was refused)$",
                        res.out, re.MULTILINE)
    assert hooked == [("commit", "1", "1", "was refused"), ("commit", "0", "0", "went ahead"),
                      ("push", "1", "1", "was refused")]
    refused_commit = res.out.split("$ git commit -a -m 'Rename the retry helper'", 1)[1]
    assert "ballot-guard: BLOCKED (exit 1): rule 1" in refused_commit.split("hook exit", 1)[0]
    refused_push = res.out.split("$ git push origin agent/retry-cap", 1)[1].split("hook exit")[0]
    assert "bounded_retry     fail" in refused_push and "ballot-gate" in refused_push
    remote = target / ".git" / "demo-remote.git"
    assert git(remote, "for-each-ref", "--format=%(refname)") == "refs/heads/main\n"
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


def test_without_the_framework_the_plain_hooks_block_the_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where pre-commit is not importable, ``ballot-guard install``'s hooks do the same."""
    real = shell.missing_modules
    monkeypatch.setattr(shell, "missing_modules",
                        lambda *m: ["pre_commit"] if m == ("pre_commit",) else real(*m))
    steps = (Step("Hooks", (Hooks(),)),
             Step("Blocked", (Git(("switch", "-q", "-c", "x")),
                              Edit("billing/client.py", "MAX_ATTEMPTS = 3\n",
                                   "MAX_ATTEMPTS = 4\n", "cap"),
                              Edit("properties/test_bounded_retry.py", "", "\n# looser\n", "p"),
                              Hooked(("commit", "-a", "-m", "mixed"), BLOCKED, agent=True))))
    monkeypatch.setattr(scenarios, "STEPS", steps)
    res = run_cli(["demo", str(tmp_path / "d")], cwd=tmp_path)
    assert res.code == 0, res.out
    assert "$ ballot-guard install   # pre-commit is not installed: the plain hooks" in res.out
    assert "hook exit 1 (expected 1): git commit was refused" in res.out
    assert not (tmp_path / "d" / ".pre-commit-config.yaml").exists()
    hook = (tmp_path / "d" / ".git" / "hooks" / "pre-commit").read_text()
    assert "# ballot-guard-hook:" in hook


def test_a_hook_that_reports_another_code_fails_the_demo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = (Step("Hooks", (Hooks(),)),
             Step("Claimed block", (Edit("README.md", "", "\nmore\n", "docs"),
                                    Hooked(("commit", "-a", "-m", "docs"), BLOCKED))))
    monkeypatch.setattr(scenarios, "STEPS", steps)
    res = run_cli(["demo", str(tmp_path / "d")], cwd=tmp_path)
    assert res.code == 1
    assert "hook exit 0 (expected 1): git commit went ahead  <-- not as expected" in res.out
    assert "demo: step 2 (Claimed block): `git commit -a -m docs`: its hook did not report " \
        "exit 1" in res.out
