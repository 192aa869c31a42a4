"""``ballot-guard freeze list|assign|review``: the frozen voters and their human owners."""
from __future__ import annotations

import argparse
from typing import Any

HELP = "list frozen voters, assign an owner and repair note, review overdue ones"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("freeze", help=HELP, description=(
        "The freeze file's frozen voters. `review` exits 1 when a frozen name has no owner "
        "or note, or was last reviewed more than review_days ago."))
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True
    ls = actions.add_parser("list", help="the frozen voters")
    ls.add_argument("--json", action="store_true", help="print one JSON object")
    ls.set_defaults(func=run_list)
    a = actions.add_parser("assign", help="give a frozen voter an owner and a repair note")
    a.add_argument("name", metavar="NAME")
    a.add_argument("--owner", required=True, metavar="WHO")
    a.add_argument("--note", required=True, metavar="TEXT")
    a.set_defaults(func=run_assign)
    r = actions.add_parser("review", help="1 when a frozen voter lacks an owner, a note or a "
                                          "recent review")
    r.set_defaults(func=run_review)


def _load() -> tuple[str, Any, Any]:
    import os

    from ballot_guard import config, freeze, git

    root = git.toplevel(".")
    cfg = config.load_worktree(root)
    return os.path.join(root, cfg.freeze_file), cfg, freeze.load(
        os.path.join(root, cfg.freeze_file))


def run_list(args: argparse.Namespace) -> int:
    import time

    from ballot_guard import freeze, output

    _, cfg, ff = _load()
    overdue = dict(freeze.review(ff, cfg.review_days, time.time()))
    rows = [{"name": n, "owner": ff.record(n).get("owner"), "note": ff.record(n).get("note"),
             "frozen_at": ff.record(n).get("frozen_at"),
             "ballots": ff.record(n).get("ballots"), "seed": ff.record(n).get("seed"),
             "last_review": freeze.last_review(ff, n), "needs_review": n in overdue}
            for n in ff.frozen]
    if args.json:
        output.emit_json({"frozen": rows})
        return 0
    if not rows:
        output.say(f"nothing frozen in {cfg.freeze_file}")
    for r in rows:
        seed = f"seed {r['seed']}, " if r["seed"] is not None else ""  # the seed's file has none
        output.say(f"{r['name']}: frozen {r['frozen_at'] or '(no record)'}, "
                   f"ballots {','.join(r['ballots'] or []) or '-'}, {seed}"
                   f"owner {r['owner'] or '-'}, note {r['note'] or '-'}"
                   + (" [needs review]" if r["needs_review"] else ""))
    return 0


def run_assign(args: argparse.Namespace) -> int:
    import os

    from ballot_guard import freeze, git, output
    from ballot_guard.errors import UsageError
    from ballot_guard.scratch import state_dir
    from ballot_guard.timestamps import utc_now

    if not args.owner.strip() or not args.note.strip():
        raise UsageError("freeze assign: --owner and --note must not be empty")
    path, cfg, ff = _load()
    if args.name not in ff.frozen:
        raise UsageError(f"{args.name!r} is not frozen in {cfg.freeze_file}")
    root = git.toplevel(".")
    at = utc_now()
    freeze.update(path, os.path.join(state_dir(root), "freeze.lock"),
                  lambda f: freeze.assign(f, args.name, args.owner, args.note, at))
    output.say(f"{args.name}: owner {args.owner}; commit {cfg.freeze_file} alone")
    return 0


def run_review(args: argparse.Namespace) -> int:
    import time

    from ballot_guard import freeze, output

    _, cfg, ff = _load()
    problems = freeze.review(ff, cfg.review_days, time.time())
    for name, why in problems:
        output.say(f"{name}: {why}")
    if problems:
        output.say(f"{len(problems)} frozen voter(s) need review")
        return 1
    output.say(f"{len(ff.frozen)} frozen voter(s), all owned and reviewed within "
               f"{cfg.review_days} days")
    return 0
