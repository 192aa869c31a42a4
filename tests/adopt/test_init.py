"""``ballot-guard init``: a fresh repository adopted, then a real commit, push and gate
through the pre-commit framework; minimal edits of existing files, byte for byte; a
second run changes nothing; every refusal writes nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.adopt.edits import MANUAL_IDS, hooks_entry, precommit_edit, table_text
from testing.helpers import Repo, git, init_repo, run_cli
from testing.hookutil import (
    BILLING,
    PROPERTY,
    HookSource,
    bare_remote,
    commit,
    hook_source,
    pre_commit,
    push,
    venv_python,
)

RUFF = (b'[project]\nname = "billing"  # the service\nversion = "1.0"\n\n'
        b'# lint settings\n[tool.ruff]\nline-length = 100\n')
PRE_COMMIT = (b"# hooks of this repository\nrepos:\n    - repo: https://github.com/pre-commit/pre-commit-hooks\n"
              b"      rev: v4.5.0  # pinned\n      hooks:\n          - id: trailing-whitespace\n\n"
              b"    # more later\ndefault_stages: [pre-commit]\n")
HOOKS = ["--hooks-repo", "https://github.com/acme/ballot-guard", "--hooks-rev", "v9.9.9"]


def tree_bytes(root: Path) -> dict[str, bytes | None]:
    """Every file under root except .git, with its bytes (None: a directory)."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        found[rel] = None if path.is_dir() else path.read_bytes()
    return found


def index_state(repo: Repo) -> str:
    return repo.git("ls-files", "-s") + repo.git("diff", "--cached", "--name-status")


def remaining(out: str) -> list[str]:
    lines = out.split("what remains:\n", 1)[1].splitlines()
    return [line.strip() for line in lines if line.startswith("  ")]


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A service with history, not yet guarded."""
    repo.write("billing.py", BILLING)
    repo.commit_all("billing service")
    return repo


def test_existing_files_get_a_minimal_edit_and_stay_byte_identical_elsewhere(project: Repo) -> None:
    project.write("pyproject.toml", RUFF)
    project.write(".pre-commit-config.yaml", PRE_COMMIT)
    project.commit_all("config")
    before = index_state(project)
    res = run_cli(["init", "--agents", "Coding Agent <*>", *HOOKS], project.path)
    assert res.code == 0, res.err
    table = table_text({"agents": ["Coding Agent <*>"]}).encode()
    assert (project.path / "pyproject.toml").read_bytes() == RUFF + b"\n" + table
    entry = hooks_entry("https://github.com/acme/ballot-guard", "v9.9.9", "    ").encode()
    cut = PRE_COMMIT.index(b"\n\n    # more later")  # right after the last item
    assert (project.path / ".pre-commit-config.yaml").read_bytes() == \
        PRE_COMMIT[:cut + 1] + entry + PRE_COMMIT[cut + 1:]
    doc = yaml.safe_load((project.path / ".pre-commit-config.yaml").read_text())
    assert doc["default_stages"] == ["pre-commit"]
    assert doc["repos"][1]["hooks"] == [
        {"id": "ballot-guard"}, {"id": "ballot-gate", "verbose": True}, {"id": "ballot-split"},
        {"id": "ballot-pin"}, {"id": "ballot-unfreeze"}, {"id": "ballot-doctor"}]
    assert (project.path / "fixture_digest.txt").read_text().startswith("sha256-v2:")
    assert (project.path / "properties").is_dir() and (project.path / "fixtures").is_dir()
    assert index_state(project) == before  # nothing staged
    assert "edited pyproject.toml\n" in res.out
    assert "appended the hooks to .pre-commit-config.yaml\n" in res.out
    assert remaining(res.out) == [
        ("git status --short -- pyproject.toml .pre-commit-config.yaml fixture_digest.txt; "
         "git diff -- pyproject.toml .pre-commit-config.yaml fixture_digest.txt  # review the adoption"),
        "git add -- pyproject.toml .pre-commit-config.yaml fixture_digest.txt",
        "git commit -m 'Adopt ballot-guard'  # the judge only: stage nothing else",
        "pre-commit install --hook-type pre-commit --hook-type pre-push"]
    # twice: no change at all
    after = tree_bytes(project.path)
    again = run_cli(["init", "--agents", "Coding Agent <*>", *HOOKS], project.path)
    assert again.code == 0, again.err
    assert tree_bytes(project.path) == after
    assert "ballot-guard is adopted here already: nothing to change" in again.out


def test_a_fresh_repository_keeps_crlf_and_writes_only_given_keys(project: Repo) -> None:
    crlf = b'[project]\r\nname = "billing"\r\n'
    project.write("pyproject.toml", crlf)
    res = run_cli(["init", "--properties", "checks", "--fixtures", "data", *HOOKS], project.path)
    assert res.code == 0, res.err
    assert (project.path / "pyproject.toml").read_bytes() == crlf + (
        b'\r\n[tool.ballot_guard]\r\n# where the properties live: one test_<name>.py per voter\r\n'
        b'properties_dir = "checks"\r\n# the fixture pack whose bytes are pinned '
        b'(ballot-guard digest --pin)\r\nfixtures_dir = "data"\r\n')
    assert (project.path / "checks").is_dir() and (project.path / "data").is_dir()
    assert not (project.path / "properties").exists()


def test_no_pyproject_and_no_keys_creates_none(project: Repo) -> None:
    res = run_cli(["init", *HOOKS], project.path)
    assert res.code == 0, res.err
    assert not (project.path / "pyproject.toml").exists()
    assert (project.path / ".pre-commit-config.yaml").read_text() == \
        "repos:\n" + hooks_entry("https://github.com/acme/ballot-guard", "v9.9.9")


def test_a_key_is_added_under_an_existing_table_header(project: Repo) -> None:
    old = b'[tool.ballot_guard]  # ours\nrepeats = 3\n\n[tool.ruff]\nline-length = 90\n'
    project.write("pyproject.toml", old)
    res = run_cli(["init", "--agents", "Bot <*>", *HOOKS], project.path)
    assert res.code == 0, res.err
    assert (project.path / "pyproject.toml").read_bytes() == old.replace(
        b"# ours\n", b"# ours\n# identities (Name <email>, * and ? wildcards) whose changes may "
        b'not touch the judge\nagents = ["Bot <*>"]\n')


def test_ci_github_writes_a_workflow_that_uses_this_repositorys_action(project: Repo) -> None:
    res = run_cli(["init", "--ci", "github", *HOOKS], project.path)
    assert res.code == 0, res.err
    workflow = yaml.safe_load((project.path / ".github/workflows/ballot-guard.yml").read_text())
    steps = workflow["jobs"]["ballot-guard"]["steps"]
    assert steps[0] == {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}}
    assert steps[-1] == {"uses": "acme/ballot-guard@v9.9.9"}
    assert workflow[True] == {"pull_request": None}  # YAML 1.1 reads `on` as true
    # the workflow decides whether ci runs at all: it is part of the judge
    assert 'oracle_paths = [".github/workflows/**"]' in (project.path / "pyproject.toml").read_text()


def test_shards_need_ci_github_and_a_sensible_count(project: Repo) -> None:
    for args in (["--shards", "3"], ["--ci", "github", "--shards", "1"],
                 ["--ci", "github", "--shards", "65"]):
        res = run_cli(["init", *args, *HOOKS], project.path)
        assert res.code == 4 and "--shards N goes with --ci github, and N is 2 to 64" in res.err
        assert not (project.path / ".github").exists()


REFUSALS = {
    "table sets another value": (
        {"pyproject.toml": b'[tool.ballot_guard]\nproperties_dir = "a"\n'},
        ["--properties", "b"], ("pyproject.toml: [tool.ballot_guard] already sets "
         "properties_dir = \"a\", not \"b\""), 'properties_dir = "b"'),
    "dotted keys": (
        {"pyproject.toml": b'[tool]\nballot_guard.repeats = 3\n'},
        ["--agents", "Bot <*>"], ("pyproject.toml: [tool.ballot_guard] is not written as one "
         "[tool.ballot_guard] header"), 'agents = ["Bot <*>"]'),
    "agents lacks a pattern": (
        {"pyproject.toml": b'[tool.ballot_guard]\nagents = ["A <*>"]\n'},
        ["--agents", "B <*>"], "pyproject.toml: [tool.ballot_guard] agents lacks ['B <*>']",
        'agents = ["A <*>", "B <*>"]'),
    "flow-style repos": (
        {".pre-commit-config.yaml": b"repos: []\n"}, [],
        ".pre-commit-config.yaml: no block-style top-level `repos:` list to append to",
        "- id: ballot-gate"),
    "one hook of two": (
        {".pre-commit-config.yaml": b"repos:\n- repo: x\n  rev: y\n  hooks:\n  - id: ballot-guard\n"},
        [], ".pre-commit-config.yaml: it has ballot-guard but not ballot-gate", "- id: ballot-gate"),
    "foreign workflow": (
        {".github/workflows/ballot-guard.yml": b"name: mine\n"}, ["--ci", "github"],
        ".github/workflows/ballot-guard.yml: exists with other content",
        "- uses: acme/ballot-guard@v9.9.9"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_file_it_cannot_edit_minimally_is_4_naming_it_and_nothing_is_written(
        project: Repo, case: str) -> None:
    files, args, message, snippet = REFUSALS[case]
    for rel, data in files.items():
        project.write(rel, data)
    before = tree_bytes(project.path)
    res = run_cli(["init", *args, *HOOKS], project.path)
    assert res.code == 4, res.out + res.err
    assert res.err.startswith(f"ballot-guard: error: init: {message}"), res.err
    path = message.split(":", 1)[0]
    assert f"\nadd to {path}:\n" in res.err and snippet in res.err
    assert tree_bytes(project.path) == before


@pytest.mark.parametrize(("files", "message"), [
    ({"pyproject.toml": b"[tool\n"}, "init: pyproject.toml: invalid TOML"),
    ({"pyproject.toml": b'[tool.ballot_guard]\nrepeats = 1\n'}, "repeats: must be at least 2"),
    ({"fixture_digest.txt": b"sha256-v2:" + b"0" * 64 + b"\n", "fixtures/a.json": b"{}\n"},
     "init: fixture_digest.txt is there but does not hold"),
    ({"properties": b"a file\n"}, "init: properties exists and is not a directory"),
    ({"pyproject.toml/x": b""}, "init: pyproject.toml is a directory, not a file"),
])
def test_what_it_cannot_judge_is_4_and_nothing_is_written(
        project: Repo, files: dict[str, bytes], message: str) -> None:
    for rel, data in files.items():
        project.write(rel, data)
    before = tree_bytes(project.path)
    res = run_cli(["init", *HOOKS], project.path)
    assert res.code == 4
    assert message in res.err and "Traceback" not in res.err
    assert tree_bytes(project.path) == before


def test_a_symlinked_file_it_would_edit_is_4_and_nothing_is_written(project: Repo) -> None:
    project.write("config/pyproject.toml", RUFF)
    project.symlink("pyproject.toml", "config/pyproject.toml")
    before = tree_bytes(project.path)
    res = run_cli(["init", *HOOKS], project.path)
    assert res.code == 4 and "Traceback" not in res.err
    assert "init: pyproject.toml is a symlink: edit its target by hand" in res.err
    assert tree_bytes(project.path) == before


def test_outside_a_repository_is_4(tmp_path: Path) -> None:
    res = run_cli(["init"], tmp_path)
    assert res.code == 4 and "not a git repository" in res.err


_items = st.lists(st.sampled_from([
    "- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: x\n    language: system\n",
    "- repo: https://example.com/r\n  rev: v1\n  hooks:\n  - id: y\n",
    "# a comment\n", "\n"]), max_size=4)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(indent=st.sampled_from([0, 2, 4]), items=_items, head=st.sampled_from(["", "# top\n"]),
       tail=st.sampled_from(["", "default_stages: [pre-commit]\n", "ci:\n  autofix: false\n",
                             "# end\n"]))
def test_appending_to_repos_keeps_every_line_and_adds_exactly_our_entry(
        indent: int, items: list[str], head: str, tail: str) -> None:
    pad = " " * indent
    body = "".join("".join(pad + line if line.strip() else line
                           for line in item.splitlines(keepends=True)) for item in items)
    old = f"{head}repos:\n{body}{tail}"
    new = precommit_edit(old.encode(), "https://h/x", "v1")
    assert new is not None
    text = new.decode()
    before = yaml.safe_load(old) or {}
    after = yaml.safe_load(text)
    assert after["repos"] == [*(before.get("repos") or []), {
        "repo": "https://h/x", "rev": "v1",
        "hooks": [{"id": "ballot-guard"}, {"id": "ballot-gate", "verbose": True},
                  *({"id": h} for h in MANUAL_IDS)]}]
    assert {k: v for k, v in after.items() if k != "repos"} == \
        {k: v for k, v in before.items() if k != "repos"}
    # only insertions: the old text is the new one with one contiguous block taken out
    inserted = len(text) - len(old)
    assert any(text[:i] + text[i + inserted:] == old for i in range(len(text) - inserted + 1))
    assert precommit_edit(new, "https://h/x", "v1") is None


# Through the real framework: the adoption committed, then a commit and a push pass.

@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    return hook_source(tmp_path_factory.mktemp("init-framework"))


def test_a_fresh_repository_adopted_then_commit_push_and_gate_pass(
        hook_repo: HookSource, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, sha, home = hook_repo
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    repo = init_repo(tmp_path / "service")
    repo.write("billing.py", BILLING)
    repo.write(".gitignore", ".venv/\n")
    venv_python(repo)
    repo.commit_all("billing service")
    repo.write("conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    repo.write("properties/test_bounded_retry.py", PROPERTY)
    res = run_cli(["init", "--agents", "Coding Agent <*>", "--hooks-repo", str(source),
                   "--hooks-rev", sha], repo.path)
    assert res.code == 0, res.err
    assert repo.git("diff", "--cached", "--name-only") == ""
    commands = remaining(res.out)
    assert commands[1] == ("git add -- pyproject.toml .pre-commit-config.yaml "
                           "fixture_digest.txt properties")
    repo.git("add", "conftest.py")  # the user's own part of the judge
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:  # exactly what init printed (pre-commit on PATH, as installed)
        proc = subprocess.run(["bash", "-c", command], cwd=repo.path, capture_output=True,
                              text=True, check=False, timeout=900, env=env)
        assert proc.returncode == 0, command + proc.stdout + proc.stderr
    assert repo.git("status", "--porcelain") == ""
    proc = pre_commit(repo, "install-hooks")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    repo.write("billing.py", BILLING + "\n# tidy\n")
    repo.stage()
    proc = commit(repo, "-m", "tidy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ballot-guard (scope, fixture pin and freeze file of the staged change)" in proc.stderr
    assert ".Passed\n" in proc.stderr
    bare_remote(repo, tmp_path)
    proc = push(repo, "-u", "origin", "main")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "bounded_retry" in out and "clean (exit 0)" in out  # verbose: the ballots show
    assert git(repo.path, "ls-remote", "origin", "refs/heads/main").split("\t")[0] == repo.head()
