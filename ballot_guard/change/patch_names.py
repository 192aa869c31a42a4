"""Path names in a unified diff: git's C quoting, the ``a/`` ``b/`` prefixes, and the
check that a name stays inside the repository once normalised."""
from __future__ import annotations

import os
import posixpath
import re
import sys

from ballot_guard.errors import CannotJudge

_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
            ord("r"): 13, ord('"'): 34, ord("\\"): 92}


class PatchError(CannotJudge):
    """The patch is malformed, names a path outside the repository, or does not apply."""


def unquote(text: bytes) -> tuple[bytes, bytes]:
    """Parse a git C-quoted name at the start of ``text``; return (name, rest)."""
    if not text.startswith(b'"'):
        raise PatchError("expected a quoted path")
    out = bytearray()
    i = 1
    while i < len(text):
        c = text[i]
        if c == 34:  # closing quote
            return bytes(out), text[i + 1:]
        if c == 92:  # backslash
            i += 1
            if i >= len(text):
                break
            e = text[i]
            if 48 <= e <= 55:  # octal \ooo
                digits = text[i:i + 3]
                if len(digits) != 3 or not all(48 <= d <= 55 for d in digits):
                    raise PatchError(f"bad octal escape in quoted path {text[:80]!r}")
                out.append(int(digits, 8) & 0xFF)
                i += 3
                continue
            if e not in _ESCAPES:
                raise PatchError(f"bad escape in quoted path {text[:80]!r}")
            out.append(_ESCAPES[e])
            i += 1
            continue
        out.append(c)
        i += 1
    raise PatchError(f"unterminated quoted path {text[:80]!r}")


def strip_prefix(name: bytes) -> bytes:
    """Drop the first path component, as ``git apply -p1`` does."""
    slash = name.find(b"/")
    return name[slash + 1:] if slash >= 0 else name


FS_ENCODING, FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def normalize(name: bytes, *, lineno: int) -> str:
    """A repository-relative path, or PatchError when it escapes or is absolute."""
    text = name.decode(FS_ENCODING, FS_ERRORS)
    if text and text[0] not in "./" and "/." not in text and "//" not in text \
            and "\0" not in text and text[-1] != "/":
        return text  # already normal: the common case, checked cheaply
    if not text or "\0" in text:
        raise PatchError(f"line {lineno}: empty or invalid path in patch")
    if text.startswith("/"):
        raise PatchError(f"line {lineno}: absolute path in patch: {text!r}")
    norm = posixpath.normpath(text)
    if norm == ".." or norm.startswith(("../", "/")):
        raise PatchError(f"line {lineno}: path escapes the repository: {text!r}")
    if norm in (".", ".git") or norm.startswith(".git/"):
        raise PatchError(f"line {lineno}: invalid path in patch: {text!r}")
    return norm


def traditional_raw(rest: bytes, lineno: int) -> bytes | None:
    """The name after ``--- `` / ``+++ `` as written (``-p0``'s reading; ``strip_prefix``
    gives ``-p1``'s); None for /dev/null."""
    rest = rest.rstrip(b"\r")
    if rest.startswith(b'"'):
        name, _ = unquote(rest)
    else:
        name = rest.split(b"\t", 1)[0].rstrip(b" ")
    if name == b"/dev/null":
        return None
    if name.startswith(b"/"):
        raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(name)!r}")
    return name


def git_header_raw(rest: bytes, lineno: int) -> list[bytes]:
    """The two names of ``diff --git A B`` as written (``-p0``'s reading; ``strip_prefix``
    gives ``-p1``'s), when they can be told apart."""
    rest = rest.rstrip(b"\r")
    half = (len(rest) - 1) // 2
    first, second = rest[:half], rest[half + 1:]
    if rest[half:half + 1] == b" " and first[:1] not in (b'"', b"/") and b"/" in first \
            and b"/" in second and first.partition(b"/")[2] == second.partition(b"/")[2]:
        return [first, second]  # "a/X b/X": the common case
    if rest.startswith(b'"'):
        first, tail = unquote(rest)
        tail = tail.lstrip(b" ")
        second = unquote(tail)[0] if tail.startswith(b'"') else tail
        names = [first, second]
    else:
        quoted = rest.find(b' "')
        if quoted >= 0:
            names = [rest[:quoted], unquote(rest[quoted + 1:])[0]]
        else:
            names = []
            for m in re.finditer(rb" ", rest):  # a b with spaces: the split where both agree
                a, b = rest[:m.start()], rest[m.end():]
                if strip_prefix(a) == strip_prefix(b):
                    names = [a, b]
                    break
            if not names and rest.count(b" b/") == 1:
                a, b = rest.split(b" b/")
                names = [a, b"b/" + b]
    for n in names:
        if n.startswith(b"/"):
            raise PatchError(f"line {lineno}: absolute path in patch: {os.fsdecode(n)!r}")
    return names


def quoted_name(rest: bytes) -> bytes:
    return unquote(rest)[0] if rest.startswith(b'"') else rest


