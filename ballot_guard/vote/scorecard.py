"""The scorecard JSON and the JUnit XML: the written form of one gate's vote.

The scorecard is written on every exit, 2 and 4 included, with what was
known when the gate stopped.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypedDict
from xml.etree import ElementTree as ET

from ballot_guard import __version__
from ballot_guard.atomic import json_bytes, write_bytes
from ballot_guard.run.protocol import Isolation
from ballot_guard.timestamps import utc_now
from ballot_guard.vote.ballot import Ballot, PropertyCard

SCHEMA = "ballot-guard/scorecard/1"


class DigestCard(TypedDict):
    """The pin the vote ran against (``digest``): nobody votes unless ``ok``."""

    pinned: str | None  # the pin as written, None if missing
    actual: str | None  # the fixtures' digest in the pin's format
    format: str | None  # "v1" | "v2"
    ok: bool


class ShardRecord(TypedDict):
    """``gate --shard K/N``'s ``shard``: this shard and the whole assignment."""

    k: int  # 1-based
    n: int
    voters: list[str]  # this shard's voters
    all_voters: list[str]
    assignment: list[list[str]]  # every shard's voters, shard 1 first
    config: str  # the effective configuration's digest (``shard.config_digest``)


class MergedShard(TypedDict):
    """``gate --merge``'s ``shards``: one entry a shard, as its scorecard said."""

    k: int
    n: int
    voters: list[str]
    exit: int
    python: str | None
    pytest: str | None
    isolation: Isolation | None
    scorecard: str  # the shard scorecard's path, as given to --merge


class _Scorecard(TypedDict):
    schema: str
    version: str
    started_at: str
    finished_at: str
    commit: str | None
    dirty: bool
    digest: DigestCard | None
    seed: int | None
    python: str | None
    pytest: str | None
    properties: dict[str, PropertyCard]
    exit: int


class Scorecard(_Scorecard, total=False):
    """The scorecard as the gate writes it (``--scorecard``, ``gate --json``) and hands
    to pre-push and ``ci``; ``gate --merge`` writes ``shards`` instead of ``isolation``."""

    isolation: Isolation | None
    shard: ShardRecord  # gate --shard K/N: the shard and the whole assignment
    shards: list[MergedShard]  # gate --merge: each shard's record
    error: str  # why the gate could not judge (exit 4)


@dataclass
class Known:
    """What the gate has learnt so far (filled in as it goes)."""

    started_at: str = field(default_factory=utc_now)
    commit: str | None = None
    dirty: bool = False
    digest: DigestCard | None = None
    seed: int | None = None
    python: str | None = None
    pytest: str | None = None
    ballots: dict[str, Ballot] = field(default_factory=dict)
    error: str | None = None
    shard: ShardRecord | None = None  # gate --shard K/N: the shard and the whole assignment
    isolation: Isolation | None = None

    @property
    def pinned(self) -> str | None:
        """The pin the vote ran against, once read."""
        return self.digest["pinned"] if self.digest else None


def build(known: Known, exit_code: int) -> Scorecard:
    card: Scorecard = {
        "schema": SCHEMA, "version": __version__,
        "started_at": known.started_at, "finished_at": utc_now(),
        "commit": known.commit, "dirty": known.dirty, "digest": known.digest,
        "seed": known.seed, "python": known.python, "pytest": known.pytest,
        "isolation": known.isolation,
        "properties": {name: b.to_json() for name, b in known.ballots.items()},
        "exit": exit_code,
    }
    if known.shard is not None:
        card["shard"] = known.shard
    if known.error:
        card["error"] = known.error
    return card


def write(path: str, card: Scorecard) -> None:
    write_bytes(path, json_bytes(json.dumps(card, indent=2, ensure_ascii=False) + "\n"))


def junit(card: Scorecard) -> str:
    """One testsuite; one testcase per property, its runs inside."""
    props = card["properties"]
    counts = {k: sum(1 for p in props.values() if p["ballot"] in v)
              for k, v in (("failures", ("fail",)), ("errors", ("error",)),
                           ("skipped", ("freeze", "frozen")))}
    total = sum(r["seconds"] for p in props.values() for r in p["runs"])
    suite = ET.Element("testsuite", name="ballot-guard", tests=str(len(props)),
                       failures=str(counts["failures"]), errors=str(counts["errors"]),
                       skipped=str(counts["skipped"]), time=f"{total:.3f}",
                       timestamp=card["started_at"])
    sp = ET.SubElement(suite, "properties")
    for key, value in (("seed", card["seed"]), ("commit", card["commit"]),
                       ("python", card["python"]), ("pytest", card["pytest"]),
                       ("exit", card["exit"])):
        ET.SubElement(sp, "property", name=key, value=str(value))
    for name, p in props.items():
        seconds = sum(r["seconds"] for r in p["runs"])
        case = ET.SubElement(suite, "testcase", classname="ballot_guard.gate", name=name,
                             time=f"{seconds:.3f}")
        outcomes = [r["outcome"] for r in p["runs"]]
        summary = f"{p['ballot']}: {len(outcomes)} of {p['repeats']} runs: " + \
            (", ".join(outcomes) or "not run")
        if p["ballot"] == "fail":
            ET.SubElement(case, "failure", message=summary, type="stable-failure")
        elif p["ballot"] == "error":
            ET.SubElement(case, "error", message=summary, type="runner-error")
        elif p["ballot"] in ("freeze", "frozen"):
            ET.SubElement(case, "skipped", message=f"{summary} (abstains until repaired)")
        cp = ET.SubElement(case, "properties")
        for i, r in enumerate(p["runs"], 1):
            ET.SubElement(cp, "property", name=f"run {i}",
                          value=f"{r['outcome']} exit={r['exit']} {r['seconds']}s "
                                f"passed={r['passed']} failed={r['failed']}")
        out = ET.SubElement(case, "system-out")
        out.text = summary + f" (seed {card.get('seed')})"
    ET.indent(suite)
    body = ET.tostring(suite, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'
