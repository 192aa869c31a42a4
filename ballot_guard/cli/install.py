"""``ballot-guard install [--uninstall]``: plain git hooks without the pre-commit framework."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "install", help="install plain git hooks (pre-commit, pre-push)",
        description="Install ballot-guard's pre-commit and pre-push hooks into the hooks "
                    "directory git uses (core.hooksPath honoured). A foreign hook is kept as "
                    "<hook>.legacy and runs first; --uninstall puts it back.")
    p.add_argument("--uninstall", action="store_true", help="remove the hooks, restore legacy ones")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git
    from ballot_guard.hooks import install
    from ballot_guard.output import say

    root = git.toplevel(".")
    actions = install.uninstall(root) if args.uninstall else install.install(root)
    for a in actions:
        if a.what == "foreign":
            say(f"{a.hook}: {a.path} is not ballot-guard's hook; left as it is")
        elif a.what != "absent":
            say(f"{a.hook}: {a.what} {a.path}")
    return 0
