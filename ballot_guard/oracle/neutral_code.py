"""Neutral never covers code: what Python can import or run, and what pytest can collect.

``neutral_paths`` name files that may ride with either side of a change (docs,
the licence).  A pattern broad enough to cover code would let code ride beside
an oracle edit, so whatever ``neutral_paths`` says, these paths are behaviour
(or oracle, which wins anyway):

- Python source, stubs, compiled and extension files, and the files ``site``
  or the import system read: ``.py``, ``.pyw``, ``.pyi``, ``.pyc``, ``.pyo``,
  ``.pyx``, ``.pxd``, ``.pxi``, ``.pyz``, ``.so`` (also ``.so.N``), ``.pyd``,
  ``.pth`` (a ``.pth`` line that starts with ``import`` runs at start-up);
- a file git records as executable (mode 100755): it runs as a program,
  whatever its name (a shebang script);
- a file pytest collects as a doctest: ``test*.txt`` (pytest's default glob)
  and every ``--doctest-glob`` in the ``addopts`` of a pytest config at the
  root or above the properties dir, at the base.  pytest's ``python_files``
  cannot widen collection past ``.py`` files (pytest collects only ``.py``
  files as modules), and ``--doctest-modules`` collects ``.py`` files, which
  are code already.

What this cannot see: a file that behaviour code itself reads and executes
(``exec(open("docs/x.md").read())``) is data to us; that behaviour code is
judged where it is written.
"""
from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ballot_guard import git
from ballot_guard.oracle import tables
from ballot_guard.oracle.names import ancestors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CODE_SUFFIXES = frozenset({".py", ".pyw", ".pyi", ".pyc", ".pyo", ".pyx", ".pxd", ".pxi",
                           ".pyz", ".so", ".pyd", ".pth"})
EXECUTABLE = "100755"
DEFAULT_DOCTEST_GLOB = "test*.txt"
_SO_VERSIONED = re.compile(r"\.so(?:\.\d+)+$")
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml",
                "tox.ini", "setup.cfg")


def code_name(path: str) -> bool:
    """Whether the file name alone makes ``path`` Python code (case ignored)."""
    name = posixpath.basename(path).casefold()
    return posixpath.splitext(name)[1] in CODE_SUFFIXES or \
        _SO_VERSIONED.search(name) is not None


def collectable(path: str, globs: Iterable[str]) -> bool:
    """Whether pytest's doctest plugin would collect ``path`` under ``globs`` (its
    ``fnmatch_ex``: a glob without ``/`` matches the file name, one with ``/`` the whole
    path, as if it began with ``*``; case ignored here, to err on the side of code)."""
    key = path.casefold()
    name = posixpath.basename(key)
    for glob in globs:
        g = glob.casefold()
        if "/" not in g:
            if fnmatch.fnmatchcase(name, g):
                return True
        elif fnmatch.fnmatchcase("/" + key, "*" + g if g.startswith("/") else "*/" + g):
            return True
    return False


def _addopts(value: Any) -> list[str]:
    """Every ``addopts`` value anywhere in a parsed judge table, as argument lists."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "addopts" and isinstance(item, str):
                try:
                    found += shlex.split(item)
                except ValueError:
                    found += item.split()
            elif key == "addopts" and isinstance(item, list):
                found += [str(v) for v in item]
            else:
                found += _addopts(item)
    return found


def globs_of_args(args: Sequence[str]) -> list[str]:
    """The ``--doctest-glob`` values of an argument list (pytest allows no abbreviation)."""
    globs: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--doctest-glob="):
            globs.append(arg.partition("=")[2])
        elif arg == "--doctest-glob" and i + 1 < len(args):
            globs.append(args[i + 1])
    return [g for g in globs if g]


def _judge_tables(name: str, data: bytes) -> Any:
    if posixpath.basename(name).casefold() in ("pytest.toml", ".pytest.toml"):
        try:
            return tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
    try:
        return tables.split(name, data)[0]
    except tables.Unparseable:
        return {}  # pytest itself stops on a config it cannot read


def doctest_globs(root: str, rev: str, properties_dir: str) -> tuple[str, ...]:
    """pytest's default doctest glob and every ``--doctest-glob`` of the pytest configs
    (at the root or above the properties dir) of the tree ``rev``."""
    names = [f"{a}/{n}" if a else n for a in ancestors(properties_dir) for n in PYTEST_FILES]
    globs = [DEFAULT_DOCTEST_GLOB]
    for name, data in zip(names, git.Snapshot(root, rev).read_many(names), strict=True):
        if data is not None and b"doctest-glob" in data:
            globs += globs_of_args(_addopts(_judge_tables(name, data)))
    return tuple(dict.fromkeys(globs))


def code_among(root: str, rev: str, properties_dir: str, paths: Sequence[str],
               executable: frozenset[str]) -> list[str]:
    """The paths of ``paths`` (neutral by pattern) that are code: by name, by mode
    (``executable``: the paths git records as 100755 on either side), or collectable as
    doctests under the pytest configs of ``rev``."""
    found = [p for p in paths if code_name(p) or p in executable]
    rest = [p for p in paths if p not in set(found)]
    if rest:
        globs = doctest_globs(root, rev, properties_dir)
        found += [p for p in rest if collectable(p, globs)]
    return found
