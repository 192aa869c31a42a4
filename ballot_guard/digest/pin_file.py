"""The pin file (``digest_file``): read from the working tree or a snapshot, written
atomically.  One line, a v2 ``sha256-v2:<hex>`` or a v1 bare hex digest.
"""
from __future__ import annotations

import os
import stat

from ballot_guard import git
from ballot_guard.atomic import write_text
from ballot_guard.digest.framing import Digest

_MAX_PIN = 4096  # a pin is one line; anything longer is not a digest


def read_worktree_pin(root: str, name: str) -> tuple[str | None, str | None]:
    """(text, None), or (None, why there is no usable pin)."""
    path = os.path.join(root, name)
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return None, "is a symlink, not a file"
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        with open(path, "rb") as f:
            data = f.read(_MAX_PIN + 1)
    except FileNotFoundError:
        return None, "does not exist"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    return _decode(data)


def read_snapshot_pin(snapshot: git.Snapshot, name: str) -> tuple[str | None, str | None]:
    e = snapshot.entry(name)
    if e is None:
        return None, "does not exist" if snapshot.rev is None else \
            f"does not exist at {snapshot.rev[:12]}"
    if e.mode == "120000":
        return None, "is a symlink, not a file"
    if not e.mode.startswith("100"):
        return None, "is not a regular file"
    if int(git.out(["cat-file", "-s", e.oid], cwd=snapshot.root)) > _MAX_PIN:
        return None, "is too long to hold a digest"
    return _decode(git.out(["cat-file", "blob", e.oid], cwd=snapshot.root))


def _decode(data: bytes) -> tuple[str | None, str | None]:
    if len(data) > _MAX_PIN:
        return None, "is too long to hold a digest"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "is not UTF-8 text"


def write_pin(root: str, name: str, value: Digest) -> str:
    """Write ``value`` to the digest file atomically; its path."""
    path = os.path.join(root, name)
    write_text(path, f"{value}\n")
    return path
