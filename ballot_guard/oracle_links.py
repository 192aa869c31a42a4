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
from typing import NamedTuple

from ballot_guard.config import Config


class Escape(NamedTuple):
    path: str  # repository-relative, POSIX
    target: str  # the link's target as written


class Escapes(NamedTuple):
    fixtures: tuple[Escape, ...]
    judge: tuple[Escape, ...]  # properties, conftest and pytest config files


def _leads_out(tree: str, rel: str, judge_kind: object) -> Escape | None:
    try:
        target = os.readlink(os.path.join(tree, rel))
    except OSError:
        return None  # not a link (any more)
    where = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    if target.startswith("/") or where == ".." or where.startswith("../") \
            or judge_kind(where) not in ("oracle", "table"):  # type: ignore[operator]
        return Escape(rel, target)
    return None


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


def find(tree: str, config: Config) -> Escapes:
    """The links of ``tree``'s judge that lead out of it."""
    from ballot_guard import tables
    from ballot_guard.oracle import ANCESTOR_FILES, Judge, ancestors

    judge = Judge(tree, config)
    fixtures = tuple(e for e in (_leads_out(tree, p, judge.kind)
                                 for p in _links_under(tree, config.fixtures_dir)) if e)
    near = [f"{a}/{n}" if a else n for a in ancestors(config.properties_dir)
            for n in (*ANCESTOR_FILES, *tables.TABLE_FILES)]
    candidates = [*_links_under(tree, config.properties_dir),
                  *(p for p in near if os.path.islink(os.path.join(tree, p)))]
    others = tuple(e for e in (_leads_out(tree, p, judge.kind) for p in candidates) if e)
    return Escapes(fixtures, others)


def describe(e: Escape) -> str:
    return f"{e.path} is a symlink to {e.target!r}, which is not oracle"
