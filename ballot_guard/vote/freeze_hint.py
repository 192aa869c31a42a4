"""What a freeze's hint says: what the failing run showed and how the runs flipped.

A flip has many causes (a clock, state one run leaves for the next, a warm-up, timing,
randomness not drawn from the seed); the hint names the pattern of the runs and the
first failing run's own assertion line, so that the repair starts from evidence.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

_LIMIT = 200
_TIME = re.compile(r"\b(time|clock|date|datetime|sleep|monotonic|now|timeout)\b", re.IGNORECASE)


def excerpt(output: str) -> str:
    """The line a failing pytest run is best known by: its first ``E `` line, else the
    last line that names an error, else the last line; '' when there is none."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    marked = [line[1:].strip() for line in lines if line.startswith("E ")]
    named = [line.strip() for line in lines if "Error" in line or "assert" in line]
    pick = marked[0] if marked else named[-1] if named else lines[-1] if lines else ""
    return pick if len(pick) <= _LIMIT else pick[: _LIMIT - 1] + "…"


def cause(outcomes: Sequence[str]) -> str:
    """What the order of the outcomes suggests."""
    passes = [o == "pass" for o in outcomes]
    if "timeout" in outcomes:
        return "a run timed out: something slow or blocking (the network, a lock, a sleep)"
    if passes[0] and not any(passes[1:]):
        return ("the first run passed and every later one failed: state one run leaves for "
                "the next (a file, a cache, a row) or the clock")
    if not passes[0] and all(passes[1:]):
        return "the first run failed and the later ones passed: a warm-up (created on first use)"
    if len(outcomes) > 2 and all(a != b for a, b in pairwise(passes)):
        return "the runs alternate: state that one run leaves and the next one clears"
    return "no order: timing, concurrency, or randomness not drawn from the seed"


def describe(name: str, prop: Mapping[str, Any]) -> str:
    """One voter's hint from its scorecard entry."""
    if prop.get("ballot") == "frozen":
        return (f"{name} was frozen earlier (`ballot-guard freeze list` shows its ballots): "
                f"repair it, then `ballot-guard unfreeze {name}`")
    runs = [r for r in prop.get("runs") or [] if isinstance(r, Mapping)]
    outcomes = [str(r.get("outcome")) for r in runs]
    failing = [str(r.get("failure")) for r in runs
               if r.get("outcome") != "pass" and r.get("failure")]
    shown = f"; a failing run showed `{failing[0]}`" if failing else ""
    clock = " (it names time: a fake clock may be what it needs)" \
        if failing and _TIME.search(failing[0]) else ""
    return (f"{name} flipped on identical inputs ({', '.join(outcomes) or 'no runs'}){shown}; "
            f"{cause(outcomes) if outcomes else 'see its runs'}{clock}: make its verdict "
            f"depend on its inputs only, then `ballot-guard unfreeze {name}` in a reviewed commit")


def next_step(cards: Iterable[Any]) -> str:
    """The ``next:`` of an abstention: one hint per voter that froze or was frozen."""
    hints = [describe(name, prop) for card in cards if isinstance(card, Mapping)
             for name, prop in (card.get("properties") or {}).items()
             if isinstance(prop, Mapping) and prop.get("ballot") in ("freeze", "frozen")]
    return " / ".join(hints) or "a voter abstains: see `ballot-guard freeze list`"
