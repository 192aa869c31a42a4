"""``ballot-guard hook pre-commit`` and ``hook pre-push [REMOTE [URL]]``."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser("hook", help="what the pre-commit and pre-push stages run",
                              description="What the git hooks (or the pre-commit framework) run.")
    stages = p.add_subparsers(dest="stage", metavar="STAGE")
    stages.required = True
    pc = stages.add_parser("pre-commit", help="scope, pin and freeze file of the staged change")
    pc.set_defaults(func=run)
    pp = stages.add_parser("pre-push", help="scope of every pushed commit, pin and gate at the tip",
                           description="Reads git's pre-push lines on stdin, or pre-commit's "
                                       "PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF.")
    pp.add_argument("remote", nargs="?", metavar="REMOTE")
    pp.add_argument("url", nargs="?", metavar="URL")
    pp.set_defaults(func=run)
    uf = stages.add_parser("unfreeze", help="unfreeze every frozen voter (or NAME...) that now "
                           "passes stably: the framework's manual stage ballot-unfreeze",
                           description="`ballot-guard unfreeze NAME` for each NAME (default: "
                                       "every frozen voter); exit: the worst of theirs.")
    uf.add_argument("names", nargs="*", metavar="NAME")
    uf.set_defaults(func=run_unfreeze)


def _stdin() -> str | None:
    stream = sys.stdin
    if stream is None or (hasattr(stream, "isatty") and stream.isatty()):
        return None
    buffer = getattr(stream, "buffer", None)
    return os.fsdecode(buffer.read()) if buffer is not None else stream.read()


def run(args: argparse.Namespace) -> int:
    from ballot_guard.hooks.pre_commit import hook_root, pre_commit

    root = hook_root()
    if args.stage == "pre-commit":
        return pre_commit(root)
    from ballot_guard.hooks.pre_push import pre_push
    from ballot_guard.hooks.push_refs import from_pre_commit

    stdin = None if from_pre_commit(os.environ) is not None else _stdin()
    return pre_push(root, args.remote, args.url, stdin)


def run_unfreeze(args: argparse.Namespace) -> int:
    from ballot_guard import config, exit_codes, freeze, git, output
    from ballot_guard.vote.unfreeze import unfreeze_name

    root = git.toplevel(".")
    names = list(args.names) or list(freeze.load(
        os.path.join(root, config.load_worktree(root).freeze_file)).frozen)
    if not names:
        output.say("ballot-guard: nothing is frozen")
        return exit_codes.CLEAN
    return exit_codes.worst(*(unfreeze_name(root, name) for name in names))
