"""The fixture pack as entries: from the working tree, or from git objects.

An entry is a relative POSIX path (raw bytes), a kind (``f`` file, ``x``
executable file, ``l`` symlink) and where its content lives (a file on disk,
or a blob).  The pack is listed in the order of the digest format it is for:

- v2: every regular file and symlink, links not followed, sorted by the raw
  bytes of the path;
- v1 (the seed's ``sorted(folder.rglob('*'))`` + ``is_file()``): links are
  followed to their target (a link to a directory or a broken link is
  skipped, and ``rglob`` never descends through a linked directory), sorted
  per path component as ``pathlib`` sorts paths.

Anything else in the pack (a FIFO, socket, device, a nested repository or
submodule) is listed in ``unsupported`` and the pack gets no digest.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.digest.framing import V1
from ballot_guard.errors import CannotJudge

_MAX_HOPS = 40  # symlinks followed while resolving one path, as the kernel allows


class Item(NamedTuple):  # a NamedTuple: packs hold a hundred thousand of these
    path: bytes  # relative to the fixtures dir
    kind: bytes  # b"f" | b"x" | b"l"; b"?" for a working-tree file (read tells)
    abspath: bytes = b""  # working tree: where to read it
    oid: str = ""  # git: the blob
    target: bytes = b""  # working-tree symlink (v2): the link's target


@dataclass(frozen=True)
class Pack:
    root: str
    prefix: str  # the fixtures dir, repository-relative
    snapshot: git.Snapshot | None  # None: the working tree
    items: tuple[Item, ...]
    unsupported: tuple[str, ...]  # "FIFO fixtures/x", ...


def show(prefix: str, rel: bytes = b"") -> str:
    """A repository-relative path for messages: undecodable bytes and controls escaped."""
    text = prefix + ("/" + rel.decode("utf-8", "backslashreplace") if rel else "")
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def order(items: list[Item], fmt: str) -> tuple[Item, ...]:
    if fmt == V1:
        return tuple(sorted(items, key=lambda i: i.path.split(b"/")))
    return tuple(sorted(items, key=lambda i: i.path))


def _kind_name(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def _v1_names(items: list[Item], prefix: str, unsupported: list[str]) -> None:
    for item in items:
        try:
            item.path.decode("utf-8")
        except UnicodeDecodeError:
            unsupported.append(f"name that v1 cannot encode (not UTF-8) {show(prefix, item.path)}")


# --- the working tree ---------------------------------------------------------

def _changed(prefix: str, rel: bytes) -> CannotJudge:
    return CannotJudge(f"fixture {show(prefix, rel)} changed while being read; run again")


def _locate(root: str, prefix: str) -> tuple[bytes | None, str | None]:
    """The fixtures dir's absolute path, or (None, None) when missing, or (None, problem)."""
    path = os.fsencode(root)
    parts = prefix.split("/")
    for n, part in enumerate(parts):
        path = path + b"/" + os.fsencode(part)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            raise CannotJudge(f"cannot read {'/'.join(parts[:n + 1])}: {exc.strerror}") from exc
        if stat.S_ISLNK(st.st_mode):
            return None, f"symlink where a directory belongs {'/'.join(parts[:n + 1])}"
        if not stat.S_ISDIR(st.st_mode):
            return None, f"file where a directory belongs {'/'.join(parts[:n + 1])}"
    return path, None


def from_worktree(root: str, prefix: str, fmt: str) -> Pack:
    """The pack as it lies in the working tree at ``root`` (a missing dir is empty)."""
    top, problem = _locate(root, prefix)
    if top is None:
        return Pack(root, prefix, None, (), (problem,) if problem else ())
    items: list[Item] = []
    unsupported: list[str] = []
    stack = [b""]
    while stack:
        rel_dir = stack.pop()
        try:
            it = os.scandir(top + b"/" + rel_dir if rel_dir else top)
        except OSError as exc:
            raise CannotJudge(f"cannot read fixture directory {show(prefix, rel_dir)}: "
                              f"{exc.strerror}") from exc
        with it:
            for entry in it:
                rel = rel_dir + b"/" + entry.name if rel_dir else entry.name
                if entry.name == b".git":
                    unsupported.append(f"git repository (submodule) {show(prefix, rel_dir)}")
                    continue
                try:
                    if entry.is_symlink():
                        if fmt == V1:
                            item = _followed(entry.path, rel, prefix, unsupported)
                        else:
                            item = Item(rel, b"l", entry.path, target=os.readlink(entry.path))
                        if item is not None:
                            items.append(item)
                    elif entry.is_file(follow_symlinks=False):
                        items.append(Item(rel, b"?", entry.path))  # kind and size: at read
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(rel)
                    else:
                        st = entry.stat(follow_symlinks=False)
                        unsupported.append(f"{_kind_name(st.st_mode)} {show(prefix, rel)}")
                except FileNotFoundError as exc:
                    raise _changed(prefix, rel) from exc
    if fmt == V1:
        _v1_names(items, prefix, unsupported)
    return Pack(root, prefix, None, order(items, fmt), tuple(sorted(unsupported)))


def _followed(path: bytes, rel: bytes, prefix: str, unsupported: list[str]) -> Item | None:
    """v1: what ``Path.is_file()`` sees through a symlink (None: not a file, skipped)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None  # broken link
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise CannotJudge(f"cannot follow symlink {show(prefix, rel)}: {exc.strerror}") from exc
    if stat.S_ISREG(st.st_mode):
        return Item(rel, b"?", path)
    if not stat.S_ISDIR(st.st_mode):
        unsupported.append(f"symlink to a {_kind_name(st.st_mode)} {show(prefix, rel)}")
    return None


# --- git objects ----------------------------------------------------------------

def from_snapshot(snap: git.Snapshot, prefix: str, fmt: str) -> Pack:
    """The pack as git holds it in a commit's tree or an index (no checkout)."""
    items: list[Item] = []
    links: list[Item] = []
    unsupported: list[str] = []
    for e in snap.entries(prefix):
        if e.path == prefix:
            what = {"120000": "symlink", "160000": "submodule"}.get(e.mode, "file")
            unsupported.append(f"{what} where a directory belongs {prefix}")
            continue
        if not e.path.startswith(prefix + "/"):
            continue
        rel = os.fsencode(e.path[len(prefix) + 1:])
        if e.mode == "160000":
            unsupported.append(f"submodule {show(prefix, rel)}")
        elif e.mode == "120000":
            (links if fmt == V1 else items).append(Item(rel, b"l", oid=e.oid))
        elif e.mode.startswith("100"):
            kind = b"x" if int(e.mode, 8) & stat.S_IXUSR else b"f"
            items.append(Item(rel, kind, oid=e.oid))
        else:
            unsupported.append(f"entry of mode {e.mode} {show(prefix, rel)}")
    if links and not unsupported:
        items.extend(_resolve_links(snap, prefix, links))
    if fmt == V1:
        _v1_names(items, prefix, unsupported)
    return Pack(snap.root, prefix, snap, order(items, fmt), tuple(sorted(unsupported)))


class _Tree:
    """Path resolution inside one snapshot, as the kernel would do it in a clean checkout."""

    def __init__(self, snap: git.Snapshot, reader: git.BlobReader) -> None:
        self.entries = {e.path: e for e in snap.entries("")}
        self.dirs = {"/".join(p.split("/")[:n]) for p in self.entries
                     for n in range(1, p.count("/") + 1)}
        self.reader = reader

    def resolve(self, link: str) -> git.TreeEntry | None:
        """What the symlink at ``link`` finally names (None: nothing, or a directory)."""
        parts = link.split("/")
        cur: list[str] = parts[:-1]
        queue = [parts[-1]]
        hops = 0
        while queue:
            part = queue.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not cur:
                    raise self._outside(link)
                cur.pop()
                continue
            path = "/".join([*cur, part])
            e = self.entries.get(path)
            if e is not None and e.mode == "120000":
                hops += 1
                target = os.fsdecode(self.reader.read(e.oid))
                if hops > _MAX_HOPS:
                    return None  # a loop: is_file() is False
                if target.startswith("/"):
                    raise self._outside(link)
                queue = target.split("/") + queue
                continue
            if e is None and path not in self.dirs:
                return None  # broken
            if e is not None and queue:
                return None  # a file (or submodule) used as a directory
            cur.append(part)
        final = self.entries.get("/".join(cur))
        return final if final is not None and final.mode.startswith("100") else None

    @staticmethod
    def _outside(link: str) -> CannotJudge:
        return CannotJudge(
            f"v1 follows symlinks and {show(link)} points outside the repository, whose "
            "content git objects cannot tell; re-pin as v2 (`ballot-guard digest --pin`)")


def _resolve_links(snap: git.Snapshot, prefix: str, links: list[Item]) -> list[Item]:
    with git.BlobReader(snap.root) as reader:
        tree = _Tree(snap, reader)
        found = []
        for item in links:
            target = tree.resolve(prefix + "/" + os.fsdecode(item.path))
            if target is not None:
                found.append(Item(item.path, b"f", oid=target.oid))
        return found
