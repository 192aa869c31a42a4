"""Symlinks in the judge that lead out of it, found in a checked-out tree.

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
from typing import TYPE_CHECKING, NamedTuple

from ballot_guard.config import Config

if TYPE_CHECKING:
    from ballot_guard.oracle import Judge


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
    from ballot_guard.oracle import Judge

    judge = Judge(tree, config)
    return [e for e in (_escape(tree, p, judge)
                        for p in _links_under(tree, config.fixtures_dir)) if e]


def in_judge(tree: str, config: Config) -> list[Escape]:
    """The links among ``tree``'s properties, conftest, pytest config and table files
    (at the root or above the properties) that lead out of the oracle."""
    from ballot_guard import tables
    from ballot_guard.oracle import ANCESTOR_FILES, Judge, ancestors

    judge = Judge(tree, config)
    near = [f"{a}/{n}" if a else n for a in ancestors(config.properties_dir)
            for n in (*ANCESTOR_FILES, *tables.TABLE_FILES)]
    candidates = [*_links_under(tree, config.properties_dir),
                  *(p for p in near if os.path.islink(os.path.join(tree, p)))]
    return [e for e in (_escape(tree, p, judge) for p in candidates) if e]


def describe(e: Escape) -> str:
    return f"{e.path} is a symlink to {e.target!r}, which is not oracle"
