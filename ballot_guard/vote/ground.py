"""The repository's git directory is ground the vote stands on: runs may not change it.

A run's working directory is a checkout, but ``git rev-parse --git-common-dir``
leads from there to the repository's own ``.git``: code under test that sets
``core.hooksPath=/dev/null`` or overwrites ``.git/hooks/pre-commit`` would turn
off every local hook for the agent's next commit, and one that adds a smudge
filter would rewrite what later gates check out.  So before any project code
runs, the gate (and ``unfreeze``) takes a snapshot of everything that decides
how git and its hooks behave here (``Ground``):

- every config file git reads for the repository: the common dir's ``config``
  and ``config.worktree``, the worktree's own ``config.worktree``, the files
  they include, the global and system files (present or not);
- ``hooks/`` and ``info/`` (attributes, exclude, grafts, sparse-checkout...),
  every entry with its kind, mode and content, and the files of the effective
  ``core.hooksPath``;
- ``commondir``, ``gitdir``, ``shallow`` and ``objects/info/alternates``.

After each run a stat signature is compared (the run that changed something
is named); after the vote the contents are compared, whatever changed is put
back as it was, and the vote does not count (exit 4).  Refs are history, not
ground: they are not watched (the scope rules judge commits by what they
hold).  A process that escapes its run's process group and writes later is
out of reach: the sandbox makes the git directory read-only instead.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.atomic import write_bytes

MAX_ENTRIES = 5000  # per watched directory: a hooks path that is a large tree is cut here
MAX_KEEP = 1 << 20  # bytes of one file kept to put it back (larger: only its hash)


class Entry(NamedTuple):
    kind: str  # "f" file, "l" symlink, "d" directory, "o" anything else
    mode: int  # permission bits
    digest: str  # sha256 of the content (a link's target); "" for a directory
    data: bytes | None  # the content, to restore it (None: a directory, or too large)


Stat = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class Ground:
    """What is watched: single paths (present or not) and directories walked whole."""

    top: str  # the user's work tree: names are shown relative to it when inside
    files: tuple[str, ...]
    trees: tuple[str, ...]
    configs: frozenset[str]  # which of the paths are git config files


class Change(NamedTuple):
    path: str
    what: str  # "added" | "removed" | "modified"
    detail: str = ""  # for a config file: the keys that changed


def locate(top: str, environ: Mapping[str, str] | None = None) -> Ground:
    """Every path that decides how git and its hooks behave in the repository at ``top``."""
    env = dict(os.environ if environ is None else environ)
    dirs = git.out(["rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=top,
                   env=env).decode(errors="surrogateescape").splitlines()
    gitdir = dirs[0]
    common = os.path.normpath(os.path.join(top, dirs[1])) if len(dirs) > 1 else gitdir
    configs = {os.path.join(common, "config"), os.path.join(common, "config.worktree"),
               os.path.join(gitdir, "config.worktree"), *_user_configs(env)}
    hooks_path: str | None = None
    listing = git.run(["config", "--list", "--show-origin", "-z"], cwd=top, env=env,
                      check=False).stdout
    items = listing.split(b"\0")
    # strict=False: the output's last NUL leaves one empty item over
    for origin, entry in zip(items[0::2], items[1::2], strict=False):
        key, _, value = entry.partition(b"\n")
        if origin.startswith(b"file:"):
            configs.add(os.path.normpath(os.path.join(top, os.fsdecode(origin[5:]))))
        if key.lower() == b"core.hookspath":
            hooks_path = os.fsdecode(value)
    files = {*configs}
    for base in {gitdir, common}:
        files.update(os.path.join(base, name) for name in ("commondir", "gitdir", "shallow"))
    files.update(os.path.join(common, "objects", "info", name)
                 for name in ("alternates", "http-alternates"))
    trees = [os.path.join(common, "hooks"), os.path.join(common, "info")]
    if hooks_path:
        trees.append(os.path.normpath(os.path.join(top, os.path.expanduser(hooks_path))))
    return Ground(top, tuple(sorted(files)), tuple(dict.fromkeys(trees)), frozenset(configs))


def _user_configs(env: Mapping[str, str]) -> list[str]:
    """The global, XDG and system config files git would read (whether they exist or not)."""
    home = env.get("HOME", "")
    found = []
    if env.get("GIT_CONFIG_GLOBAL"):
        found.append(env["GIT_CONFIG_GLOBAL"])
    elif home:
        found.append(os.path.join(home, ".gitconfig"))
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        found.append(os.path.join(xdg, "git", "config"))
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        found.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    return [os.path.abspath(p) for p in found if p and p != os.devnull]


def _entry(path: str, st: os.stat_result) -> Entry:
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return Entry("d", mode, "", None)
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.fsencode(os.readlink(path))
        except OSError:
            target = b""
        return Entry("l", mode, hashlib.sha256(target).hexdigest(), target)
    if not stat.S_ISREG(st.st_mode):
        return Entry("o", mode, f"{stat.S_IFMT(st.st_mode):o}", None)
    h = hashlib.sha256()
    kept: list[bytes] | None = []  # None once past MAX_KEEP
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return Entry("f", mode, "unreadable", None)
    size = 0
    try:
        while chunk := os.read(fd, 1 << 16):
            h.update(chunk)
            size += len(chunk)
            if kept is not None:
                if size <= MAX_KEEP:
                    kept.append(chunk)
                else:
                    kept = None
    finally:
        os.close(fd)
    return Entry("f", mode, h.hexdigest(), b"".join(kept) if kept is not None else None)


def _paths(ground: Ground) -> list[str]:
    """Every path to look at now: the single ones and what the directories hold."""
    found = list(ground.files)
    for tree in ground.trees:
        found.append(tree)
        if os.path.islink(tree) or not os.path.isdir(tree):
            continue
        count = 0
        for dirpath, dirnames, filenames in os.walk(tree):
            for name in (*dirnames, *filenames):
                found.append(os.path.join(dirpath, name))
                count += 1
            if count > MAX_ENTRIES:
                break
    return found


def take(ground: Ground) -> dict[str, Entry]:
    """The content of every watched path that exists."""
    snap: dict[str, Entry] = {}
    for path in _paths(ground):
        try:
            st = os.lstat(path)
        except OSError:
            continue
        snap[path] = _entry(path, st)
    return snap


def signature(ground: Ground) -> dict[str, Stat]:
    """A cheap stat signature of the same paths (for the check after each run)."""
    sig: dict[str, Stat] = {}
    for path in _paths(ground):
        try:
            st = os.lstat(path)
        except OSError:
            continue
        sig[path] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return sig


def moved(before: Mapping[str, Stat], after: Mapping[str, Stat]) -> list[str]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _digest_only(e: Entry | None) -> tuple[str, int, str] | None:
    return None if e is None else (e.kind, e.mode, e.digest)


def compare(ground: Ground, before: Mapping[str, Entry],
            after: Mapping[str, Entry]) -> list[Change]:
    """What differs between two snapshots, config keys named."""
    changes = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if _digest_only(old) == _digest_only(new):
            continue
        what = "added" if old is None else "removed" if new is None else "modified"
        detail = _config_keys(ground, path, old, new) if path in ground.configs else ""
        changes.append(Change(path, what, detail))
    return changes


def _config_values(data: bytes | None, top: str) -> dict[str, list[str]]:
    if not data:
        return {}
    res = git.run(["config", "--file", "-", "--list", "-z"], cwd=top, input=data, check=False)
    values: dict[str, list[str]] = {}
    for item in res.stdout.split(b"\0"):
        if item:
            key, _, value = item.partition(b"\n")
            values.setdefault(os.fsdecode(key), []).append(os.fsdecode(value))
    return values


def _config_keys(ground: Ground, path: str, old: Entry | None, new: Entry | None) -> str:
    """``core.hookspath set to /dev/null``, ``user.name removed``... as far as can be read."""
    if (old is not None and old.kind != "f") or (new is not None and new.kind != "f"):
        return ""
    before = _config_values(old.data if old else b"", ground.top)
    after = _config_values(new.data if new else b"", ground.top)
    said = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if b is None:
            said.append(f"{key} removed")
        else:
            said.append(f"{key} set to {', '.join(repr(v) for v in b)}")
    return "; ".join(said[:6]) + ("; ..." if len(said) > 6 else "")


def restore(before: Mapping[str, Entry], changes: Sequence[Change]) -> list[str]:
    """Put every changed path back as it was; the paths that could not be, with why."""
    failed = []
    # removals deepest first, then re-creations shallowest first
    for change in sorted(changes, key=lambda c: c.path.count(os.sep), reverse=True):
        if change.path not in before:
            try:
                _remove(change.path)
            except OSError as exc:
                failed.append(f"{change.path} ({exc.strerror or exc})")
    for change in sorted(changes, key=lambda c: c.path.count(os.sep)):
        old = before.get(change.path)
        if old is None:
            continue
        try:
            current = os.lstat(change.path) if os.path.lexists(change.path) else None
            if current is not None and _entry_kind(current) != old.kind:
                _remove(change.path)
            if old.kind == "d":
                os.makedirs(change.path, exist_ok=True)
                os.chmod(change.path, old.mode)
            elif old.kind == "l" and old.data is not None:
                if os.path.lexists(change.path):
                    os.unlink(change.path)
                os.symlink(old.data, change.path)
            elif old.kind == "f" and old.data is not None:
                write_bytes(change.path, old.data, mode=old.mode)
            else:
                failed.append(f"{change.path} (not kept: too large or not a file)")
        except OSError as exc:
            failed.append(f"{change.path} ({exc.strerror or exc})")
    return failed


def _entry_kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "d"
    if stat.S_ISLNK(st.st_mode):
        return "l"
    return "f" if stat.S_ISREG(st.st_mode) else "o"


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def shown(ground: Ground, path: str) -> str:
    """A path as the report names it: relative to the work tree when inside it."""
    rel = os.path.relpath(path, ground.top)
    return path if rel.startswith(os.pardir) else rel


def message(ground: Ground, changes: Sequence[Change], failed: Sequence[str]) -> str:
    """The one paragraph the gate prints: what changed, what was put back, what is left."""
    listed = [f"{shown(ground, c.path)} ({c.what}{': ' + c.detail if c.detail else ''})"
              for c in changes[:8]]
    more = f" and {len(changes) - 8} more" if len(changes) > 8 else ""
    text = ("the vote changed the repository's git directory, which decides how git and its "
            f"hooks behave: {', '.join(listed)}{more}. These ballots do not count (exit 4) "
            "and nothing was recorded. ")
    if failed:
        text += ("Could not put back as it was before the vote: " + ", ".join(failed)
                 + "; restore these by hand (`git config`, reinstall the hooks with "
                 "`ballot-guard install` or `pre-commit install`) before you commit again. ")
    else:
        text += ("Every one was put back as it was before the vote; check with `git config "
                 "--list --show-origin` and the hooks directory. ")
    return text + "Find the code that writes there (it ran during the vote) and vote again"


class Watch:
    """One vote's watch: the snapshot before, a stat check after each run, the end."""

    def __init__(self, top: str, environ: Mapping[str, str] | None = None) -> None:
        self.ground = locate(top, environ)
        self.before = take(self.ground)
        self._sig = signature(self.ground)
        self._lock = threading.Lock()
        self.flagged: dict[int, list[str]] = {}  # id(run) -> the paths it moved
        self.result: str | None = None
        self.finished = False
        self.told = False  # the caller printed ``result``

    def after_run(self, run: object) -> None:
        """Note the paths the run just ended moved (the first run to see a change owns it)."""
        with self._lock:
            now = signature(self.ground)
            paths = moved(self._sig, now)
            if paths:
                self.flagged[id(run)] = [shown(self.ground, p) for p in paths]
                self._sig = now

    def finish(self) -> str | None:
        """After the vote: None when nothing changed, else the message (everything that
        changed is put back first).  Once: later calls return the same."""
        if not self.finished:
            self.finished = True
            changes = compare(self.ground, self.before, take(self.ground))
            if changes:
                self.result = message(self.ground, changes, restore(self.before, changes))
        return self.result
