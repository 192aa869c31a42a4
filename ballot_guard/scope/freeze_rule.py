"""Scope rule 4: the freeze file keeps its names and its history.

A change may drop a frozen name only together with an ``unfrozen`` history
event for it (what ``ballot-guard unfreeze`` writes after N stable passing
runs), later than the name's last ``frozen`` event, whose ``runs`` are all
``pass`` and at least the name's repeats (by the base's config).  History is
append-only: the new side's history must start with the old side's, event
for event.  A new side that cannot be parsed is blocked (fail closed); an old
side that cannot be parsed has no names or history to lose.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ballot_guard.errors import CannotJudge
from ballot_guard.scope.verdict import Reason, ScopeRule

if TYPE_CHECKING:
    from ballot_guard.freeze import FreezeFile
    from ballot_guard.scope.verdict import ScopeContext


def _unfrozen_properly(new: FreezeFile, name: str, repeats: int) -> bool:
    last: Mapping[str, Any] | None = None
    for event in new.history:
        if event.get("name") == name and event.get("event") in ("frozen", "unfrozen"):
            last = event
    if last is None or last.get("event") != "unfrozen":
        return False
    runs = last.get("runs")
    return isinstance(runs, list) and len(runs) >= repeats and all(r == "pass" for r in runs)


def freeze_history_kept(ctx: ScopeContext) -> list[Reason]:
    path = ctx.config.freeze_file
    if path not in ctx.oracle:  # the freeze file is oracle: no need to walk every path
        return []
    from ballot_guard import freeze  # noqa: PLC0415 - lazy: judge content: the freeze file's reader (7.3 ms) only when the freeze file is in the change


    try:
        old = freeze.parse(ctx.old.read(path), f"{path} (base)")
    except CannotJudge:
        old = freeze.FreezeFile()
    try:
        new = freeze.parse(ctx.new().read(path), path)
    except CannotJudge as exc:
        return [Reason(ScopeRule.FREEZE, f"{exc}; the freeze file must stay readable, so "
                       "the change is blocked")]
    reasons = []
    if tuple(new.history[:len(old.history)]) != tuple(old.history):
        reasons.append(Reason(ScopeRule.FREEZE, f"{path} loses or rewrites history: its "
                              "history is append-only (events frozen, assigned, unfrozen)"))
    lost = [n for n in old.frozen if n not in new.frozen
            and not _unfrozen_properly(new, n, ctx.config.repeats_of(n))]
    if lost:
        reasons.append(Reason(ScopeRule.FREEZE, f"{path} drops {', '.join(lost)} without an "
                              "`unfrozen` history record of stable passing runs; a frozen "
                              "voter leaves only through `ballot-guard unfreeze NAME`"))
    return reasons
