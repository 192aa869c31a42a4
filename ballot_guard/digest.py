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
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ballot_guard.errors import CannotJudge

if TYPE_CHECKING:
    from ballot_guard.fixtures import Item, Pack

V1 = "v1"
V2 = "v2"
FORMATS = (V1, V2)
V2_PREFIX = "sha256-v2:"
KINDS = (b"f", b"x", b"l")

_HEX = re.compile(r"[0-9a-f]{64}")
_SMALL = 1 << 16  # files up to this size are read in one call
_CHUNK = 1 << 20  # larger ones stream through one reused buffer


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


# --- a listed pack's content through the framing ------------------------------

def digest_pack(pack: Pack, fmt: str) -> Digest:
    """The digest of a pack listed for ``fmt``; content is streamed, never held whole."""
    if pack.unsupported:
        raise ValueError("a pack with unsupported entries has no digest")
    frame = framing(fmt)
    if pack.snapshot is None:
        feed_files(pack, frame, nofollow=fmt == V2)
    else:
        _feed_blobs(pack, frame)
    return frame.digest()


def _feed_blobs(pack: Pack, frame: Framing) -> None:
    from ballot_guard.git import BlobReader

    items = pack.items
    with BlobReader(pack.root) as reader:
        for item, (size, chunks) in zip(items, reader.stream([i.oid for i in items])):
            frame.add(item.kind, item.path, size, chunks)


def feed_files(pack: Pack, frame: Framing, *, nofollow: bool) -> None:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if nofollow:
        flags |= os.O_NOFOLLOW
    buf = bytearray(_CHUNK)
    for item in pack.items:
        if item.kind == b"l":
            frame.add_small(b"l", item.path, item.target)
            continue
        try:
            fd = os.open(item.abspath, flags)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise _changed(pack, item) from exc
        except OSError as exc:
            if exc.errno == 40:  # ELOOP: became a symlink since it was listed
                raise _changed(pack, item) from exc
            raise _unreadable(pack, item, exc) from exc
        try:
            if item.size <= _SMALL:
                data = _read_small(pack, item, fd)
                frame.add_small(item.kind, item.path, data)
            else:
                frame.add(item.kind, item.path, item.size, _read_big(pack, item, fd, buf))
        finally:
            os.close(fd)


def _read_small(pack: Pack, item: Item, fd: int) -> bytes:
    try:
        data = os.read(fd, item.size + 1)
    except OSError as exc:
        raise _unreadable(pack, item, exc) from exc
    if len(data) != item.size:  # a short read of a regular file is its end
        raise _changed(pack, item)
    return data


def _read_big(pack: Pack, item: Item, fd: int, buf: bytearray) -> Iterator[memoryview]:
    import io

    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
    view = memoryview(buf)
    left = item.size
    with io.FileIO(fd, "rb", closefd=False) as f:
        while True:
            try:
                n = f.readinto(view)
            except OSError as exc:
                raise _unreadable(pack, item, exc) from exc
            if not n:
                break
            left -= n
            if left < 0:
                raise _changed(pack, item)
            yield view[:n]
    if left:
        raise _changed(pack, item)


def _changed(pack: Pack, item: Item) -> CannotJudge:
    from ballot_guard.fixtures import show

    return CannotJudge(f"fixture {show(pack.prefix, item.path)} changed while being read; run again")


def _unreadable(pack: Pack, item: Item, exc: OSError) -> CannotJudge:
    from ballot_guard.fixtures import show

    return CannotJudge(f"cannot read fixture {show(pack.prefix, item.path)}: {exc.strerror}")
