"""GitHub's limits on what a step reports, applied before GitHub applies them silently.

GitHub shows at most 10 annotations of each type (error, warning, notice) per step and
drops the rest; a step summary over 1 MiB is not shown at all.  So the annotations past
the cap are listed in the summary instead, and the summary is cut, at a line, below the
limit, saying so.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ballot_guard.ci import markdown as md

ANNOTATIONS_PER_TYPE = 10
SUMMARY_BYTES = 1024 * 1024
_MARGIN = 4096  # room for the note that says the summary was cut


class Capped(NamedTuple):
    shown: list[str]  # the workflow command lines to print
    over: list[str]  # those GitHub would drop, as commands


def kind_of(line: str) -> str:
    """``error`` for ``::error file=...::message``."""
    head = line[2:].split("::", 1)[0]
    return head.split(" ", 1)[0]


def cap(lines: Sequence[str], per_type: int = ANNOTATIONS_PER_TYPE) -> Capped:
    counts: dict[str, int] = {}
    shown: list[str] = []
    over: list[str] = []
    for line in lines:
        kind = kind_of(line)
        counts[kind] = counts.get(kind, 0) + 1
        (shown if counts[kind] <= per_type else over).append(line)
    return Capped(shown, over)


def overflow_section(over: Sequence[str]) -> str:
    """The annotations GitHub would not show, as a Markdown list for the summary."""
    if not over:
        return ""
    out = [f"### {len(over)} more annotation(s)", "",
           f"GitHub shows {ANNOTATIONS_PER_TYPE} annotations of each type per step; the rest:",
           ""]
    for line in over:
        head, _, message = line[2:].partition("::")
        props = dict(p.split("=", 1) for p in head.partition(" ")[2].split(",") if "=" in p)
        where = props.get("file", "").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
        text = message.replace("%0A", " ").replace("%0D", " ").replace("%25", "%")
        out.append(f"- {kind_of(line)}" + (f" {md.code(where, table=False)}" if where else "")
                   + f": {md.text(text)}")
    return "\n".join(out) + "\n\n"


def truncate(summary: str, limit: int = SUMMARY_BYTES) -> str:
    """``summary`` whole when it fits below ``limit`` bytes, else cut at a line, with a note."""
    data = summary.encode("utf-8")
    if len(data) < limit:
        return summary
    cut = data[: limit - _MARGIN].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    return cut + (f"\n\n**The summary was cut here**: it was {len(data):,} bytes, and GitHub "
                  f"shows none over {limit:,}. The scorecard artifact holds everything.\n")
