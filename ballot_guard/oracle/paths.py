"""Which paths are the judge: oracle, behaviour or neutral.

Oracle (built in): the properties dir, the fixtures dir, the digest file, the
freeze file, every ``conftest.py`` and pytest config file (``pytest.ini``,
``.pytest.ini``, ``pytest.toml``, ``.pytest.toml``) at the repository root or
in an ancestor of the properties dir (and there, an ``__init__.py``: pytest imports
it), ``.gitattributes`` at the root or in an ancestor of the properties or fixtures
dir (it decides the bytes a checkout gives them), ``.pre-commit-config.yaml``, ``.venv/``
and the configured runner ``python`` when it lies inside the repository (with
its virtualenv when it is ``<venv>/bin/python``), plus the user's
``oracle_paths``.  ``pyproject.toml``, ``setup.cfg`` and ``tox.ini`` at the
root or in an ancestor of the properties dir are judged by table
(``ballot_guard.oracle.tables``).  Neutral: ``neutral_paths``; oracle wins.
Behaviour: every other path.

Oracle matching is case-insensitive and Unicode-NFC-normalised, on the
normalised path (``a/./b`` and ``a//b`` are ``a/b``), so ``Properties/x.py``,
a decomposed ``fixtures`` or ``PYTEST.INI`` cannot slip past.  ``oracle_paths``
and ``neutral_paths`` are gitignore-style patterns (``ballot_guard.oracle.patterns``,
``pathspec``'s semantics); oracle patterns match case-insensitively, neutral
ones exactly as written.
"""
from __future__ import annotations

import os
import posixpath
import unicodedata
from collections.abc import Callable, Iterable
from itertools import compress
from operator import itemgetter, methodcaller, not_
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.change.from_git import Change
from ballot_guard.config import Config
from ballot_guard.git import Snapshot
from ballot_guard.oracle import tables
from ballot_guard.oracle.names import (
    ANCESTOR_FILES,
    HOOK_FILES,
    ORACLE_DIRS,
    ORACLE_FILES,
    ancestors,
    fold,
    normal,
)
from ballot_guard.oracle.neutral_code import (
    DEFAULT_DOCTEST_GLOB,
    EXECUTABLE,
    code_among,
    code_name,
    collectable,
)
from ballot_guard.oracle.patterns import PatternSet


def tracked_hooks_dir(root: str) -> str | None:
    """The hooks directory (``git rev-parse --git-path hooks``, honouring
    ``core.hooksPath``) as a repository-relative path when it lies in the work tree."""
    res = git.run(["rev-parse", "--git-path", "hooks"], cwd=root, check=False)
    if res.code != 0:
        return None
    where = os.path.normpath(os.path.join(root, os.fsdecode(res.stdout).rstrip("\n")))
    rel = os.path.relpath(where, os.path.normpath(root)).replace(os.sep, "/")
    if rel == "." or rel == ".." or rel.startswith("../") or os.path.isabs(rel) \
            or fold(rel) == ".git" or fold(rel).startswith(".git/"):
        return None
    return rel


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _runner_paths(root: str, python: str | None) -> tuple[list[str], list[str]]:
    """(files, dirs) of the configured interpreter, when it lies inside the repository."""
    if not python or ("/" not in python and "\\" not in python):
        return [], []
    full = python if os.path.isabs(python) else os.path.join(root, python)
    rel = os.path.relpath(os.path.normpath(full), os.path.normpath(root))
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        real = os.path.relpath(os.path.realpath(full), os.path.realpath(root))
        if real == ".." or real.startswith("../") or os.path.isabs(real):
            return [], []
        rel = real
    rel = rel.replace(os.sep, "/")
    parent = posixpath.dirname(rel)
    dirs = []
    if posixpath.basename(parent).casefold() in ("bin", "scripts"):
        venv = posixpath.dirname(parent)
        dirs.append(venv or parent)
    return [rel], dirs


def _patterns(patterns: Iterable[str], *, folded: bool) -> PatternSet:
    return PatternSet(p.casefold() if folded else p
                      for p in (unicodedata.normalize("NFC", p) for p in patterns))


class Judge:
    """The oracle / table / neutral / behaviour test for single paths under one config."""

    ORACLE, TABLE, NEUTRAL, BEHAVIOR = "oracle", "table", "neutral", "behavior"

    def __init__(self, root: str, config: Config) -> None:
        run_files, run_dirs = _runner_paths(root, config.python)
        self.dirs = tuple(fold(d) for d in (config.properties_dir, config.fixtures_dir,
                                            config.digest_file, config.freeze_file,
                                            *ORACLE_DIRS, *run_dirs))
        self._dir_prefixes = tuple(d + "/" for d in self.dirs)
        near = ancestors(config.properties_dir)
        # .gitattributes decide the bytes a checkout writes (eol=crlf,
        # working-tree-encoding): at the root or above the fixtures or the properties,
        # they change what properties read while the pinned blobs stay the same.
        attrs = (_join(a, ".gitattributes")
                 for a in dict.fromkeys((*near, *ancestors(config.fixtures_dir))))
        self.files = frozenset(fold(p) for p in (
            *ORACLE_FILES, *run_files, *(_join(a, n) for a in near for n in ANCESTOR_FILES),
            *attrs))
        self.table_files = frozenset(fold(_join(a, n)) for a in near for n in tables.TABLE_FILES)
        self._oracle_spec = _patterns(config.oracle_paths, folded=True)
        self._neutral_spec = _patterns(config.neutral_paths, folded=False)

    def is_oracle(self, path: str) -> bool:
        return self._oracle_key(fold(path))

    def _oracle_key(self, key: str) -> bool:
        if key in self.files or key in self.dirs or key.startswith(self._dir_prefixes):
            return True
        return bool(self._oracle_spec) and self._oracle_spec.match(key)

    def is_table_file(self, path: str) -> bool:
        return fold(path) in self.table_files

    def is_neutral(self, path: str) -> bool:
        """Neutral by pattern and not code by name or by pytest's default doctest glob
    (``ballot_guard.oracle.neutral_code``; ``classify`` also asks the modes and the pytest
    configs of the base)."""
        return bool(self._neutral_spec) and self._neutral_spec.match(normal(path)) \
            and not code_name(path) and not collectable(path, (DEFAULT_DOCTEST_GLOB,))

    def kind(self, path: str) -> str:
        """ORACLE, TABLE (judge by content), NEUTRAL or BEHAVIOR."""
        norm = normal(path)
        key = norm.casefold()
        if self._oracle_key(key):
            return self.ORACLE
        if key in self.table_files:
            return self.TABLE
        if self.is_neutral(norm):
            return self.NEUTRAL
        return self.BEHAVIOR


def _normal_and_folded(paths: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``normal`` and ``fold`` of every path, in bulk when all are plain ASCII paths
    (no dots to resolve, no doubled or trailing slash, no backslash): then each is its
    own normal form and one ``lower`` of the joined text folds them all."""
    joined = "\0".join(paths)
    if joined.isascii() and "\\" not in joined and "//" not in joined \
            and "./" not in joined and "/\0" not in joined and ".\0" not in joined \
            and not joined.endswith(("/", ".")) and not joined.startswith("./"):
        return list(paths), joined.lower().split("\0") if paths else []
    norms = [normal(p) for p in paths]
    return norms, [n.casefold() for n in norms]


def _all_unjudged(judge: Judge, keys: list[str],
                  oracle_match: Callable[[str], object] | None) -> bool:
    """Whether no key is oracle or a table file (C-level passes, no Python step per key)."""
    if not judge.files.isdisjoint(keys) or not judge.table_files.isdisjoint(keys) \
            or not frozenset(judge.dirs).isdisjoint(keys) \
            or any(map(methodcaller("startswith", judge._dir_prefixes), keys)):
        return False
    return oracle_match is None or not any(map(oracle_match, keys))


def _no_code_rides(root: str, config: Config, change: Change, old: Snapshot,
                   neutral: list[str], behavior: list[str]) -> tuple[list[str], list[str]]:
    """(neutral, behaviour) once the code among the neutral paths is behaviour."""

    executable = frozenset(p for f in change.files if EXECUTABLE in (f.old_mode, f.new_mode)
                           for p in (f.path, f.old_path) if p is not None)
    code = code_among(root, old.rev if old.rev is not None else git.empty_tree(root),
                      config.properties_dir, neutral, executable)
    if not code:
        return neutral, behavior
    moved = set(code)
    return [p for p in neutral if p not in moved], [*behavior, *code]


class Classified(NamedTuple):
    oracle: tuple[str, ...]
    behavior: tuple[str, ...]
    neutral: tuple[str, ...]
    table_files: tuple[str, ...]  # paths judged by table (a path on both sides is in both lists)


def classify(root: str, config: Config, change: Change, old: Snapshot,
             new: Callable[[], Snapshot], *, contents: bool = True) -> Classified:
    """Sort every path of ``change`` (both sides of renames) into oracle/behaviour/neutral.

    ``config`` is the config that judges (the base's); ``old`` is the base side
    and ``new()`` the changed side, called at most once and only when a table
    file (``pyproject.toml``, ``setup.cfg``, ``tox.ini`` at the root or in an
    ancestor of the properties dir) must be compared by content.  Such a file
    lands in ``oracle`` when its judge tables changed, in ``behavior`` when its
    other tables changed, in both when both did, and in ``neutral`` when no
    table's data changed; if either side does not parse it is oracle.  With
    ``contents=False`` no content is read and a table file counts as oracle.
    The lists are sorted; ``table_files`` names every path judged by table.
    """
    judge = Judge(root, config)
    oracle: list[str] = []
    behavior: list[str] = []
    neutral: list[str] = []
    table_files: list[str] = []
    new_side: list[Snapshot] = []
    # Judge.kind, inlined: a 20,000-path change goes through this loop on every commit.
    files, dirs, prefixes, tables_at = judge.files, judge.dirs, judge._dir_prefixes, \
        judge.table_files
    oracle_match = judge._oracle_spec.matcher() if judge._oracle_spec else None
    neutral_match = judge._neutral_spec.matcher() if judge._neutral_spec else None
    paths = change.paths()
    norms, keys = _normal_and_folded(paths)
    if _all_unjudged(judge, keys, oracle_match):
        # the usual large change: no oracle path, no table file; sorted in bulk
        if neutral_match is None:
            behavior = list(paths)
        else:
            flags = list(map(neutral_match, norms))
            neutral = list(compress(paths, flags))
            behavior = list(compress(paths, map(not_, flags)))
        paths = ()
    for path, norm, key in zip(paths, norms, keys, strict=False):  # paths () once sorted
        if key in files or key in dirs or key.startswith(prefixes) or (
                oracle_match is not None and oracle_match(key)):
            oracle.append(path)
        elif key in tables_at:
            table_files.append(path)
            if not contents:
                oracle.append(path)
                continue
            if not new_side:
                new_side.append(new())
            verdict = tables.judge(path, old.read(path), new_side[0].read(path))
            if verdict in (tables.ORACLE, tables.BOTH):
                oracle.append(path)
            if verdict in (tables.BEHAVIOR, tables.BOTH):
                (neutral if judge.is_neutral(path) else behavior).append(path)
            if verdict == tables.NEUTRAL:
                neutral.append(path)
        elif neutral_match is not None and neutral_match(norm):
            neutral.append(path)
        else:
            behavior.append(path)
    if neutral:
        neutral, behavior = _no_code_rides(root, config, change, old, neutral, behavior)

    if not HOOK_FILES.isdisjoint(map(itemgetter(2), map(methodcaller("rpartition", "/"),
                                                         (*behavior, *neutral)))):
        # rare: a file named like a git hook; ask git where the hooks live
        hooks = tracked_hooks_dir(root)
        if hooks is not None:
            key = fold(hooks)
            moved = [p for p in (*behavior, *neutral)
                     if fold(p) == key or fold(p).startswith(key + "/")]
            oracle += moved
            behavior = [p for p in behavior if p not in moved]
            neutral = [p for p in neutral if p not in moved]
    return Classified(tuple(sorted(oracle)), tuple(sorted(behavior)), tuple(sorted(neutral)),
                      tuple(sorted(table_files)))
