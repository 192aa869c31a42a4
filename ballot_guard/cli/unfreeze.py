"""``ballot-guard unfreeze NAME``: remove a frozen voter after N stable passing runs."""
from __future__ import annotations

import argparse
from typing import Any

HELP = "run a frozen property N times; remove it from the freeze file only if all pass"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("unfreeze", help=HELP, description=(
        "Run NAME N times (default: max(its repeats, 7)) under the gate's conditions, the "
        "fixture pin included. Only N stable passes remove it, with an `unfrozen` history "
        "event; refused with 1 when every run failed, 3 when the runs flipped. An unknown "
        "name is 4."))
    p.add_argument("name", metavar="NAME")
    p.add_argument("--repeats", type=int, metavar="N",
                   help="runs (default: max(repeats, 7); at least 2 and at least the "
                        "property's configured repeats)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard.vote.unfreeze import unfreeze_name

    return unfreeze_name(".", args.name, repeats=args.repeats)
