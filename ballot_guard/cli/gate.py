"""``ballot-guard gate``: let every property vote, on identical inputs, N times."""
from __future__ import annotations

import argparse
import os
from typing import Any

HELP = "run every property N times; stable pass votes, stable fail blocks, a flip freezes"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("gate", help=HELP, description=(
        "Verify the fixture pin (exit 2 on drift: nobody votes), check the runner (exit 4), "
        "then run each property not frozen `repeats` times in fresh process states with one "
        "seed. Exit 4 on a runner error, else 1 on a stable failure, else 3 when a voter is "
        "frozen or froze now, else 0."))
    p.add_argument("--rev", metavar="REV",
                   help="vote on a clean temporary worktree of REV (uncommitted files never "
                        "touch the vote)")
    p.add_argument("--repeats", type=int, metavar="N", help="runs per property (at least 2)")
    p.add_argument("--property", dest="properties", action="append", default=[],
                   metavar="NAME", help="only this voter (repeatable)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="properties run in parallel (default 1)")
    p.add_argument("--seed", type=int, metavar="S", help="the seed (default: a new one)")
    p.add_argument("--scorecard", metavar="PATH",
                   help="where to write the scorecard (default .ballot_guard/scorecard.json)")
    p.add_argument("--junit-xml", metavar="PATH", help="also write a JUnit XML report")
    p.add_argument("--json", action="store_true", help="print the scorecard on stdout")
    p.add_argument("--shard", metavar="K/N",
                   help="run only the voters of shard K of N (by voter, never by run; the "
                        "same assignment on every shard); the seed comes from --seed or the "
                        "commit")
    p.add_argument("--durations", metavar="SCORECARD",
                   help="with --shard: balance the shards by the durations this scorecard "
                        "recorded")
    p.add_argument("--merge", nargs="+", metavar="SCORECARD",
                   help="one verdict from every shard's scorecard (the one writer of the "
                        "verdict and of freeze records)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard.errors import UsageError
    from ballot_guard.vote.gate import run_gate
    from ballot_guard.vote.shard import parse_spec

    scorecard = os.path.abspath(args.scorecard) if args.scorecard else None
    junit_xml = os.path.abspath(args.junit_xml) if args.junit_xml else None
    if args.merge:
        other = [flag for flag, given in (
            ("--rev", args.rev), ("--repeats", args.repeats is not None),
            ("--property", args.properties), ("--seed", args.seed is not None),
            ("--shard", args.shard), ("--durations", args.durations),
            ("--jobs", args.jobs != 1)) if given]
        if other:
            raise UsageError(f"--merge takes no {other[0]}: the shards' scorecards say it all")
        from ballot_guard.vote.shard_merge import merge

        return merge(".", args.merge, scorecard=scorecard, junit_xml=junit_xml,
                     as_json=args.json)
    shard = parse_spec(args.shard) if args.shard is not None else None
    return run_gate(".", rev=args.rev, repeats=args.repeats, properties=args.properties,
                    jobs=args.jobs, seed=args.seed, scorecard=scorecard, junit_xml=junit_xml,
                    as_json=args.json, shard=shard, durations=args.durations).code
