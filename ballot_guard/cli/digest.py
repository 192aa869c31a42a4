"""``ballot-guard digest``: print, pin (--pin) or check (--check) the fixtures' digest."""
from __future__ import annotations

import argparse
from typing import Any

from ballot_guard.errors import UsageError
from ballot_guard.exit_codes import CLEAN, DRIFT

HELP = "print, pin or check the digest of the fixture pack"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("digest", help=HELP, description=(
        "Print the digest of the fixture pack (fixtures_dir), write it to the digest file "
        "(--pin), or check the fixtures against the pinned digest (--check: 0 on a match, "
        "2 on drift or a missing or invalid pin). Exit 2 also when the pack holds a FIFO, "
        "socket, device or submodule; 4 when a fixture cannot be read."))
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--pin", action="store_true",
                      help="write the working tree's digest to the digest file (atomically)")
    mode.add_argument("--check", action="store_true",
                      help="compare the fixtures with the pinned digest")
    p.add_argument("--format", choices=("v1", "v2"), default=None,
                   help="digest format for printing or pinning (default v2; v1 is the seed's)")
    p.add_argument("--rev", metavar="REV",
                   help="read fixtures, pin and config from git objects at REV (no checkout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ballot_guard import config as cfg
    from ballot_guard import git, output

    if args.pin and args.rev is not None:
        raise UsageError("digest: --pin writes the working tree's pin and takes no --rev")
    if args.check and args.format is not None:
        raise UsageError("digest: --check verifies in the pin's own format; drop --format")
    root = git.toplevel(".")
    sha = git.resolve(root, args.rev) if args.rev is not None else None
    config = cfg.load_worktree(root) if sha is None else cfg.load_at(root, sha)
    if args.check:
        return _check(root, config, sha)
    from ballot_guard.digest import pin
    from ballot_guard.digest.pin_file import write_pin

    fmt = args.format or "v2"
    if sha is None:
        got = pin.digest_worktree(root, config, fmt)
    else:
        got = pin.digest_snapshot(git.Snapshot(root, sha), config, fmt)
    for line in got.warnings:
        output.warn(f"ballot-guard: warning: {line}")
    if got.digest is None:
        output.warn(f"ballot-guard: {got.problem}")
        return DRIFT
    if not args.pin:
        output.say(str(got.digest))
        return CLEAN
    if fmt == "v1":
        output.warn("ballot-guard: warning: " + pin.V1_WARNING.format(file=config.digest_file))
    write_pin(root, config.digest_file, got.digest)
    output.say(f"pinned {got.digest} in {config.digest_file}")
    output.say(f"commit {config.digest_file} together with {config.fixtures_dir}/ "
               "in a reviewed commit")
    return CLEAN


def _check(root: str, config: Any, sha: str | None) -> int:
    from ballot_guard import output
    from ballot_guard.digest.pin import check_pin

    result = check_pin(root, config, rev=sha)
    for line in result.warnings:
        output.warn(f"ballot-guard: warning: {line}")
    if result.ok:
        output.say(f"fixtures match the pin: {result.actual}")
        return CLEAN
    output.say(f"ballot-guard: {result.problem}")
    for line in result.details:
        output.say(line)
    return DRIFT
