"""The gate's terminal report: a table of ballots, the seed, the budget, the abstainers.

The report goes to stdout, or to stderr when ``--json`` owns stdout.  The
live progress line is written to stderr only when stderr is a terminal.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import IO

from ballot_guard.output import use_color
from ballot_guard.vocabulary import ABSTAINING, FAILING, BallotKind
from ballot_guard.vote.ballot import Ballot, catch_probability, repeats_for

_COLOR: dict[BallotKind, str] = {"pass": "32", "fail": "31", "error": "31", "freeze": "33",
                                 "frozen": "33"}


def _paint(text: str, ballot: BallotKind, stream: IO[str],
           environ: Mapping[str, str] | None) -> str:
    if ballot not in _COLOR or not use_color(stream, environ):
        return text
    return f"\033[{_COLOR[ballot]}m{text}\033[0m"


def budget_line(repeats: Sequence[int], p: float = 0.1) -> str:
    """What the repeat budget can see, as what it is: a figure for independent runs."""
    counts = sorted(set(repeats))
    if not counts:
        return ""
    odds = [f"{n} runs with probability {catch_probability(n, p):.2f}" for n in counts]
    odds[0] = (f"{counts[0]} runs catch a property that fails {p:.0%} of the time with "
               f"probability {catch_probability(counts[0], p):.2f}")
    return (f"if runs are independent, {', '.join(odds)} "
            f"(repeats = {repeats_for(0.9, p)} for 0.9, repeats = {repeats_for(0.99, p)} "
            "for 0.99).")


def runs_cell(b: Ballot) -> str:
    """``4 of 5 failed`` (timeouts count as failing; errors are said apart)."""
    if not b.runs:
        return "not run"
    outcomes = [r.outcome for r in b.runs]
    text = f"{sum(o in FAILING for o in outcomes)} of {len(outcomes)} failed"
    timeouts, errors = outcomes.count("timeout"), outcomes.count("error")
    if timeouts:
        text += f" ({timeouts} timed out)"
    if errors:
        text += f", {errors} error" + ("s" if errors > 1 else "")
    return text


def leftover_lines(ballots: Sequence[Ballot]) -> list[str]:
    """A warning for each property whose runs left processes running (ended with them)."""
    lines = []
    for b in ballots:
        leaky = [r.ended for r in b.runs if r.ended]
        if leaky:
            lines.append(f"warning: {b.name} left {sum(leaky)} process(es) running after "
                         f"{len(leaky)} of {len(b.runs)} runs; they were ended with their run "
                         "(a property should stop what it starts)")
    return lines


def table(ballots: Sequence[Ballot], stream: IO[str],
          environ: Mapping[str, str] | None = None) -> list[str]:
    rows = [(b.name, b.ballot, runs_cell(b), f"{b.seconds:.2f}") for b in ballots]
    head = ("property", "ballot", "runs", "seconds")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    for (name, ballot, runs, secs), b in zip(rows, ballots, strict=True):
        cell = _paint(ballot.ljust(widths[1]), b.ballot, stream, environ)
        lines.append(f"{name.ljust(widths[0])}  {cell}  {runs.ljust(widths[2])}  "
                     f"{secs.rjust(widths[3])}")
    return lines


def print_report(ballots: Sequence[Ballot], *, seed: int, header: str, stream: IO[str],
                 environ: Mapping[str, str] | None = None) -> None:
    def out(line: str = "") -> None:
        print(line, file=stream, flush=True)

    out(header)
    for line in table(ballots, stream, environ):
        out(line)
    run = [b.repeats for b in ballots if b.ballot != "frozen"]
    if run:
        out(f"repeats: {', '.join(f'{b.name}={b.repeats}' for b in ballots if b.runs)}; "
            f"seed {seed} (replay with --seed {seed})")
        out(budget_line(run))
    for line in leftover_lines(ballots):
        out(_paint(line, "freeze", stream, environ))
    abstain = [b.name for b in ballots if b.ballot in ABSTAINING]
    if abstain:
        out(_paint(f"warning: {len(abstain)} voter(s) abstain and need a human repair: "
                   f"{', '.join(abstain)}", "freeze", stream, environ))
    for b in ballots:
        bad = [r for r in b.runs if r.outcome != "pass"]
        if b.ballot in ("fail", "error", "freeze") and bad:
            r = bad[0]
            out(f"--- {b.name}: {r.outcome}" + (f" ({r.detail})" if r.detail else ""))
            if r.output:
                for line in r.output.splitlines()[-12:]:
                    out(f"    {line}")


class Progress:
    """A live ``[done/total] name`` line on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty and isatty())
        self.total = total
        self.done = 0

    def step(self, name: str, outcome: str) -> None:
        self.done += 1
        if self.live:
            self.stream.write(f"\r\033[K[{self.done}/{self.total}] {name}: {outcome}")
            self.stream.flush()

    def close(self) -> None:
        if self.live and self.done:
            self.stream.write("\r\033[K")
            self.stream.flush()
