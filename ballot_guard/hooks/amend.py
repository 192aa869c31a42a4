"""Is the commit being made an amend?  (``git commit --amend`` runs pre-commit too.)

git tells a pre-commit hook nothing about an amend: the environment is the
same as for a new commit.  But the hook judges the staged index against
HEAD, and when HEAD is the commit being replaced, a behaviour commit amended
with an oracle edit would look like an oracle-only change.  So the hook asks
its ancestors: the nearest ``git`` process above it (through the pre-commit
framework's processes, a shell hook script, ``env``) is the one committing,
and its arguments say whether it amends (``--amend`` or an abbreviation git
accepts: ``--am``, ``--ame``, ``--amen``).  Linux ``/proc`` only; elsewhere,
or when the ancestry cannot be read, the answer is no (pre-push and ``ci``
judge the amended commit against its parent in any case).
"""
from __future__ import annotations

import os

_AMEND = frozenset({b"--am", b"--ame", b"--amen", b"--amend"})
# options whose value may follow as the next argument (a message reading "--amend")
_VALUED = frozenset({b"-m", b"-F", b"-c", b"-C", b"-t", b"--message", b"--file",
                     b"--reuse-message", b"--reedit-message", b"--author", b"--date",
                     b"--template", b"--cleanup", b"--trailer", b"--fixup", b"--squash",
                     b"--pathspec-from-file", b"--config-env", b"-u"})
_DEPTH = 8  # hook -> framework -> python -> shell -> git, with room to spare


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # pid (comm) state ppid ...; comm may hold spaces and parentheses
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def _argv(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def amending(start: int | None = None) -> bool:
    """Whether the nearest ``git`` process above ``start`` (default: this process's
    parent) was asked to amend."""
    pid: int | None = os.getppid() if start is None else start
    for _ in range(_DEPTH):
        if pid is None or pid <= 1:
            return False
        argv = _argv(pid)
        if argv and os.path.basename(argv[0]) in (b"git", b"git.exe"):
            # options after "--" are paths, not options
            args = argv[1:argv.index(b"--")] if b"--" in argv else argv[1:]
            values = {i + 1 for i, a in enumerate(args) if a in _VALUED}
            return any(a in _AMEND for i, a in enumerate(args) if i not in values)
        pid = _parent(pid)
    return False
