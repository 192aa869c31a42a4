"""``ballot-guard ci --base REV``: the pre-push judgement for a pull request."""
from __future__ import annotations

import argparse
import os
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "ci", help="judge a pull request: scope of BASE..HEAD, pin and gate at HEAD",
        description="Scope of every commit in BASE..HEAD, then the pin and the gate at HEAD. "
                    "Under GitHub Actions, also ::error annotations and a step summary.")
    p.add_argument("--base", required=True, metavar="REV",
                   help="the pull request's base (an ancestor of HEAD)")
    p.add_argument("--actor", metavar="WHO",
                   help="the account that proposed the change; when it matches `agents`, "
                        "every commit is an agent change (default under GitHub Actions: "
                        "the pull request's author, else GITHUB_ACTOR)")
    p.add_argument("--repeats", type=int, metavar="N",
                   help="runs per property for every voter (at least 2; default: the config's)")
    p.add_argument("--shard", metavar="K/N",
                   help="the gate runs only the voters of shard K of N (gate --shard); its "
                        "scorecard is one of the N that `ci --merge` takes")
    p.add_argument("--merge", nargs="*", metavar="SCORECARD",
                   help="the gate does not run here: its verdict is the merge of every "
                        "shard's scorecard (gate --merge), after the scope and the pin")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git
    from ballot_guard.ci.judge import run_ci
    from ballot_guard.errors import UsageError
    from ballot_guard.vote.shard import parse_spec

    if args.actor is not None and not args.actor.strip():
        raise UsageError("--actor wants an account name")
    if args.merge is not None and (args.shard is not None or args.repeats is not None):
        raise UsageError(f"--merge takes no {'--shard' if args.shard else '--repeats'}: "
                         "the shards' scorecards say it all")
    shard = parse_spec(args.shard) if args.shard is not None else None
    merge = [os.path.abspath(p) for p in args.merge] if args.merge is not None else None
    return run_ci(git.toplevel("."), args.base, repeats=args.repeats,
                  actor=args.actor.strip() if args.actor is not None else None,
                  shard=shard, merge=merge)
