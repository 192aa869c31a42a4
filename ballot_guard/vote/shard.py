"""Shards: the gate's voters split across machines, and one verdict from their scorecards.

Shards are by voter, never by run: every repeat of a voter happens on one
machine, so "mixed" is decided where the runs happened.  The assignment is a
pure function of the voter list, N and (optionally) recorded durations, so
every shard computes the same one.  ``merge`` is the one writer of the
verdict: it refuses shards that do not belong to one vote, then ballots and
exits exactly as a single gate would.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ballot_guard.config import Config
from ballot_guard.errors import CannotJudge, UsageError
from ballot_guard.exit_codes import CANNOT_JUDGE, DRIFT
from ballot_guard.vote.scorecard import SCHEMA, Scorecard, ShardRecord


class ShardError(CannotJudge):
    """The shard scorecards cannot be merged into one vote: exit 4, naming the file."""


@dataclass(frozen=True)
class ShardSpec:
    k: int  # 1-based
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def parse_spec(text: str) -> ShardSpec:
    """``K/N`` with 1 <= K <= N."""
    k_text, sep, n_text = text.partition("/")
    if not sep or not k_text.isdigit() or not n_text.isdigit():
        raise UsageError(f"--shard must be K/N (e.g. 2/4), got {text!r}")
    k, n = int(k_text), int(n_text)
    if n < 1 or not 1 <= k <= n or n > 1000:
        raise UsageError(f"--shard {text}: K must be between 1 and N, and N between 1 and 1000")
    return ShardSpec(k, n)


def assign(voters: Sequence[str], n: int,
           weights: Mapping[str, float] | None = None) -> list[list[str]]:
    """Voters to N shards: greedy longest-first onto the least loaded shard.

    Deterministic: ties go to the earlier voter and the lower shard.  Each
    shard's list keeps the voters' own order.  Without weights every voter
    weighs the same, which deals them out in turn."""
    order = {name: i for i, name in enumerate(voters)}
    weight = {name: float((weights or {}).get(name, 1.0)) for name in voters}
    load = [0.0] * n
    shards: list[list[str]] = [[] for _ in range(n)]
    for name in sorted(voters, key=lambda v: (-weight[v], order[v])):
        k = min(range(n), key=lambda i: (load[i], i))
        shards[k].append(name)
        load[k] += weight[name]
    return [sorted(s, key=order.__getitem__) for s in shards]


def durations(card: Mapping[str, Any], voters: Sequence[str]) -> dict[str, float]:
    """Seconds each voter took in a scorecard; voters it did not run weigh the mean."""
    props = card.get("properties")
    seen: dict[str, float] = {}
    if isinstance(props, dict):
        for name, p in props.items():
            runs = p.get("runs") if isinstance(p, dict) else None
            if isinstance(runs, list) and runs:
                total = sum(float(r.get("seconds", 0.0)) for r in runs if isinstance(r, dict))
                if math.isfinite(total) and total >= 0:
                    seen[name] = total
    known = [seen[v] for v in voters if v in seen]
    fallback = sum(known) / len(known) if known else 1.0
    return {v: seen.get(v, fallback) for v in voters}


def load_durations(path: str, voters: Sequence[str]) -> dict[str, float]:
    return durations(read_card(path), voters)


def seed_of_commit(sha: str | None) -> int:
    """The seed every shard derives when none is given: the commit's first 32 bits."""
    if not sha:
        raise UsageError("--shard needs --seed S when there is no commit to derive it from")
    return int(sha[:8], 16)


def config_digest(config: Config) -> str:
    """A digest of the effective configuration, so shards prove they judged alike."""
    data = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in config._asdict().items()}
    blob = json.dumps(data, sort_keys=True, default=list).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def record(spec: ShardSpec, voters: Sequence[str], plan: Sequence[Sequence[str]],
           config: Config) -> ShardRecord:
    """The ``shard`` object of a shard's scorecard."""
    return {"k": spec.k, "n": spec.n, "voters": list(plan[spec.k - 1]),
            "all_voters": list(voters), "assignment": [list(s) for s in plan],
            "config": config_digest(config)}


# --- merging -------------------------------------------------------------------------------

def read_card(path: str) -> dict[str, object]:
    """A scorecard file as parsed (its schema checked, nothing else)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ShardError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        card = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ShardError(f"{path}: not a scorecard: {exc}") from exc
    except RecursionError:
        raise ShardError(f"{path}: not a scorecard: nested too deeply") from None
    if not isinstance(card, dict) or card.get("schema") != SCHEMA:
        raise ShardError(f"{path}: not a ballot-guard scorecard (schema {SCHEMA})")
    return card


@dataclass(frozen=True)
class ShardCard:
    """A shard's scorecard, its shard record and exit code checked (``_shard_of``); each
    voter's ballot and runs are checked as the merge reads them (``shard_merge``)."""

    path: str
    card: Scorecard
    k: int
    n: int
    voters: tuple[str, ...]
    exit: int


def _shard_of(path: str, card: dict[str, object]) -> ShardCard:
    sh = card.get("shard")
    bad = f"{path}: not a shard scorecard (written by `gate --shard K/N`)"
    if not isinstance(sh, dict):
        raise ShardError(bad)
    k, n, voters = sh.get("k"), sh.get("n"), sh.get("voters")
    code = card.get("exit")
    if not (isinstance(k, int) and isinstance(n, int) and 1 <= k <= n
            and isinstance(voters, list) and all(isinstance(v, str) for v in voters)
            and isinstance(sh.get("assignment"), list) and isinstance(sh.get("all_voters"), list)
            and isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 4
            and isinstance(card.get("properties"), dict)):
        raise ShardError(f"{bad}: its shard record or exit code is malformed")
    return ShardCard(path, cast(Scorecard, card), k, n, tuple(voters), code)


def _same(cards: Sequence[ShardCard], what: str, get: Any) -> None:
    first = cards[0]
    want = get(first.card)
    for c in cards[1:]:
        if get(c.card) != want:
            raise ShardError(f"{c.path}: its {what} differs from {first.path}'s "
                             f"({get(c.card)!r} vs {want!r}): these shards are not one vote")


def check(paths: Sequence[str]) -> list[ShardCard]:
    """The shards, in order, once every check holds; ShardError naming the file otherwise."""
    if not paths:
        raise UsageError("--merge needs the shards' scorecards")
    cards = [_shard_of(p, read_card(p)) for p in paths]
    _same(cards, "shard count N", lambda c: c["shard"]["n"])
    _same(cards, "commit", lambda c: c.get("commit"))
    _same(cards, "seed", lambda c: c.get("seed"))
    _same(cards, "pin", lambda c: (c.get("digest") or {}).get("pinned"))
    _same(cards, "configuration", lambda c: c["shard"].get("config"))
    _same(cards, "voter assignment",
          lambda c: (c["shard"]["assignment"], c["shard"]["all_voters"]))
    n = cards[0].n
    by_k: dict[int, ShardCard] = {}
    for c in cards:
        if c.k in by_k:
            raise ShardError(f"{c.path}: shard {c.k}/{n} given twice (also {by_k[c.k].path})")
        by_k[c.k] = c
    missing = [k for k in range(1, n + 1) if k not in by_k]
    if missing:
        raise ShardError(f"shard {missing[0]}/{n} is missing: merge needs all {n} shards' "
                         "scorecards")
    ordered = [by_k[k] for k in range(1, n + 1)]
    plan = cards[0].card["shard"]["assignment"]
    for c in ordered:
        if list(c.voters) != plan[c.k - 1]:
            raise ShardError(f"{c.path}: shard {c.k}/{n} ran {list(c.voters)}, but the "
                             f"assignment gives it {plan[c.k - 1]}")
        if c.exit in (DRIFT, CANNOT_JUDGE):
            continue  # it could not vote; the merge says so
        props = c.card["properties"]
        for name in props:
            if name not in c.voters:
                raise ShardError(f"{c.path}: voter {name!r} was run on shard {c.k}/{n}, "
                                 "which it is not assigned to")
        for name in c.voters:
            if name not in props:
                raise ShardError(f"{c.path}: voter {name!r} is assigned to shard {c.k}/{n} "
                                 "but was not run there")
    return ordered


def check_checkout(shards: Sequence[ShardCard], head: str | None, config: Config) -> None:
    """The shards voted on the commit (and with the configuration) of the checkout that
    merges them, where the freeze records go: ShardError naming the file otherwise."""
    first = shards[0]
    made = first.card.get("commit")
    if made != head:
        raise ShardError(f"{first.path}: the shards voted on commit {str(made)[:12]}, but this "
                         f"checkout is at {str(head)[:12]}: merge them in a checkout of the "
                         "commit they voted on (in CI: the same commit as the shard jobs)")
    recorded = first.card["shard"].get("config")
    if recorded is not None and recorded != config_digest(config):
        raise ShardError(f"{first.path}: the shards voted with another configuration than "
                         "this checkout's [tool.ballot_guard]: these shards are not its vote")


def could_not_vote(shards: Sequence[ShardCard]) -> int | None:
    """2 or 4 when a shard could not vote, in the contract's order (4 config, 2, 4)."""
    codes = [s.exit for s in shards]
    if any(s.exit == CANNOT_JUDGE and not s.card.get("digest") for s in shards):
        return CANNOT_JUDGE
    if DRIFT in codes:
        return DRIFT
    if CANNOT_JUDGE in codes:
        return CANNOT_JUDGE
    return None
