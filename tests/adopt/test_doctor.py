"""``ballot-guard doctor``: what it reports, every finding, and its exit codes."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ballot_guard.adopt import doctor
from testing.helpers import Repo, holds_the_keys, pin, run_cli
from testing.hookutil import make_project, pyproject


@pytest.fixture
def guarded(tmp_path: Path) -> Repo:
    """An adopted project with the plain hooks installed: nothing to find."""
    repo = make_project(tmp_path / "outer" / "service")
    assert run_cli(["install"], repo.path).code == 0
    return repo


def doctor_json(repo: Repo) -> tuple[int, dict[str, object]]:
    res = run_cli(["doctor", "--json"], repo.path)
    return res.code, json.loads(res.out)  # the whole of stdout is one object


def test_a_guarded_repository_has_no_finding(guarded: Repo) -> None:
    res = run_cli(["doctor"], guarded.path)
    assert res.code == 0, res.out
    assert res.out.rstrip().endswith("no findings")
    assert f"  python = {sys.executable!r}  (table)\n" in res.out
    assert "  repeats = 2  (default)\n" in res.out
    assert "voters: bounded_retry\n" in res.out
    assert "hooks: pre-commit plain, pre-push plain\n" in res.out
    assert "pin: fixture_digest.txt: holds\n" in res.out
    code, data = doctor_json(guarded)
    assert code == 0 and data["exit"] == 0 and data["findings"] == []
    assert data["voters"] == ["bounded_retry"]
    assert data["config"]["neutral_paths"] == {"value": ["*.md", "docs/**"], "source": "table"}
    assert data["config"]["review_days"] == {"value": 7, "source": "default"}
    runner = data["interpreter"]
    assert isinstance(runner, dict) and runner["python"] == sys.executable
    assert runner["pytest"] == pytest.__version__ and runner["error"] is None
    assert data["pin"]["ok"] is True  # type: ignore[index]
    assert data["identity"] == {"identities": ["Test Person <test@example.com>"],
                                "agent": False, "pattern": None}
    holds_the_keys(doctor.ReportJson, data)  # its TypedDicts declare exactly what it writes
    for key, record in (("interpreter", doctor.Runner), ("identity", doctor.Identity),
                        ("pin", doctor.PinState)):
        holds_the_keys(record, data[key])
    for setting in data["config"].values():
        holds_the_keys(doctor.Setting, setting)


def test_the_identity_that_matches_agents_is_named_with_its_pattern(
        guarded: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    guarded.write("pyproject.toml", pyproject('agents = ["Nobody <*>", "Coding Agent <*>"]\n'))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Coding Agent")
    res = run_cli(["doctor"], guarded.path)
    assert "committing as: Coding Agent <test@example.com>, Test Person <test@example.com>: " \
        "an agent (matches 'Coding Agent <*>')" in res.out


def test_a_pattern_that_can_never_match_is_named(guarded: Repo) -> None:
    """The configuration refuses it (4), naming it and what to write instead."""
    guarded.write("pyproject.toml", pyproject('agents = ["Coding Agent"]\n'))
    res = run_cli(["doctor", "--json"], guarded.path)
    assert res.code == 4 and res.out == ""
    assert "'Coding Agent' can match no 'Name <email>' identity; did you mean " \
        "'Coding Agent <*>'?" in res.err


def _neutral_code(repo: Repo) -> None:
    repo.write("pyproject.toml", pyproject().replace('"docs/**"', '"docs/**", "tools/**"'))
    repo.write("tools/release.py", "print('release')\n")
    repo.commit_all("tools")


def _missing_dir(repo: Repo) -> None:
    for f in (repo.path / "fixtures").iterdir():
        f.unlink()
    (repo.path / "fixtures").rmdir()


def _empty_property(repo: Repo) -> None:
    repo.write("properties/test_nothing.py", "import billing\nLIMIT = 3\n")


def _frozen_gone(repo: Repo) -> None:
    repo.write("freeze_set.json", '{"frozen": ["ghost"]}\n')


def _addopts_config(repo: Repo) -> None:
    repo.write("pyproject.toml", pyproject() + '\n[tool.pytest.ini_options]\naddopts = "-c ci/pytest.ini"\n')
    repo.write("ci/pytest.ini", "[pytest]\n")


def _parent_config(repo: Repo) -> None:
    (repo.path.parent / "pytest.ini").write_text("[pytest]\naddopts = -p no:randomly\n")


def _no_pre_push(repo: Repo) -> None:
    assert run_cli(["install", "--uninstall"], repo.path).code == 0


FINDINGS: dict[str, tuple[Callable[[Repo], None], str, str]] = {
    "neutral-code": (_neutral_code, "neutral-code",
                     "neutral_paths pattern 'tools/**' covers code (e.g. tools/release.py)"),
    "oracle-dir": (_missing_dir, "oracle-dir", "fixtures_dir fixtures/ is missing"),
    "property-empty": (_empty_property, "property-empty",
                       "property properties/test_nothing.py holds no test"),
    "frozen-gone": (_frozen_gone, "frozen-gone",
                    "frozen name 'ghost' has no property file properties/test_ghost.py"),
    "pytest-config-addopts": (_addopts_config, "pytest-config",
                              ("pytest config outside the oracle: pyproject.toml addopts -c "
                               "ci/pytest.ini")),
    "pytest-config-parent": (_parent_config, "pytest-config",
                             "pytest config outside the oracle: "),
    "pre-push": (_no_pre_push, "pre-push", "the pre-push hook is not installed"),
}


@pytest.mark.parametrize("case", sorted(FINDINGS))
def test_every_finding(guarded: Repo, case: str) -> None:
    change, kind, message = FINDINGS[case]
    change(guarded)
    code, data = doctor_json(guarded)
    assert code == 1
    findings = data["findings"]
    assert isinstance(findings, list)
    assert [f["kind"] for f in findings] == [kind], findings
    assert findings[0]["message"].startswith(message), findings
    res = run_cli(["doctor"], guarded.path)
    assert res.code == 1
    assert "1 finding(s) that would silently weaken a verdict:\n  - " + message in res.out


def test_the_parent_config_is_named_by_its_path(guarded: Repo) -> None:
    _parent_config(guarded)
    _code, data = doctor_json(guarded)
    assert data["findings"] == [{"kind": "pytest-config", "message": (
        f"pytest config outside the oracle: {guarded.path.parent / 'pytest.ini'} "
        "(above the repository)")}]


def test_the_framework_without_ballot_gate_is_no_pre_push_hook(guarded: Repo) -> None:
    assert run_cli(["install", "--uninstall"], guarded.path).code == 0
    hook = guarded.path / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\n")
    guarded.write(".pre-commit-config.yaml",
                  "repos:\n- repo: x\n  rev: y\n  hooks:\n  - id: ballot-guard\n")
    code, data = doctor_json(guarded)
    assert data["hooks"] == {"pre-commit": None, "pre-push": "framework"}
    assert [f["kind"] for f in data["findings"]] == ["pre-push"]  # type: ignore[union-attr]
    guarded.write(".pre-commit-config.yaml", "repos:\n- repo: x\n  rev: y\n  hooks:\n"
                  "  - id: ballot-guard\n  - id: ballot-gate\n")
    code, data = doctor_json(guarded)
    assert code == 0, data


def test_a_runner_that_cannot_run_is_reported(guarded: Repo) -> None:
    guarded.write("pyproject.toml", pyproject(python=False) + 'python = "/nonexistent/python"\n')
    res = run_cli(["doctor"], guarded.path)
    assert "interpreter: cannot run the gate: [tool.ballot_guard] python = " \
        "'/nonexistent/python': no such executable\n" in res.out
    assert res.code == 0  # loud at the gate (4), not a silent weakening


@pytest.mark.parametrize(("setup", "message"), [
    ("bad-config", "[tool.ballot_guard] repeats: must be at least 2"),
    ("no-repo", "not a git repository"),
])
def test_what_it_cannot_judge_is_4(tmp_path: Path, setup: str, message: str) -> None:
    if setup == "bad-config":
        repo = make_project(tmp_path / "p")
        repo.write("pyproject.toml", pyproject("repeats = 1\n"))
        where = repo.path
    else:
        where = tmp_path
    res = run_cli(["doctor", "--json"], where)
    assert res.code == 4 and res.out == ""
    assert message in res.err


def test_the_pins_state_is_reported(guarded: Repo) -> None:
    guarded.write("fixtures/cards.json", "{}\n")
    code, data = doctor_json(guarded)
    assert data["pin"]["ok"] is False  # type: ignore[index]
    assert data["pin"]["problem"]  # type: ignore[index]
    pin(guarded, "cli")
    code, data = doctor_json(guarded)
    assert code == 0 and data["pin"]["ok"] is True  # type: ignore[index]


def _doctor_refused(repo: Repo) -> subprocess.CompletedProcess[str]:
    """doctor on a host whose kernel refuses user namespaces."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1)")
    script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -m ballot_guard "$@"'
    return subprocess.run([unshare, "--user", "--map-root-user", "--fork", "sh", "-c", script,
                           sys.executable, "doctor"], cwd=repo.path, text=True,
                          capture_output=True, timeout=300, check=False)


FORKED = "isolation: each run forked from a clean runner process; "


@pytest.mark.parametrize("mode, line", [
    ("off", FORKED + 'hermetic, no OS sandbox: sandbox = "off"'),
    ("auto", FORKED + "sandbox (user, mount, pid, ipc, net namespaces; no network)"),
    ("required", FORKED + "sandbox (user, mount, pid, ipc, net namespaces; no network)"),
])
def test_the_isolation_line_is_what_the_gate_would_get(guarded: Repo, mode: str,
                                                       line: str) -> None:
    guarded.write("pyproject.toml", pyproject(f'sandbox = "{mode}"\n'))
    res = run_cli(["doctor"], guarded.path)
    assert line in res.out.splitlines(), res.out
    _, data = doctor_json(guarded)
    assert FORKED[len("isolation: "):] + line.split("; ", 1)[1] == data["isolation"]


def test_a_refused_sandbox_is_named_where_the_kernel_refuses_it(guarded: Repo) -> None:
    guarded.write("pyproject.toml", pyproject('sandbox = "auto"\n'))
    proc = _doctor_refused(guarded)
    assert (FORKED + "hermetic, no OS sandbox: the OS refused the sandbox "
            "(unshare(user, mount): No space left on device)") in proc.stdout.splitlines(), \
        proc.stdout + proc.stderr
    guarded.write("pyproject.toml", pyproject('sandbox = "required"\n'))
    proc = _doctor_refused(guarded)
    assert (FORKED + 'the gate cannot start its runs: sandbox = "required" but the runs '
            "cannot be sandboxed: the OS refused the sandbox (unshare(user, mount): No space "
            "left on device)") in proc.stdout.splitlines(), proc.stdout + proc.stderr
