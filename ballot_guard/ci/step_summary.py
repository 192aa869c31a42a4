"""Appending to GitHub's step summary (``$GITHUB_STEP_SUMMARY``) without ever hanging.

The summary is a report beside the verdict, never part of it: it is written only
to a regular file, opened without blocking (``O_NONBLOCK``: a FIFO with no
reader fails at once with ENXIO instead of waiting for one, and one with a
reader is refused after ``fstat``, as is a directory or a device), and a write
that fails is a warning for the caller to print; the exit code stays the
verdict's.
"""
from __future__ import annotations

import os
import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def append(path: str, text: str) -> str | None:
    """Append ``text`` to the regular file ``path``; None when done, else why not."""
    flags = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        return f"cannot open {path}: {exc.strerror or exc}"
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            return f"{path} is {kind}, not a regular file"
        view = memoryview(text.encode("utf-8", "backslashreplace"))  # non-UTF-8 names
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None
