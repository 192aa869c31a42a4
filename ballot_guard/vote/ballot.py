"""Runs to ballots, ballots to an exit code.

All runs pass: ``pass``.  All fail (a timeout is a failing run): ``fail``.
Mixed: ``freeze``.  Already frozen: ``frozen`` (not run).  The runner broke
(pytest exit 2-5, a crash): ``error``, never ``fail``: a broken runner must not
look like a stable failure.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from ballot_guard.exit_codes import ABSTAIN, BLOCKED, CANNOT_JUDGE, CLEAN
from ballot_guard.run.protocol import RunCard
from ballot_guard.run.runner import Run
from ballot_guard.vocabulary import ABSTAINING, FAILING, BallotKind


class PropertyCard(TypedDict):
    """One voter in the scorecard's ``properties``."""

    ballot: BallotKind
    repeats: int
    runs: list[RunCard]


@dataclass(frozen=True)
class Ballot:
    name: str
    ballot: BallotKind
    repeats: int
    runs: tuple[Run, ...] = ()

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    def to_json(self) -> PropertyCard:
        return {"ballot": self.ballot, "repeats": self.repeats,
                "runs": [r.to_json() for r in self.runs]}


def decide(runs: Sequence[Run]) -> BallotKind:
    """The ballot of one property's runs."""
    outcomes = [r.outcome for r in runs]
    if not outcomes or "error" in outcomes:
        return "error"
    if all(o == "pass" for o in outcomes):
        return "pass"
    if all(o in FAILING for o in outcomes):
        return "fail"
    return "freeze"


def exit_code(ballots: Iterable[Ballot]) -> int:
    """Any error 4, else any fail 1, else any freeze/frozen 3, else 0."""
    kinds = {b.ballot for b in ballots}
    if "error" in kinds:
        return CANNOT_JUDGE
    if "fail" in kinds:
        return BLOCKED
    if kinds.intersection(ABSTAINING):
        return ABSTAIN
    return CLEAN


def catch_probability(runs: int, p: float = 0.1) -> float:
    """Chance that ``runs`` independent runs of a property failing with probability ``p``
    disagree (so that it freezes instead of voting)."""
    return 1.0 - p ** runs - (1.0 - p) ** runs


def repeats_for(target: float, p: float = 0.1) -> int:
    """The fewest runs (at least 2) that catch such a property with ``target`` probability."""
    n = 2
    while catch_probability(n, p) < target:
        n += 1
    return n
