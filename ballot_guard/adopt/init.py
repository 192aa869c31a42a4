"""``ballot-guard init``: adopt ballot-guard in a repository, idempotently.

Everything is planned (and every refusal found) before anything is written; then the
plan's files are written atomically.  Nothing is staged: the user reviews the
adoption and commits it as one oracle-only commit with the commands ``remaining``
prints.
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from ballot_guard import config as cfg
from ballot_guard import git
from ballot_guard.adopt.edits import (
    PRE_COMMIT_CONFIG,
    PYPROJECT,
    Refusal,
    precommit_edit,
    pyproject_edit,
)
from ballot_guard.adopt.source import Source
from ballot_guard.atomic import write_bytes
from ballot_guard.digest import pin
from ballot_guard.digest.framing import Digest
from ballot_guard.digest.pin_file import write_pin
from ballot_guard.errors import CannotJudge
from ballot_guard.hooks.install import read_file

WORKFLOW = ".github/workflows/ballot-guard.yml"


@dataclass(frozen=True)
class Options:
    properties: str | None = None
    fixtures: str | None = None
    agents: tuple[str, ...] = ()
    ci: str | None = None  # "github"
    shards: int = 1  # with ci: the gate split across a matrix of this many jobs


@dataclass(frozen=True)
class FileEdit:
    path: str  # relative to the root
    data: bytes
    what: str  # "created", "appended to", "added keys to"


@dataclass(frozen=True)
class Plan:
    dirs: tuple[str, ...]  # to create
    edits: tuple[FileEdit, ...]
    pin: Digest | None  # the digest to write into the digest file; None: the pin holds
    config: cfg.Config
    kept: tuple[str, ...]  # what was already in place


def _read(root: str, rel: str) -> bytes | None:
    path = os.path.join(root, rel)
    if os.path.islink(path):
        raise CannotJudge(f"init: {rel} is a symlink: edit its target by hand")
    return read_file(path, if_directory=f"init: {rel} is a directory, not a file")


def table_keys(opts: Options) -> dict[str, object]:
    keys: dict[str, object] = {}
    if opts.properties is not None:
        keys["properties_dir"] = opts.properties
    if opts.fixtures is not None:
        keys["fixtures_dir"] = opts.fixtures
    if opts.agents:
        keys["agents"] = list(dict.fromkeys(opts.agents))
    if opts.ci == "github":
        keys["oracle_paths"] = [".github/workflows/**"]
    return keys


_CHECKOUT = """\
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0  # the base branch and every commit of the pull request
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
"""


_HEAD = """\
name: ballot-guard
on:
  pull_request:
permissions:
  contents: read
jobs:
"""


def _venv(install: str) -> str:
    """The step that makes the project's interpreter, as a workflow's step lines."""
    return f"""\
      - name: The project's interpreter (.venv), where the properties run
        run: |
          python -m venv .venv
          {install}
"""


def workflow_text(source: Source, root: str, shards: int = 1) -> str:
    has_project = os.path.exists(os.path.join(root, "setup.py")) or os.path.exists(
        os.path.join(root, PYPROJECT))
    install = ".venv/bin/python -m pip install " + ("-e . " if has_project else "") + \
        "pytest hypothesis"
    if shards > 1:
        return sharded_workflow(source, install, shards)
    return f"""\
# Written by `ballot-guard init --ci github`.  In CI nobody can skip a hook with
# --no-verify: every commit of the pull request is judged (scope), then the fixture pin
# and the repeat gate run at its head.  Exit codes: 0 clean, 1 blocked, 2 fixture
# drift, 3 abstention (a frozen voter), 4 could not judge.
{_HEAD}  ballot-guard:
    runs-on: ubuntu-latest
    steps:
{_CHECKOUT}{_venv(install)}      - uses: {source.action}
"""


def sharded_workflow(source: Source, install: str, n: int) -> str:
    """The sharded form: a matrix job per shard, then the merge job, the one verdict."""
    ks = ", ".join(str(k) for k in range(1, n + 1))
    return f"""\
# Written by `ballot-guard init --ci github --shards {n}`.  In CI nobody can skip a hook
# with --no-verify: every commit of the pull request is judged (scope), then the fixture
# pin and the repeat gate run at its head, the gate's voters split across {n} shard jobs
# (all the repeats of a voter on one machine).  The job `ballot-guard` merges their
# scorecards into one verdict: make it the one required check.  Exit codes: 0 clean,
# 1 blocked, 2 fixture drift, 3 abstention (a frozen voter), 4 could not judge (also: a
# shard missing, or shards of another commit).
{_HEAD}  shard:
    strategy:
      fail-fast: false  # every shard votes, whatever another one found
      matrix:
        shard: [{ks}]
    runs-on: ubuntu-latest
    steps:
{_CHECKOUT}{_venv(install)}      - uses: {source.action}
        with:
          shard: ${{{{ matrix.shard }}}}/{n}
  ballot-guard:
    needs: shard
    if: always()  # a shard that failed or was cancelled is a missing shard: exit 4
    runs-on: ubuntu-latest
    steps:
{_CHECKOUT}      - uses: {source.action}
        with:
          merge: "true"
"""


def plan(root: str, opts: Options, source: Source) -> Plan:
    edits: list[FileEdit] = []
    kept: list[str] = []
    old = _read(root, PYPROJECT)
    new = pyproject_edit(old, table_keys(opts))
    if new is not None:
        edits.append(FileEdit(PYPROJECT, new, "created" if old is None else "edited"))
    elif old is not None:
        kept.append(f"{PYPROJECT} [tool.ballot_guard]")
    config = cfg.parse_pyproject(new if new is not None else old)
    pin.guard(config)
    dirs = []
    for rel in (config.properties_dir, config.fixtures_dir):
        path = os.path.join(root, rel)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isdir(path)):
            raise CannotJudge(f"init: {rel} exists and is not a directory")
        if not os.path.isdir(path):
            dirs.append(rel)
    old = _read(root, PRE_COMMIT_CONFIG)
    new = precommit_edit(old, source.repo, source.rev)
    if new is not None:
        edits.append(FileEdit(PRE_COMMIT_CONFIG, new,
                              "created" if old is None else "appended the hooks to"))
    else:
        kept.append(f"{PRE_COMMIT_CONFIG} (both hooks)")
    if opts.ci == "github":
        text = workflow_text(source, root, opts.shards).encode()
        old = _read(root, WORKFLOW)
        if old is None:
            edits.append(FileEdit(WORKFLOW, text, "created"))
        elif old == text:
            kept.append(WORKFLOW)
        else:
            raise Refusal(WORKFLOW, "exists with other content; it was left as it is",
                          f"      - uses: {source.action}\n")
    digest_file = _read(root, config.digest_file)
    digest: Digest | None = None
    if digest_file is None:
        got = pin.digest_worktree(root, config, "v2")
        if got.digest is None:
            raise CannotJudge(f"init: cannot pin {config.fixtures_dir}/: {got.problem}")
        digest = got.digest
    else:
        check = pin.check_pin(root, config)
        if not check.ok:
            raise CannotJudge(f"init: {config.digest_file} is there but does not hold "
                              f"({check.problem}): review the fixtures, then run "
                              "`ballot-guard digest --pin` yourself")
        kept.append(f"{config.digest_file} (the pin holds)")
    return Plan(tuple(dirs), tuple(edits), digest, config, tuple(kept))


def apply(root: str, p: Plan) -> None:
    for rel in p.dirs:
        os.makedirs(os.path.join(root, rel), exist_ok=True)
    for edit in p.edits:
        write_bytes(os.path.join(root, edit.path), edit.data)
    if p.pin is not None:
        write_pin(root, p.config.digest_file, p.pin)


def managed_paths(root: str, p: Plan, ci: str | None) -> list[str]:
    """Every path of the adoption that exists: what the adoption commit holds."""
    paths = [PYPROJECT, PRE_COMMIT_CONFIG, p.config.digest_file]
    if ci == "github":
        paths.append(WORKFLOW)
    paths += [p.config.properties_dir, p.config.fixtures_dir]
    return [x for x in paths if os.path.lexists(os.path.join(root, x))]


def remaining(root: str, p: Plan, ci: str | None) -> list[str]:
    """The exact commands left to the user: review, commit the adoption, install hooks."""
    managed = managed_paths(root, p, ci)
    status = git.out(["status", "--porcelain", "-z", "--untracked-files=all", "--", *managed],
                     cwd=root) if managed else b""
    pending = [x for x in managed if any(
        entry[3:] == x or entry[3:].startswith(x + "/") for entry in git.split_z(status))]
    commands = []
    if pending:
        paths = " ".join(shlex.quote(x) for x in pending)
        commands += [f"git status --short -- {paths}; git diff -- {paths}  # review the adoption",
                     f"git add -- {paths}",
                     "git commit -m 'Adopt ballot-guard'  # the judge only: stage nothing else"]
    commands.append("pre-commit install --hook-type pre-commit --hook-type pre-push")
    return commands


def run_init(root: str, opts: Options, source: Source) -> tuple[Plan, Sequence[str]]:
    p = plan(root, opts, source)
    apply(root, p)
    return p, remaining(root, p, opts.ci)
