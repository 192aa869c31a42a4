"""The command modules, in the order ``--help`` lists them.

Each module has ``register(subparsers)``; add one import and one list entry
per command.  Keep module top levels light (argparse only).
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

from ballot_guard.cli import ci, hook, install
from ballot_guard.cli import digest
from ballot_guard.cli import scope
from ballot_guard.cli import split
from ballot_guard.cli import demo
from ballot_guard.cli import freeze, gate, unfreeze

Register = Callable[["argparse._SubParsersAction[Any]"], None]

COMMANDS: list[Register] = [scope.register, hook.register, ci.register, install.register,
                           digest.register,
                           split.register, demo.register, gate.register, freeze.register,
                           unfreeze.register]
