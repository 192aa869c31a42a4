"""The command modules, in the order ``--help`` lists them.

Each module has ``register(subparsers)``.  ``main`` imports only the module
of the command being run (all of them for ``--help`` or a usage error), so
the commit-time hook pays for one parser, not eleven.  Keep module top levels
light (argparse only).
"""
from __future__ import annotations

COMMANDS: dict[str, str] = {
    "scope": "ballot_guard.cli.scope",
    "digest": "ballot_guard.cli.digest",
    "gate": "ballot_guard.cli.gate",
    "freeze": "ballot_guard.cli.freeze",
    "unfreeze": "ballot_guard.cli.unfreeze",
    "split": "ballot_guard.cli.split",
    "hook": "ballot_guard.cli.hook",
    "ci": "ballot_guard.cli.ci",
    "install": "ballot_guard.cli.install",
    "demo": "ballot_guard.cli.demo",
    "init": "ballot_guard.cli.init",
    "doctor": "ballot_guard.cli.doctor",
}
