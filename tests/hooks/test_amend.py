"""Telling an amend from a new commit by the git process above the hook (Linux /proc)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import ballot_guard
from ballot_guard.hooks.amend import amending

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")

PROBE = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {root!r})
    from ballot_guard.hooks.amend import amending
    print(amending())
""")


def _under(argv0: str, *args: str) -> str:
    """Run the probe as the grandchild of a process whose argv is [argv0, *args]
    (``exec -a`` names it), through a shell, as git runs a hook."""
    root = str(__import__("pathlib").Path(ballot_guard.__file__).parent.parent)
    probe = PROBE.format(root=root)
    inner = f"{sys.executable} -c {_sh(probe)}"
    script = f"exec -a {argv0} bash -c {_sh(inner + '; true')} {' '.join(_sh(a) for a in args)}"
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          check=True).stdout.strip()


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.mark.parametrize("args, amend", [
    (["commit", "--amend"], True),
    (["commit", "--amen", "--no-edit"], True),
    (["-c", "x.y=z", "commit", "--am"], True),
    (["commit", "-m", "fix"], False),
    (["commit", "-m", "--amend"], False),  # a message, not the option
    (["commit", "--", "--amend"], False),  # a path
    (["commit", "-a"], False),
])
def test_the_nearest_git_process_says_whether_it_amends(args: list[str], amend: bool) -> None:
    assert _under("git", *args) == str(amend)


def test_no_git_above_is_not_an_amend() -> None:
    assert _under("bash", "commit", "--amend") == "False"
    assert amending(start=1) is False  # init: the search stops there
