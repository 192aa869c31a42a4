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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard.gate import run_gate

    return run_gate(".", rev=args.rev, repeats=args.repeats, properties=args.properties,
                    jobs=args.jobs, seed=args.seed,
                    scorecard=os.path.abspath(args.scorecard) if args.scorecard else None,
                    junit_xml=os.path.abspath(args.junit_xml) if args.junit_xml else None,
                    as_json=args.json)
