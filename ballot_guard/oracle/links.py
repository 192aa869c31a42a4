"""Symlinks and the judge: links out of it in a checkout, links into it in a change.

Links into the oracle (``reclassify``, for scope): a link whose target
resolves into an oracle path is oracle, and a path that reaches through such a
link is the oracle path it resolves to, resolved in git's trees (``Links``).

Links out of the judge, found in a checked-out tree:

Scope blocks a change that puts such a link at an oracle path (``scope``'s
``links_stay_in_oracle``); this module finds the ones a tree already holds,
however they got there (before adoption, or past a skipped hook), so that the
gate does not vote through them:

- a link in the fixtures dir that leads outside the oracle: the pin covers the
  link's target string, not what it leads to, so the fixture could move with
  no drift seen.  Nobody votes (exit 2).
- a link in the properties dir, or a ``conftest.py`` / pytest config /
  ``__init__.py`` / table file at the root or above the properties dir, that
  leads outside the oracle: a behaviour edit there would rewrite the judge.
  The gate cannot judge (exit 4).

A link leads outside when its target is absolute, climbs out of the repository,
or names a path that is neither oracle nor a table file under the config.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from ballot_guard import git
from ballot_guard.change.from_git import Change
from ballot_guard.config import Config
from ballot_guard.oracle import tables
from ballot_guard.oracle.names import ANCESTOR_FILES, ancestors, fold
from ballot_guard.oracle.paths import Judge

if TYPE_CHECKING:
    from ballot_guard import git
    from ballot_guard.oracle.paths import Classified, Judge


class Escape(NamedTuple):
    path: str  # repository-relative, POSIX
    target: str  # the link's target as written


def leads_out(judge: Judge, rel: str, target: str) -> bool:
    """Whether a link at ``rel`` with ``target`` leads out of the oracle: an absolute
    target, one that climbs out of the repository, or one naming a path that is
    neither oracle nor a table file under ``judge``."""
    where = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    return target.startswith("/") or where == ".." or where.startswith("../") \
        or judge.kind(where) not in (judge.ORACLE, judge.TABLE)


def _escape(tree: str, rel: str, judge: Judge) -> Escape | None:
    try:
        target = os.readlink(os.path.join(tree, rel))
    except OSError:
        return None  # not a link (any more)
    return Escape(rel, target) if leads_out(judge, rel, target) else None


def _links_under(tree: str, rel_dir: str) -> list[str]:
    """Every symlink at or below ``rel_dir`` (links to directories are not entered)."""
    top = os.path.join(tree, rel_dir)
    if os.path.islink(top):
        return [rel_dir]
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top):
        rel = os.path.relpath(dirpath, tree).replace(os.sep, "/")
        for name in (*dirnames, *filenames):
            if os.path.islink(os.path.join(dirpath, name)):
                found.append(f"{rel}/{name}")
    return sorted(found)


def in_fixtures(tree: str, config: Config) -> list[Escape]:
    """The links of ``tree``'s fixture pack that lead out of the oracle."""
    judge = Judge(tree, config)
    return [e for e in (_escape(tree, p, judge)
                        for p in _links_under(tree, config.fixtures_dir)) if e]


def in_judge(tree: str, config: Config) -> list[Escape]:
    """The links among ``tree``'s properties, conftest, pytest config and table files
    (at the root or above the properties) that lead out of the oracle."""

    judge = Judge(tree, config)
    near = [f"{a}/{n}" if a else n for a in ancestors(config.properties_dir)
            for n in (*ANCESTOR_FILES, *tables.TABLE_FILES)]
    candidates = [*_links_under(tree, config.properties_dir),
                  *(p for p in near if os.path.islink(os.path.join(tree, p)))]
    return [e for e in (_escape(tree, p, judge) for p in candidates) if e]


def describe(e: Escape) -> str:
    return f"{e.path} is a symlink to {e.target!r}, which is not oracle"


# --- links into the oracle (scope): a link that leads in is oracle, and so is a path through it

LINK = "120000"
_MAX_HOPS = 40  # as the kernel's ELOOP


class Links:
    """The symlinks of one side of a change (a tree or an index): folded path -> target.

    Keys are folded (``ballot_guard.oracle.names.fold``) so that a link at ``src/Props``
    also catches ``src/props/x`` (a case-insensitive checkout writes through it)."""

    def __init__(self, root: str, links: dict[str, str]) -> None:
        self.root = root
        self._links = links
        self._roots = tuple(dict.fromkeys(
            r.rstrip("/") for r in (os.path.abspath(root), os.path.realpath(root))))

    @classmethod
    def of(cls, snapshot: git.Snapshot, extra: dict[str, str] | None = None) -> Links:
        """Every link of ``snapshot`` (one listing, one batch read), plus ``extra``."""

        entries = [e for e in snapshot.entries() if e.mode == LINK]
        targets = git.blobs(snapshot.root, [e.oid for e in entries])
        links = {fold(e.path): os.fsdecode(t)
                 for e, t in zip(entries, targets, strict=True) if t is not None}
        links.update(extra or {})
        return cls(snapshot.root, links)

    def __bool__(self) -> bool:
        return bool(self._links)

    def _inside(self, target: str) -> list[str] | None:
        """An absolute target as components under the repository root; None outside."""
        for r in self._roots:
            if target == r or target.startswith(r + "/"):
                return target[len(r):].split("/")
        return None

    def resolve(self, path: str, *, last: bool = True) -> str | None:
        """Where ``path`` leads once every link on the way is followed (the last component
        too when ``last``), within the tree: a repository-relative path ("" for the root),
        or None when it leaves the repository or loops."""
        queue = path.split("/")
        done: list[str] = []
        hops = 0
        while queue:
            part = queue.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not done:
                    return None
                done.pop()
                continue
            here = "/".join((*done, part))
            target = self._links.get(fold(here)) if (queue or last) else None
            if target is None:
                done.append(part)
                continue
            hops += 1
            if hops > _MAX_HOPS:
                return None
            if target.startswith("/"):
                inside = self._inside(target)
                if inside is None:
                    return None
                done, queue = [], [*inside, *queue]
            else:
                queue = [*target.split("/"), *queue]
        return "/".join(done)


def _leads_into(judge: Judge, where: str) -> bool:
    """Whether a resolved path is oracle, or a directory holding oracle paths."""
    if judge.kind(where) in (judge.ORACLE, judge.TABLE):
        return True
    key = fold(where)
    prefix = key + "/" if key else ""
    return any(d.startswith(prefix) for d in (*judge.dirs, *judge.files))


class Through(NamedTuple):
    path: str  # as the change names it
    oracle: str  # the oracle path it is, or leads to
    link: bool  # True: ``path`` is itself a link into the oracle


def into_oracle(judge: Judge, paths: Iterable[str], sides: Iterable[Links],
                link_paths: frozenset[str]) -> list[Through]:
    """The paths that are links into the oracle (``link_paths``: the paths that are links
    on some side) or reach through one, on any of ``sides``."""
    found: list[Through] = []
    sides = [s for s in sides if s]
    for path in paths:
        for side in sides:
            if path in link_paths:
                where = side.resolve(path)
                if where is not None and where != path and _leads_into(judge, where):
                    found.append(Through(path, where, True))
                    break
            where = side.resolve(path, last=False)
            if where is not None and where != path and \
                    judge.kind(where) in (judge.ORACLE, judge.TABLE):
                found.append(Through(path, where, False))
                break
    return found


def reclassify(root: str, config: Config, change: Change, old: git.Snapshot,
               new: Callable[[], git.Snapshot], cls: Classified) -> Classified:
    """``cls`` once links into the oracle count: a link whose target resolves into an
    oracle path is oracle, and a path that reaches through such a link is the oracle
    path it resolves to.  The links are git's, on the change's sides: the base and the
    new tree (or index) for a staged change or a commit; for a patch, HEAD's links plus
    those the patch adds (GNU ``patch`` writes through a link in the work tree).

    Costs nothing for a staged change or a commit that touches no symlink (within one
    tree git cannot hold a path under a link); a patch costs one ``ls-tree`` of the
    directories its paths pass through."""

    files = change.files
    has_links = LINK in set(map(itemgetter(3), files)) | set(map(itemgetter(4), files))
    if change.source != "patch" and not has_links:
        return cls
    paths = change.paths()
    sides: list[Links] = []
    if change.source == "patch":
        parents = {p.rpartition("/")[0] for p in paths}  # few: many paths share one
        dirs = sorted({a for d in parents for a in [*ancestors(d), d] if a})
        if has_links or any(e.mode == LINK for e in old.entries_at(dirs)):
            sides.append(Links.of(old))
            if has_links:
                sides.append(Links.of(new()))  # the patch applied: its own links' targets
    else:
        sides = [Links.of(old), Links.of(new())]
    if not any(sides):
        return cls
    link_paths = frozenset(p for f in files if LINK in (f.old_mode, f.new_mode)
                           for p in (f.path, f.old_path) if p is not None)
    found = into_oracle(Judge(root, config), paths, sides, link_paths)
    if not found:
        return cls
    moved = {t.path for t in found}
    oracle = {*cls.oracle, *(t.path if t.link else t.oracle for t in found)}
    return cls._replace(oracle=tuple(sorted(oracle)),
                        behavior=tuple(p for p in cls.behavior if p not in moved),
                        neutral=tuple(p for p in cls.neutral if p not in moved))
