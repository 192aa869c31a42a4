"""``ballot-guard scope``: judge one change (staged, a commit, a range, a patch)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from ballot_guard.errors import CannotJudge, UsageError

if TYPE_CHECKING:
    from ballot_guard.vocabulary import Status


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    p = subparsers.add_parser(
        "scope", help="block a change that mixes oracle and behaviour, or an agent's oracle edit",
        description="Judge one change by its base's config: the staged index (default), a "
                    "commit, every non-merge commit of a range, or a unified diff.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--staged", action="store_true", help="the staged index against HEAD "
                     "(default)")
    src.add_argument("--commit", metavar="REV", help="a commit against its first parent")
    src.add_argument("--range", metavar="BASE..TIP", dest="range_",
                     help="every non-merge commit of BASE..TIP, oldest first")
    src.add_argument("--patch", metavar="FILE", help="a unified diff before it is applied "
                     "('-' reads stdin)")
    p.add_argument("--agent", action="store_true",
                   help="the change comes from an agent (staged change or patch)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _read_patch(name: str) -> bytes:
    if name == "-":
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read() if stream is not None else sys.stdin.read().encode()
    try:
        with open(name, "rb") as f:
            return f.read()
    except OSError as exc:
        raise CannotJudge(f"cannot read patch {name}: {exc.strerror}") from exc


def parse_range(text: str) -> tuple[str, str]:
    base, sep, tip = text.partition("..")
    if not sep or not base or not tip or tip.startswith("."):
        raise UsageError(f"--range wants BASE..TIP, got {text!r}")
    return base, tip


def run(args: argparse.Namespace) -> int:
    from ballot_guard import git
    from ballot_guard.exit_codes import BLOCKED, CLEAN
    from ballot_guard.output import emit_json
    from ballot_guard.scope.judge import judge_commit, judge_patch, judge_range, judge_staged
    from ballot_guard.scope.report import print_verdict

    if args.agent and (args.commit or args.range_):
        raise UsageError("--agent applies to a staged change or a patch; a commit's identity "
                         "comes from its author, committer and Co-authored-by lines")
    root = git.toplevel(os.getcwd())
    if args.range_:
        base, tip = parse_range(args.range_)
        verdicts = judge_range(root, base, tip)
        blocked = any(v.status == "blocked" for v in verdicts)
        if args.json:
            statuses = {v.status for v in verdicts}
            overall: Status = "blocked" if blocked else (
                "ok" if "ok" in statuses or not verdicts else "unjudged")
            emit_json({"verdict": overall,
                       "commits": [{"commit": v.change.commit, **v.to_json()} for v in verdicts]})
        else:
            if not verdicts:
                print(f"ballot-guard scope: no non-merge commit in {args.range_}")
            for v in verdicts:
                print_verdict(v)
        return BLOCKED if blocked else CLEAN
    if args.commit:
        verdict = judge_commit(root, args.commit)
    elif args.patch:
        data = _read_patch(args.patch)
        label = "patch from stdin" if args.patch == "-" else f"patch {args.patch}"
        verdict = judge_patch(root, data, label=label, agent=args.agent)
    else:
        verdict = judge_staged(root, agent=args.agent)
    if args.json:
        emit_json(verdict.to_json())
    else:
        print_verdict(verdict)
    return BLOCKED if verdict.status == "blocked" else CLEAN
