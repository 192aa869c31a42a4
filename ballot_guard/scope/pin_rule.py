"""Scope rule 3: fixtures and their pin change together, and the pin matches.

A change that touches the fixture pack must re-pin the digest file in the
same change; a change to the digest file (with or without fixtures) must
leave a pin that matches the fixtures of the change's new side (the index
for a staged change, the commit's tree, or HEAD with the patch applied).
The rule runs only when the change touches the fixtures or the digest file.
A change that deletes the digest file is not asked to match it (there is no
pin left; rules 1 and 2 judge the deletion as the oracle change it is, and the
gate and ``ci`` refuse to vote until a pin is committed again), unless it also
changes the fixtures.
A path that differs from the fixtures dir or the digest file only by case
is blocked as well: on a case-insensitive filesystem it would be part of the
pack (or be the pin) without either check seeing it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ballot_guard.scope.verdict import Reason, ScopeRule

if TYPE_CHECKING:
    from ballot_guard.scope.verdict import ScopeContext

_SHOWN = 5


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory + "/")


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN])
    return shown + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


def pin_deleted(ctx: ScopeContext) -> bool:
    """Whether the change deletes the digest file (and puts nothing at its path)."""
    pin_file = ctx.config.digest_file
    gone = [f for f in ctx.change.files if f.path == pin_file]
    return bool(gone) and all(f.status == "D" for f in gone)


def fixtures_repinned(ctx: ScopeContext) -> list[Reason]:
    fixtures, pin_file = ctx.config.fixtures_dir, ctx.config.digest_file
    touched: list[str] = []
    by_case: list[str] = []
    repinned = False
    unpinned = pin_deleted(ctx)
    # The fixtures and the pin are oracle (matched case-insensitively), so every path
    # this rule looks for is among the oracle paths: a 20,000-file change of behaviour
    # code costs nothing here.
    for path in ctx.oracle:
        if path == pin_file:
            repinned = True
        elif _under(path, fixtures):
            touched.append(path)
        elif path.casefold() == pin_file.casefold() or \
                _under(path.casefold(), fixtures.casefold()):
            by_case.append(path)
    reasons: list[Reason] = []
    if by_case:
        reasons.append(Reason(ScopeRule.PIN, (
            f"{_names(by_case)} differ from {fixtures}/ or {pin_file} only by case: on a "
            "case-insensitive filesystem they would join the pinned pack unseen; rename them")))
    if unpinned:
        # Deleting the pin is an oracle change of its own (rules 1 and 2 judge it); there
        # is no pin left to match, and nobody votes until one is committed again.
        if touched:
            reasons.append(Reason(ScopeRule.PIN, (
                f"the fixtures changed ({_names(touched)}) and {pin_file} was deleted in the "
                f"same change: delete the pin in a change of its own, or re-pin with "
                "`ballot-guard digest --pin`")))
    elif touched and not repinned:
        reasons.append(Reason(ScopeRule.PIN, (
            f"the fixtures changed ({_names(touched)}) but {pin_file} was not re-pinned in "
            f"the same change; run `ballot-guard digest --pin` and commit {pin_file} with "
            "the fixtures")))
    elif repinned:
        from ballot_guard.digest.pin import check_snapshot  # noqa: PLC0415 - lazy: judge content: the pin check (11.7 ms) only when the fixtures or the pin are in the change

        check = check_snapshot(ctx.new(), ctx.config)
        if not check.ok:
            what = "was re-pinned with the fixtures" if touched else "changed"
            reasons.append(Reason(ScopeRule.PIN, (
                f"{pin_file} {what} but does not match the fixtures of this change: "
                f"{check.problem}")))
    return reasons
