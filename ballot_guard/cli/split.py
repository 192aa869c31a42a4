"""``ballot-guard split [--head] [-m MESSAGE]``: commit the oracle part of a mixed change first."""
from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "split", help="split a mixed change: oracle commit first",
        description=(
            "Commit the oracle part of the mixed staged change on its own; the behaviour "
            "(and neutral) part stays staged. With --head, rewrite an unpushed mixed HEAD "
            "commit into two commits, oracle first, keeping its author and message. "
            "The working tree, unstaged edits and untracked files are never touched."))
    p.add_argument("--head", action="store_true",
                   help="split the HEAD commit (unpushed, not a merge) instead of the index")
    p.add_argument("-m", "--message", metavar="MESSAGE",
                   help="message of the oracle commit (default: one naming the split)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git
    from ballot_guard.exit_codes import BLOCKED, CLEAN
    from ballot_guard.output import say
    from ballot_guard.split.split import describe, split_head, split_staged

    if args.message is not None and not args.message.strip():
        from ballot_guard.errors import UsageError

        raise UsageError("split: -m MESSAGE must not be empty")
    root = git.toplevel()
    what = "HEAD commit" if args.head else "staged change"
    outcome = (split_head if args.head else split_staged)(root, message=args.message)
    sides = outcome.sides
    if outcome.blocked:
        say(f"ballot-guard split: {what}: blocked")
        say(f"  {outcome.blocked}")
        return BLOCKED
    if outcome.oracle_commit is None:
        if not (sides.oracle or sides.behavior or sides.neutral):
            say(f"nothing to split: the {what} changes nothing")
        elif not sides.oracle:
            say(f"nothing to split: the {what} touches no oracle path")
        else:
            say(f"nothing to split: the {what} touches only oracle"
                + (" and neutral" if sides.neutral else "") + " paths")
        return CLEAN
    behavior = sorted(sides.behavior | sides.neutral)
    kinds = "behaviour and neutral" if sides.neutral - sides.oracle else "behaviour"
    say(f"oracle commit {outcome.oracle_commit[:12]}: {describe(sorted(sides.oracle), 8)}")
    for path in outcome.tables:
        say(f"  {path}: split by table (the oracle commit has only its judge-table edits)")
    if args.head:
        assert outcome.behavior_commit is not None
        say(f"behaviour commit {outcome.behavior_commit[:12]}: {describe(behavior, 8)}")
        say("HEAD now ends with the two commits, oracle first; index and files unchanged")
    else:
        say(f"still staged ({kinds}): {describe(behavior, 8)}")
        say("review it with `git diff --cached`, then `git commit`")
    note = _recheck(root, args.head)
    if note:
        say(note)
    return CLEAN


def _recheck(root: str, head: bool) -> str | None:
    """A note when the behaviour part is blocked under the oracle commit's (new) config."""
    from ballot_guard.errors import CannotJudge
    from ballot_guard.scope.judge import judge_commit, judge_staged

    try:
        v = judge_commit(root, "HEAD") if head else judge_staged(root)
    except CannotJudge as exc:
        return f"note: could not judge the behaviour part afterwards: {exc}"
    if v.status != "blocked":
        return None
    rules = ", ".join(f"rule {r.rule}" for r in v.reasons)
    return (f"note: under the oracle commit's configuration the behaviour part is blocked "
            f"({rules}); see `ballot-guard scope{' --commit HEAD' if head else ''}`")
