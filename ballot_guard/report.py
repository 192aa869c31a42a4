"""The gate's terminal report: a table of ballots, the seed, the budget, the abstainers.

The report goes to stdout, or to stderr when ``--json`` owns stdout.  The
live progress line is written to stderr only when stderr is a terminal.
"""
from __future__ import annotations

import sys
from typing import IO, Mapping, Sequence

from ballot_guard.ballot import Ballot, catch_probability
from ballot_guard.output import use_color

_COLOR = {"pass": "32", "fail": "31", "error": "31", "freeze": "33", "frozen": "33"}


def _paint(text: str, ballot: str, stream: IO[str], environ: Mapping[str, str] | None) -> str:
    if ballot not in _COLOR or not use_color(stream, environ):
        return text
    return f"\033[{_COLOR[ballot]}m{text}\033[0m"


def budget_line(repeats: Sequence[int], p: float = 0.1) -> str:
    """What the repeat budget can see, said plainly."""
    parts = []
    for n in sorted(set(repeats)):
        parts.append(f"{n} runs catch an oracle that fails {p:.0%} of the time with "
                     f"probability {catch_probability(n, p):.2f}")
    return "; ".join(parts) + "." if parts else ""


def table(ballots: Sequence[Ballot], stream: IO[str],
          environ: Mapping[str, str] | None = None) -> list[str]:
    rows = [(b.name, b.ballot, f"{len(b.runs)}/{b.repeats}"
             + (" " + ",".join(r.outcome for r in b.runs) if b.runs else ""),
             f"{b.seconds:.2f}") for b in ballots]
    head = ("property", "ballot", "runs", "seconds")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    for (name, ballot, runs, secs), b in zip(rows, ballots):
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
    abstain = [b.name for b in ballots if b.ballot in ("freeze", "frozen")]
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
