"""``ballot-guard doctor [--json]``: what ballot-guard sees here, and its findings."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "doctor", help="what ballot-guard sees here, and what would silently weaken it",
        description="Prints the effective configuration, the voters, the interpreter, the "
                    "identity, the hooks and the pin, then every finding that would silently "
                    "weaken a verdict. Exit 0: no finding; 1: a finding; 4: cannot judge.")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git, output
    from ballot_guard.adopt.doctor import examine, lines

    report = examine(git.toplevel("."))
    if args.json:
        output.emit_json(report.to_json())
    else:
        for line in lines(report):
            output.say(line)
    return report.exit
