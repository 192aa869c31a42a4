"""Where ballot-guard came only through the pre-commit framework, every command a hint
names works: the blocked hook says how, and the manual-stage hook ids run them
(``pre-commit run ballot-split --hook-stage manual``), on the real framework."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

from ballot_guard.adopt.edits import hooks_entry
from ballot_guard.hooks.framework_hint import MANUAL
from testing.hookutil import BILLING, HookSource, commit, hook_source, make_project, pre_commit

ROOT = Path(__file__).resolve().parents[2]


def test_every_manual_hook_of_the_hints_is_in_the_manifest() -> None:
    manifest = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    for command, hook_id in MANUAL.items():
        assert manifest[hook_id]["stages"] == ["manual"]
        entry = str(manifest[hook_id]["entry"])
        assert entry == command or (hook_id == "ballot-unfreeze"
                                    and entry == "ballot-guard hook unfreeze")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    return hook_source(tmp_path_factory.mktemp("manual"))


def _no_ballot_guard_path() -> str:
    """PATH as a user's shell has it where ballot-guard came only through pre-commit."""
    keep = [d for d in os.environ["PATH"].split(os.pathsep) if d
            and not (Path(d) / "ballot-guard").exists()]
    return os.pathsep.join([*keep, str(Path(sys.executable).parent / "no-such-dir")])


def test_the_hinted_commands_run_through_the_manual_stage(
        hook_repo: HookSource, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, sha, home = hook_repo
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    config = "repos:\n" + hooks_entry(str(source), sha)
    repo = make_project(tmp_path / "project", {".pre-commit-config.yaml": config})
    env = {**os.environ, "PATH": _no_ballot_guard_path()}
    proc = pre_commit(repo, "install", "--hook-type", "pre-commit", "--hook-type", "pre-push",
                      env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # a mixed change: the blocked commit says how to reach `ballot-guard split`
    repo.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text() + "\n# tidy\n")
    repo.stage()
    head = repo.head()
    proc = commit(repo, "-m", "mixed", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and repo.head() == head, out
    assert "ballot-guard split: pre-commit run ballot-split --hook-stage manual" in out
    # ... and that command splits it: the oracle part is committed alone
    proc = pre_commit(repo, "run", "ballot-split", "--hook-stage", "manual", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert repo.git("log", "-1", "--name-only", "--format=%s").split("\n")[2:3] == [
        "properties/test_bounded_retry.py"]
    assert repo.git("diff", "--cached", "--name-only") == "billing.py\n"
    repo.git("reset", "-q", "--hard")
    # ballot-pin re-pins moved fixtures
    repo.write("fixtures/cards.json", '{"cards": [1, 2, 3, 4]}\n')
    repo.stage("fixtures")  # pre-commit runs a hook on the staged files, stashing the rest
    proc = pre_commit(repo, "run", "ballot-pin", "--hook-stage", "manual", env=env)
    # the framework reports a hook that wrote a file as failed: here the file is the new pin
    assert "files were modified by this hook" in proc.stdout, proc.stdout + proc.stderr
    assert "pinned sha256-v2:" in proc.stdout
    assert subprocess.run([sys.executable, "-m", "ballot_guard", "digest", "--check"],
                          cwd=repo.path, capture_output=True, check=False).returncode == 0
    repo.commit_all("re-pin")
    # ballot-unfreeze: a frozen voter whose property now passes stably
    repo.write("freeze_set.json", json.dumps({"frozen": ["bounded_retry"]}) + "\n")
    repo.commit_all("freeze bounded_retry")
    proc = pre_commit(repo, "run", "ballot-unfreeze", "--hook-stage", "manual", env=env)
    assert "unfroze bounded_retry after" in proc.stdout, proc.stdout + proc.stderr
    assert json.loads((repo.path / "freeze_set.json").read_text())["frozen"] == []
    # ballot-doctor: the report, with its findings
    proc = pre_commit(repo, "run", "ballot-doctor", "--hook-stage", "manual", env=env)
    assert "ballot-guard doctor: " in proc.stdout and "voters: bounded_retry" in proc.stdout
    assert "hooks: pre-commit framework, pre-push framework" in proc.stdout
