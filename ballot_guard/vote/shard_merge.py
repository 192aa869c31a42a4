"""``gate --merge``: one verdict, one scorecard and the freeze records from N shards.

The merge is the only writer of the verdict and of freeze records for a
sharded vote.  It trusts each shard's runner and isolation (recorded, not
re-checked) and the CI's artifact store; it checks that the shards belong to
one vote (commit, pin, seed, configuration, N, assignment), that every shard
is there once, that every voter ran exactly where it was assigned, and that
every ballot follows from its runs.
"""
from __future__ import annotations

import copy
import os
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ballot_guard import git
from ballot_guard.atomic import write_text
from ballot_guard.config import load_worktree
from ballot_guard.output import emit_json
from ballot_guard.run.runner import Run
from ballot_guard.scratch import state_dir
from ballot_guard.timestamps import utc_now
from ballot_guard.vote import scorecard as sc
from ballot_guard.vote.ballot import Ballot, PropertyCard, decide, exit_code
from ballot_guard.vote.gate import SCORECARD, GateResult, record_freezes
from ballot_guard.vote.report import print_report
from ballot_guard.vote.scorecard import Known
from ballot_guard.vote.shard import (
    ShardCard,
    ShardError,
    check,
    check_checkout,
    could_not_vote,
)

_OUTCOMES = ("pass", "fail", "timeout", "error")


def _run(path: str, name: str, raw: Any) -> Run:
    if not isinstance(raw, dict) or raw.get("outcome") not in _OUTCOMES:
        raise ShardError(f"{path}: voter {name!r} has a malformed run record")
    try:
        started = raw.get("started")
        return Run(outcome=raw["outcome"], exit=raw.get("exit"),
                   seconds=float(raw.get("seconds", 0.0)), passed=int(raw.get("passed", 0)),
                   failed=int(raw.get("failed", 0)),
                   started=None if started is None else float(started),
                   ended=None if raw.get("ended") is None else int(raw["ended"]))
    except (TypeError, ValueError) as exc:
        raise ShardError(f"{path}: voter {name!r} has a malformed run record") from exc


def _ballot(shard: ShardCard, name: str) -> Ballot:
    p = shard.card["properties"][name]
    if not isinstance(p, dict) or not isinstance(p.get("runs"), list) \
            or not isinstance(p.get("repeats"), int):
        raise ShardError(f"{shard.path}: voter {name!r} has a malformed ballot")
    runs = tuple(_run(shard.path, name, r) for r in p["runs"])
    if p.get("ballot") == "frozen" and not runs:
        return Ballot(name, "frozen", p["repeats"])
    ballot = decide(runs)
    if len(runs) != p["repeats"] or ballot != p.get("ballot"):
        raise ShardError(f"{shard.path}: voter {name!r}'s ballot {p.get('ballot')!r} does not "
                         f"follow from its {len(runs)} of {p['repeats']} runs")
    return Ballot(name, ballot, p["repeats"], runs)


def _merged_card(shards: Sequence[ShardCard], order: Sequence[str], code: int) -> sc.Scorecard:
    first = shards[0].card
    props: dict[str, PropertyCard] = {}
    where = {name: s for s in shards for name in s.voters}
    for name in order:
        s = where.get(name)
        if s is not None and name in s.card["properties"]:
            props[name] = copy.deepcopy(s.card["properties"][name])
    return {
        "schema": sc.SCHEMA,
        "version": first.get("version"),  # as the shards wrote it
        "started_at": min(str(s.card.get("started_at")) for s in shards),
        "finished_at": utc_now(),
        "commit": first.get("commit"), "dirty": any(bool(s.card.get("dirty")) for s in shards),
        "digest": first.get("digest"), "seed": first.get("seed"),
        "python": first.get("python"), "pytest": first.get("pytest"),
        "properties": props,
        "shards": [{"k": s.k, "n": s.n, "voters": list(s.voters), "exit": s.exit,
                    "python": s.card.get("python"), "pytest": s.card.get("pytest"),
                    "isolation": s.card.get("isolation"), "scorecard": s.path}
                   for s in shards],
        "exit": code,
    }


def merge(root: str, paths: Sequence[str], *, scorecard: str | None = None,
          junit_xml: str | None = None, as_json: bool = False,
          environ: Mapping[str, str] | None = None) -> int:
    """The whole ``gate --merge`` command; prints the report and returns the exit code."""
    return merged(root, paths, scorecard=scorecard, junit_xml=junit_xml, as_json=as_json,
                  environ=environ).code


def merged(root: str, paths: Sequence[str], *, scorecard: str | None = None,
           junit_xml: str | None = None, as_json: bool = False,
           environ: Mapping[str, str] | None = None) -> GateResult:
    """``gate --merge``, its result as a value: the exit code and the scorecard written."""
    out: IO[str] = sys.stderr if as_json else sys.stdout
    shards = check(paths)
    top = git.toplevel(root)
    config = load_worktree(top)
    check_checkout(shards, git.head(top), config)
    first = shards[0].card
    n = shards[0].n
    order = list(first["shard"]["all_voters"])
    early = could_not_vote(shards)
    if early is not None:
        print(f"ballot-guard gate: merged {n} shard(s) at commit "
              f"{str(first.get('commit'))[:12]}; seed {first.get('seed')}", file=out)
        for s in shards:
            if s.exit == early:
                why = s.card.get("error") or ("fixture drift: nobody votes" if s.exit == 2
                                              else "it could not judge")
                print(f"shard {s.k}/{n} ({s.path}) exited {s.exit}: {why}", file=out)
        card = _merged_card(shards, order, early)
        _write(top, card, scorecard, junit_xml, as_json)
        return GateResult(early, card)
    where = {name: s for s in shards for name in s.voters}
    ballots = [_ballot(where[name], name) for name in order if name in where]
    code = exit_code(ballots)
    seed = int(first.get("seed") or 0)
    header = (f"ballot-guard gate: merged {n} shard(s) at commit "
              f"{str(first.get('commit'))[:12]}; seed {seed}")
    print_report(ballots, seed=seed, header=header, stream=out, environ=environ)
    new = [b for b in ballots if b.ballot == "freeze"]
    if new:
        known = Known(commit=first.get("commit"), seed=seed, digest=first.get("digest"))
        record_freezes(top, config, new, known, None, out)
    card = _merged_card(shards, order, code)
    _write(top, card, scorecard, junit_xml, as_json)
    return GateResult(code, card)


def _write(top: str, card: sc.Scorecard, scorecard: str | None, junit_xml: str | None,
           as_json: bool) -> None:
    sc.write(scorecard or os.path.join(state_dir(top), SCORECARD), card)
    if junit_xml:
        write_text(junit_xml, sc.junit(card), errors="replace")
    if as_json:
        emit_json(card)
