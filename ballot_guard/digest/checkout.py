"""Blobs of a commit read from a checkout of it, when they provably are the same bytes.

``digest --rev`` must digest what git holds, not what the working tree holds.
But reading 100,000 small loose objects through ``git cat-file`` costs git an
``open`` and an inflate each, several times what reading the same files from
a checkout costs (packed, they come out faster than a checkout reads them, and
are left to git: ``mostly_loose`` samples which it is).  So each small file or link of the pack is
read from the working tree and kept only if its git object id, computed here (the object
format's hash of ``blob <size>\\0`` and the content), is the blob's id in the
tree: then they are the same bytes.  Anything else (a missing or changed file,
a file too large to hold, a FIFO swapped in) is read from git, in order.  When
too many entries miss (the working tree is elsewhere in history), the caller
starts over with git alone, so a far-away checkout costs little.

Why an id computed here may be trusted: git hashes every object it writes
with collision detection (sha1dc), and a push's receiving side re-hashes every
object, so a SHA-1 collision pair cannot sit in a repository that git made or
accepted; and SHA-256 repositories need no such argument.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ballot_guard import git
from ballot_guard.digest.read import SMALL
from ballot_guard.git import BlobReader

if TYPE_CHECKING:
    from ballot_guard.digest.framing import Framing
    from ballot_guard.digest.pack import Pack

MISSES = 64  # entries read from git one by one before the checkout is given up on
MIN_ITEMS = 64  # below this, one cat-file process is as quick


object_id = git.blob_id  # git's id of a blob holding ``data``, as rule 5 names it

LARGE = bytes(1)  # a sentinel object: a regular file too large to hold (read from git)


def worktree_bytes(path: bytes, link: bool) -> bytes | None:
    """The content at ``path`` (a link's target for links); ``LARGE`` (the object) for a
    regular file larger than SMALL; None when it is missing, another kind or unreadable."""
    if link:
        try:
            return os.readlink(path)
        except OSError:
            return None
    try:
        opened = git.open_regular(path, follow_links=True)
        if opened is None:
            return None
        fd, st = opened
        try:
            if st.st_size > SMALL:
                return LARGE
            data = os.read(fd, st.st_size + 1)
        finally:
            os.close(fd)
    except OSError:
        return None
    return data if len(data) == st.st_size else None


def mostly_loose(root: str, oids: list[str], sample: int = 32) -> bool:
    """Whether most of ``oids`` (a spread sample) are loose objects.  Packed objects
    come out of ``git cat-file --batch --buffer`` faster than a checkout reads them;
    loose ones slower, so only then is the checkout worth reading."""
    res = git.run(["rev-parse", "--git-path", "objects"], cwd=root, check=False)
    if res.code != 0 or not oids:
        return False
    objects = os.path.join(root, os.fsdecode(res.stdout).rstrip("\n"))
    step = max(1, len(oids) // sample)
    picked = oids[::step][:sample]
    loose = sum(os.path.exists(os.path.join(objects, o[:2], o[2:])) for o in picked)
    return loose * 2 > len(picked)


def feed(pack: Pack, frame: Framing, worktree: str) -> bool:
    """Feed every entry of ``pack`` (listed from git) into ``frame``, small ones from
    ``worktree`` where their ids match; False (discard ``frame``) after MISSES misses."""
    items = pack.items
    if len(items) < MIN_ITEMS or not mostly_loose(pack.root, [i.oid for i in items]):
        return False
    algo = "sha256" if len(items[0].oid) == 64 else "sha1"
    base = os.path.join(os.fsencode(worktree), os.fsencode(pack.prefix))
    add_small, join = frame.add_small, os.path.join
    reader: BlobReader | None = None
    misses = 0
    try:
        for item in items:
            data = worktree_bytes(join(base, item.path), item.kind == b"l")
            if data is not LARGE:
                if data is not None and object_id(data, algo) == item.oid:
                    add_small(item.kind, item.path, data)
                    continue
                misses += 1  # missing or different: the checkout is not this commit
                if misses > MISSES:
                    return False
            if reader is None:
                reader = BlobReader(pack.root)
            for size, chunks in reader.stream([item.oid]):
                frame.add(item.kind, item.path, size, chunks)
        return True
    finally:
        if reader is not None:
            reader.close()
