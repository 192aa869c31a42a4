"""``ballot-guard init``: adopt ballot-guard in this repository."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "init", help="adopt ballot-guard in this repository",
        description="Creates the properties and fixtures dirs if missing, writes "
                    "[tool.ballot_guard], pins the fixtures, adds both hooks to "
                    ".pre-commit-config.yaml (and with --ci github a workflow). Idempotent; "
                    "stages nothing; prints the commands that remain.")
    p.add_argument("--properties", metavar="DIR", help="the properties dir (properties_dir)")
    p.add_argument("--fixtures", metavar="DIR", help="the fixtures dir (fixtures_dir)")
    p.add_argument("--agents", metavar="PATTERN", action="append", default=[],
                   help="an agent identity pattern, e.g. 'Coding Agent <*>' (repeatable)")
    p.add_argument("--ci", choices=["github"], help="also write a GitHub Actions workflow")
    p.add_argument("--shards", type=int, metavar="N",
                   help="with --ci github: the gate split across a matrix of N shard jobs, "
                        "and one merge job that gives the verdict (2 to 64)")
    p.add_argument("--hooks-repo", metavar="URL",
                   help="the hooks' repository in .pre-commit-config.yaml (default: where "
                        "this ballot-guard was installed from)")
    p.add_argument("--hooks-rev", metavar="REV", help="its tag or commit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git, output
    from ballot_guard.adopt.edits import Refusal
    from ballot_guard.adopt.init import Options, run_init
    from ballot_guard.adopt.source import detect
    from ballot_guard.errors import UsageError
    from ballot_guard.exit_codes import CANNOT_JUDGE, CLEAN

    if args.shards is not None and (args.ci is None or not 2 <= args.shards <= 64):
        raise UsageError("--shards N goes with --ci github, and N is 2 to 64")
    root = git.toplevel(".")
    opts = Options(properties=args.properties, fixtures=args.fixtures,
                   agents=tuple(args.agents), ci=args.ci, shards=args.shards or 1)
    try:
        plan, commands = run_init(root, opts, detect(args.hooks_repo, args.hooks_rev))
    except Refusal as exc:
        output.warn(f"ballot-guard: error: {exc}")
        output.warn(f"add to {exc.path}:")
        for line in exc.snippet.splitlines():
            output.warn(f"    {line}")
        return CANNOT_JUDGE
    for rel in plan.dirs:
        output.say(f"created {rel}/")
    for edit in plan.edits:
        output.say(f"{edit.what} {edit.path}")
    if plan.pin is not None:
        output.say(f"pinned {plan.pin} in {plan.config.digest_file}")
    for what in plan.kept:
        output.say(f"kept {what}")
    from ballot_guard.adopt.doctor import voter_files

    if not voter_files(root, plan.config):
        output.say(f"write your properties as {plan.config.properties_dir}/test_<name>.py: "
                   "the gate needs at least one voter")
    if not plan.edits and plan.pin is None and not plan.dirs:
        output.say("ballot-guard is adopted here already: nothing to change")
    output.say("nothing was staged; what remains:")
    for command in commands:
        output.say(f"  {command}")
    return CLEAN
