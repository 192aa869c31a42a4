"""The digest of a listed pack: its entries fed through the framing, streamed.

Content comes from the working tree (``read.feed_files``), from a clean checkout of
the same blobs (``checkout.feed``), or from git's object store (``read.feed_blobs``).
"""
from __future__ import annotations

from ballot_guard.digest import checkout
from ballot_guard.digest.framing import V2, Digest, framing
from ballot_guard.digest.pack import Pack
from ballot_guard.digest.read import feed_blobs, feed_files


def digest_pack(pack: Pack, fmt: str) -> Digest:
    """The digest of a pack listed for ``fmt``; content is streamed, never held whole."""
    if pack.unsupported:
        raise ValueError("a pack with unsupported entries has no digest")
    frame = framing(fmt)
    if pack.snapshot is None:
        feed_files(pack, frame, nofollow=fmt == V2)
        return frame.digest()
    if checkout.feed(pack, frame, pack.root):  # git's bytes, read from a checkout
        return frame.digest()
    frame = framing(fmt)
    feed_blobs(pack, frame)
    return frame.digest()
