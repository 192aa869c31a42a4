"""Writing a file whole or not at all: a temporary file beside it, then a rename.

Every file ballot-guard writes (the pin, the freeze file, the scorecard, the JUnit
report, a git hook, ``.ballot_guard/.gitignore``) goes through ``write_bytes``, so a
crash or Ctrl-C mid-write never leaves a half-written file, and a file that was
there keeps its permissions.
"""
from __future__ import annotations

import os
import stat
import tempfile


def write_bytes(path: str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (flushed to disk first).

    ``mode``: the new file's permissions; default, those of the file it replaces,
    or for a new file what ``open`` would give (0o666 less the umask)."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(path: str, text: str, *, errors: str = "strict") -> None:
    """``write_bytes`` of UTF-8 text (newlines as given); ``errors`` as for ``encode``."""
    write_bytes(path, text.encode("utf-8", errors))


def json_bytes(text: str) -> bytes:
    """UTF-8 of JSON text from ``json.dumps(..., ensure_ascii=False)``.  A name read from
    the filesystem that is not UTF-8 (``test_\\xff.py``) holds lone surrogates there;
    they are written as JSON's own ``\\udcff`` escapes, which read back the same."""
    return text.encode("utf-8", "backslashreplace")
