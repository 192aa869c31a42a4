"""``ballot-guard demo [DIR]``: build the bundled example repository and walk every verdict."""
from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "demo", help="build the bundled example repo and walk every verdict",
        description="Build a small billing service with its properties, fixtures and pin into "
                    "DIR (a new temporary folder by default) as a git repository, then play "
                    "each verdict through the real commands and print it with its exit code. "
                    "Exit 0 when every verdict came out as expected, 1 when one did not.")
    p.add_argument("dir", nargs="?", metavar="DIR",
                   help="a new or empty directory to build in (default: a temporary one)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard.demo.play import play

    return play(args.dir, frozenset(args.commands))
