"""Drift diagnosis: what changed in the pack since the pin was last committed.

The comparison is entry by entry (path, kind, content) between the fixtures
in the last commit that touched the digest file and the fixtures now (the
working tree, an index, or a revision).  Working-tree files are identified by
their git blob id, computed here, so that untracked and modified files count
as they lie on disk.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.digest.framing import V1, V2, Framing
from ballot_guard.digest.pack import from_snapshot, from_worktree, show
from ballot_guard.digest.pin_file import read_snapshot_pin
from ballot_guard.digest.read import feed_files

_KIND = {b"f": "file", b"x": "executable file", b"l": "symlink"}
_MAX_LINES = 100

State = dict[bytes, tuple[bytes, str]]  # path -> (kind, blob id)


class _BlobIds(Framing):
    """Not a digest: records each entry's git blob id as its content streams past."""

    def __init__(self, object_format: str) -> None:
        super().__init__()
        self.algo = object_format
        self.ids: State = {}

    def add(self, kind: bytes, path: bytes, size: int,
            chunks: Iterable[bytes | memoryview]) -> None:
        h = hashlib.new(self.algo, b"blob %d\0" % size)
        for chunk in chunks:
            h.update(chunk)
        self.ids[path] = (kind, h.hexdigest())

    def add_small(self, kind: bytes, path: bytes, data: bytes) -> None:
        self.add(kind, path, len(data), (data,))


def _state_of_snapshot(snap: git.Snapshot, prefix: str) -> State:
    pack = from_snapshot(snap, prefix, V2)
    return {i.path: (i.kind, i.oid) for i in pack.items}


def _state_of_worktree(root: str, prefix: str) -> State:
    pack = from_worktree(root, prefix, V2)
    ids = _BlobIds(git.object_format(root))
    feed_files(replace(pack, unsupported=()), ids, nofollow=True)
    return ids.ids


def compare(old: State, new: State, prefix: str) -> list[str]:
    """One line per changed entry, in path order."""
    lines = []
    for path in sorted(old.keys() | new.keys()):
        name = show(prefix, path)
        if path not in old:
            lines.append(f"added: {name}")
        elif path not in new:
            lines.append(f"removed: {name}")
        elif old[path][0] != new[path][0]:
            change = f"{_KIND[old[path][0]]} -> {_KIND[new[path][0]]}"
            extra = ", content modified" if old[path][1] != new[path][1] else ""
            lines.append(f"type changed: {name} ({change}{extra})")
        elif old[path][1] != new[path][1]:
            lines.append(f"modified: {name}")
    return lines


def diagnose(root: str, config: Config, snapshot: git.Snapshot | None, pin_text: str,
             fmt: str) -> tuple[str, ...]:
    """Lines naming what changed since the pin's last commit, or why history cannot tell.

    ``snapshot`` None: the working tree (history from HEAD); an index: history
    from HEAD; a revision: history from that revision.
    """
    start = snapshot.rev if snapshot is not None and snapshot.rev is not None else git.head(root)
    name = config.digest_file
    if start is None:
        never = f"history cannot tell what changed: {name} has never been committed"
        return (f"{never} (no commit yet)",)
    base = git.last_commit_touching(root, start, name)
    if base is None:
        return (f"history cannot tell what changed: {name} has never been committed",)
    base_snap = git.Snapshot(root, base)
    old = _state_of_snapshot(base_snap, config.fixtures_dir)
    if snapshot is None:
        new = _state_of_worktree(root, config.fixtures_dir)
    else:
        new = _state_of_snapshot(snapshot, config.fixtures_dir)
    changes = compare(old, new, config.fixtures_dir)
    head = f"changed since the pin was last committed ({base[:12]}):"
    if changes:
        shown = [f"  {line}" for line in changes[:_MAX_LINES]]
        if len(changes) > _MAX_LINES:
            shown.append(f"  ... and {len(changes) - _MAX_LINES} more")
        return (head, *shown)

    committed, _ = read_snapshot_pin(base_snap, name)
    if committed is not None and committed.strip() != pin_text.strip():
        why = f"{name} itself was edited since that commit"
    else:
        why = "the pin committed there does not match the fixtures committed with it"
    lines = [f"no fixture changed since the pin was last committed ({base[:12]}); {why}"]
    if fmt == V1 and any(kind == b"l" for kind, _ in new.values()):
        lines.append("v1 follows symlinks: a link's target outside the pack may have changed")
    return tuple(lines)

