"""The fork server's protocol: one JSON object a line, each way.

``runner.py`` (the gate's side) writes requests to the server's stdin;
``forkserver.py`` (in the project's interpreter) answers on its stdout, each
reply naming the request it answers by ``id``.  The server file runs alone in
that interpreter and imports nothing of ballot-guard, so it names these types
only for the type checker.

    gate -> server   {"op": "load", "hypothesis": false, "properties": "properties"}
                                                     first: what to load (Load)
    gate -> server   {"op": "prepare", "id": "3", "req": {...RunRequest}}
    server -> gate   {"id": "3", "prepared": 4242}   its keeper, forked
    server -> gate   {"id": "3", "ready": true, "prep": 0.07}   held before any project code
                                                     (false: some ran before; null:
                                                     it ended first)
    gate -> server   {"op": "go", "id": "3"}         or {"op": "cancel", "id": "3"}
    server -> gate   {"id": "3", "started": 4242}
    server -> gate   {"id": "3", "exit": 0, "cpu": 0.08}   or {"id": "3", "signal": 9, ...}

The first line the server writes is its handshake (``Describe``, with ``id``
absent: filed under ``"None"``).

Around the messages: the sandbox ``Policy`` the server is started with (its one
argument, JSON) and the ``Isolation`` record it reports in its handshake (the
scorecard keeps it).
"""
from __future__ import annotations

from typing import Literal, TypedDict

from ballot_guard.config import SandboxMode
from ballot_guard.vocabulary import Outcome


class _PolicyMode(TypedDict):
    mode: SandboxMode


class Policy(_PolicyMode, total=False):
    """The sandbox the gate's runs get (``isolation.policy``): paths, each a kind of view."""

    network: bool        # whether a run may reach the network (loopback included)
    overlay: list[str]   # seen copy-on-write: what a run writes there vanishes with it
    readonly: list[str]  # seen read-only (the git directories, the interpreter's environment)
    hidden: list[str]    # an empty place of the run's own (the gate's run directory)
    writable: list[str]  # seen as they are (the run's own directory)


class Isolation(TypedDict):
    """The isolation in force for the runs (``sandbox.record``; the scorecard's
    ``isolation``)."""

    level: Literal["sandbox", "hermetic"]
    namespaces: list[str]  # the namespaces each run gets (none at the hermetic level)
    network: bool
    reason: str | None     # why there is no OS sandbox; None when it holds


class RunResult(TypedDict, total=False):
    """What a run reports in its ``result`` file (and its keeper or init in ``ended``)."""

    passed: int
    failed: int
    errors: int
    skipped: int
    collected: int
    dodged: int              # skips and xfails raised while running, not declared by a mark
    plugins: list[str]       # pytest plugins that may be project code
    early: bool              # project code ran before the run was released
    complete: bool           # every collected test has an outcome
    replaced: list[str]      # the judge's machinery the code under test replaced
    late: list[str]          # judge modules first imported in the run, so not watched
    registered: list[str]    # pytest plugins registered during the run
    rebound: list[str]       # what of the oracle's modules is not their code's (forkserver._Oracle)
    from_main: list[str]     # modules imported from the main checkout under --rev
    unrepointable: list[str]  # import paths into the main checkout with no counterpart
    stats: dict[str, int]    # pytest's terminal statistics: outcome -> count
    ended: int               # the ``ended`` file: processes ended with the run
    reaper: bool             # the ``ended`` file: whether the keeper could reap them all


class _RunCard(TypedDict):
    outcome: Outcome
    exit: int | None
    seconds: float
    passed: int
    failed: int
    started: float | None


class RunCard(_RunCard, total=False):
    """One run as the scorecard keeps it (``runner.Run.to_json``)."""

    failure: str  # the failing run's line (``freeze_hint.excerpt``)
    ended: int  # processes it left running, ended with it
    cpu: float  # CPU seconds it used once released (a forked run)


class RunRequest(TypedDict, total=False):
    """What one run is given: its pytest arguments and its own files."""

    args: list[str]      # pytest's arguments, the property's path first
    dir: str             # the run's own directory, removed after it
    log: str             # its output
    result: str          # the counts and checks it reports (JSON)
    home: str            # Hypothesis's home directory
    tmp: str             # its TMPDIR
    home_dir: str        # its HOME
    pycache: str         # its bytecode folder
    ended: str           # how many processes were ended after it
    idle: bool           # prepared ahead: waits at the idle priority
    key: str             # hex: the run signs its result with it (forkserver.signed)


class Load(TypedDict):
    """The first request: whether the runner loads Hypothesis before the runs (only
    where a file of the checkout names it)."""

    op: Literal["load"]
    hypothesis: bool
    properties: str | None  # the checkout's properties directory (``sources.py``)


class Prepare(TypedDict):
    op: Literal["prepare"]
    id: str
    req: RunRequest


class Go(TypedDict):
    op: Literal["go"]
    id: str


class Cancel(TypedDict):
    op: Literal["cancel"]
    id: str


Request = Load | Prepare | Go | Cancel


class Reply(TypedDict, total=False):
    """One reply about the request ``id`` (each carries one of the other keys)."""

    id: str
    prepared: int        # the run's keeper (its process group)
    ready: bool | None
    prep: float          # with ready: the CPU seconds its preparation took
    started: int
    exit: int
    signal: int
    cpu: float           # with exit or signal: CPU seconds of the run and all it waited for


class Describe(TypedDict, total=False):
    """The handshake: what the interpreter offers, and how the server runs."""

    ok: bool
    error: str
    python: str
    version: str
    pytest: str
    hypothesis: str | None
    randomly: bool
    site: list[str]
    idle: bool           # a run prepared ahead can wait at the idle priority
    fork: bool           # it can fork runs (no threads in the server)
    isolation: Isolation | None


class Filed(Reply, Describe, total=False):
    """What the server said about one request id, its lines merged as they came (the
    handshake is filed under ``"None"``); read with checks: the server runs beside the
    code under test."""


__all__ = ["Cancel", "Describe", "Filed", "Go", "Isolation", "Load", "Policy", "Prepare",
           "Reply", "Request", "RunCard", "RunRequest", "RunResult"]
