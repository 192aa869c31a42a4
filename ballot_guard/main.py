"""argparse wiring and a flat dispatch, nothing else.

Each command lives in ``ballot_guard/cli/<name>.py`` with ``register(subparsers)``
(which sets ``func`` on its parser) and imports its heavy modules inside the
function it dispatches to, so ``--help`` and the commit-time hook stay fast.
"""
from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ballot_guard import __version__
from ballot_guard.ci.log import guard
from ballot_guard.cli import COMMANDS
from ballot_guard.errors import CannotJudge, UsageError
from ballot_guard.exit_codes import CANNOT_JUDGE


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are exit 4, not argparse's 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


def build_parser(only: str | None = None) -> Parser:
    """The parser of every command, or of ``only`` (a known command name)."""

    parser = Parser(prog="ballot-guard", description=(
                    "Keep a patch from rewriting its own judge; let a property vote only "
                    "when its verdict is stable."))
    parser.add_argument("--version", action="version", version=f"ballot-guard {__version__}")
    parser.set_defaults(commands=tuple(COMMANDS))  # what this build registers (the demo asks)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).register(sub)
    return parser


# Commands that judge and exit within a moment.  They allocate a record per changed
# file (20,000 on a large commit) and make no reference cycles worth collecting, so
# the cyclic garbage collector only costs them time: it re-walks every young record
# hundreds of times.  The commands that run for minutes (gate, unfreeze, ci, demo,
# hook pre-push) keep it.
BRIEF = frozenset({"scope", "digest", "split", "freeze", "install"})


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list else None
    if argv is None and (first in BRIEF or args_list[:2] == ["hook", "pre-commit"]):
        gc.disable()  # this process ends with the command (a library call keeps it)

    with guard(os.environ):  # under GitHub Actions: no line the change wrote is a command
        code = _dispatch(build_parser(first if first in COMMANDS else None), args_list)
    if argv is None:
        _end(code)
    return code


def _end(code: int) -> None:
    """End the command's process now, with ``code``, once what an exit must do is done:
    the ``atexit`` handlers run and the streams flushed.  What is skipped is the
    interpreter's teardown of every module and object, which a finished command does
    not need: 25-30 ms after a gate (measured from its last handler to its exit).  Not
    while a thread that is not a daemon still runs (the interpreter would wait for it)."""
    threading = sys.modules.get("threading")
    if threading is not None and any(t.is_alive() and not t.daemon
                                     for t in threading.enumerate()
                                     if t is not threading.main_thread()):
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe, a closed stream: the code stands
        pass
    os._exit(code)


def _dispatch(parser: Parser, args_list: list[str]) -> int:
    try:
        args = parser.parse_args(args_list)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return CANNOT_JUDGE
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    try:
        code: int = args.func(args)
        return code
    except CannotJudge as exc:
        print(f"ballot-guard: error: {exc}", file=sys.stderr)
        return CANNOT_JUDGE
    except KeyboardInterrupt:
        print("ballot-guard: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"ballot-guard: error: {exc}", file=sys.stderr)
        return CANNOT_JUDGE
    except Exception as exc:  # the one top-level handler: never a traceback
        if os.environ.get("BALLOT_GUARD_DEBUG"):
            raise
        print(f"ballot-guard: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return CANNOT_JUDGE
