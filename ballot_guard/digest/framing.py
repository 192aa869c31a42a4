"""Digest framing: the seed's v1 and the contract's v2.

v1 (the seed article's function, written as bare hex): for every file, in
``sorted(Path)`` order, SHA-256 over the relative POSIX path's UTF-8 bytes,
then the content.  Nothing separates a path from its content, so renaming
``a.json`` to ``a.json{`` and dropping the content's leading ``{`` keeps the
digest: v1 pins are verified, with a warning, and never written by default.

v2 (written as ``sha256-v2:<hex>``): for every regular file and symlink, in
order of the raw bytes of its relative path, one type byte (``f`` file,
``x`` executable file, ``l`` symlink), the path's length (8 bytes,
big-endian), the path, the content's length (8 bytes, big-endian), the
content (a link's target).  Every entry's bounds are explicit.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

V1 = "v1"
V2 = "v2"
FORMATS = (V1, V2)
V2_PREFIX = "sha256-v2:"
KINDS = (b"f", b"x", b"l")

_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Digest:
    format: str  # "v1" | "v2"
    hex: str

    def __str__(self) -> str:
        return self.hex if self.format == V1 else V2_PREFIX + self.hex


def parse(text: str) -> Digest | None:
    """A pin's text (surrounding whitespace ignored) as a Digest, or None if invalid."""
    value = text.strip()
    if value.startswith(V2_PREFIX) and _HEX.fullmatch(value[len(V2_PREFIX):]):
        return Digest(V2, value[len(V2_PREFIX):])
    if _HEX.fullmatch(value):
        return Digest(V1, value)
    return None


class Framing:
    """Feeds entries, in the format's order, into one SHA-256."""

    format = V2

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def add(self, kind: bytes, path: bytes, size: int,
            chunks: Iterable[bytes | memoryview]) -> None:
        """One entry whose content (``size`` bytes) arrives as ``chunks``."""
        update = self._h.update
        update(self.header(kind, path, size))
        for chunk in chunks:
            update(chunk)

    def add_small(self, kind: bytes, path: bytes, data: bytes) -> None:
        """One entry whose content is already in memory (one update call)."""
        self._h.update(self.header(kind, path, len(data)) + data)

    def header(self, kind: bytes, path: bytes, size: int) -> bytes:
        if kind not in KINDS:
            raise ValueError(f"unknown entry kind {kind!r}")
        return kind + len(path).to_bytes(8, "big") + path + size.to_bytes(8, "big")

    def digest(self) -> Digest:
        return Digest(self.format, self._h.hexdigest())


class FramingV1(Framing):
    """The seed's framing: path bytes then content bytes, nothing between."""

    format = V1

    def header(self, kind: bytes, path: bytes, size: int) -> bytes:
        return path


def framing(fmt: str) -> Framing:
    if fmt == V1:
        return FramingV1()
    if fmt == V2:
        return Framing()
    raise ValueError(f"unknown digest format {fmt!r}")
