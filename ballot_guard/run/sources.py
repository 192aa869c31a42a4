"""The checkout's Python files that the runs import, read once by the runner.

Each run is a fresh copy of the runner that reads no bytecode another run could have
written (its own empty ``sys.pycache_prefix``), and whose Hypothesis home is empty: so
each run compiled every module of the project it imported, and Hypothesis parsed each
of them again for its constants (a property importing a package of 30 modules of 200
lines: about 60 ms of a run's CPU, measured).  Here the runner, before any run and
before it takes what the judge is, follows the imports of the property files, file by
file inside the checkout, without running any of them (``ast.parse`` and ``compile``
only), and keeps each file's bytes, its code and Hypothesis's constants.  A run takes
them only for a file whose bytes, as the run reads them, are those bytes: the very
result it would compute itself.  Nothing a run does reaches the runner's memory, so no
run sees another's state; a file a run changes is compiled by the runs after it, as
before.

This file runs alone in the project's interpreter, loaded by path beside the fork
server, and imports nothing of ballot-guard.
"""
from __future__ import annotations

import ast
import os
import sys
import time
from collections.abc import Callable, Iterable
from types import CodeType
from typing import Any

# Bounds on the runner's start: past any of them the rest is left to the runs, as before.
MAX_FILE = 512 * 1024       # Hypothesis skips larger files for constants too
MAX_TOTAL = 8 * 1024 * 1024
MAX_FILES = 2000
MAX_SECONDS = 3.0

_PYTEST_OWN = ("test_", "conftest")  # compiled by pytest's assertion rewriting, not here

# real path -> (its bytes, what was made of them)
CODE: dict[str, tuple[bytes, CodeType]] = {}
CONSTANTS: dict[str, tuple[bytes, Any]] = {}


def _under(path: str, root: str) -> bool:  # (as the fork server's own)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _module_files(root: str, parts: list[str]) -> list[str] | None:
    """The files ``import a.b.c`` runs from ``root``: each package's ``__init__.py`` on
    the way and the module itself; None where ``root`` has no ``a``."""
    found: list[str] = []
    where = root
    for i, part in enumerate(parts):
        where = os.path.join(where, part)
        init = os.path.join(where, "__init__.py")
        if os.path.isfile(init):  # a package
            found.append(init)
        elif os.path.isfile(where + ".py"):  # a module (what follows is a name in it)
            found.append(where + ".py")
            return found
        elif not os.path.isdir(where):  # (a directory alone: a namespace package)
            return found if i else None
    return found


def imported(path: str, node: ast.AST, roots: list[str]) -> list[str]:
    """The checkout files the imports written in ``node`` (the file at ``path``) name:
    absolute ones looked up in ``roots`` in turn, relative ones from ``path``."""
    found: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            wanted = [(roots, a.name.split(".")) for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            module = n.module.split(".") if n.module else []
            where = roots
            if n.level:
                base = os.path.dirname(path)
                for _ in range(n.level - 1):
                    base = os.path.dirname(base)
                where = [base]
                found.append(os.path.join(base, "__init__.py"))
            wanted = [(where, module)] + [(where, [*module, a.name]) for a in n.names
                                          if a.name != "*"]
        else:
            continue
        for places, parts in wanted:
            for root in places if parts else ():
                files = _module_files(root, parts)
                if files is not None:
                    found += files
                    break
    return [f for f in found if os.path.isfile(f)]


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_FILE else None


def prepare(tree: str, properties_dir: str, constants_of: Callable[[bytes], Any] | None,
            local: Callable[[str], bool] = lambda p: True) -> int:
    """Read, compile and survey the property files of ``tree/properties_dir`` and the
    checkout files they import, transitively; the number of files kept."""
    root = os.path.realpath(tree)
    props = os.path.realpath(os.path.join(root, properties_dir))
    if not _under(props, root) or not os.path.isdir(props):
        return 0
    seeds = sorted(os.path.join(props, n) for n in os.listdir(props) if n.endswith(".py"))
    seeds += [c for c in (os.path.join(root, "conftest.py"),) if os.path.isfile(c)]
    roots = [props, root, os.path.join(root, "src")]
    start, total = time.monotonic(), 0
    todo, seen = list(seeds), set(seeds)
    while todo and len(seen) <= MAX_FILES and time.monotonic() - start < MAX_SECONDS:
        path = os.path.realpath(todo.pop(0))
        data = _read(path) if _under(path, root) else None
        if data is None or total + len(data) > MAX_TOTAL:
            continue
        total += len(data)
        try:
            node = ast.parse(data, path)
            if not os.path.basename(path).startswith(_PYTEST_OWN):
                CODE[path] = (data, compile(data, path, "exec", dont_inherit=True))
            if constants_of is not None and local(path):
                CONSTANTS[path] = (data, constants_of(data))
        except Exception:  # noqa: BLE001 - a file that does not parse or compile: the run's own
            continue
        for found in imported(path, node, roots):
            if found not in seen:
                seen.add(found)
                todo.append(found)
    return len(set(CODE) | set(CONSTANTS))


def _same(kept: dict[str, tuple[bytes, Any]], path: object, data: bytes | None) -> Any:
    """What was made of the file at ``path``, where ``data`` are the bytes it was made
    from; else None."""
    hit = kept.get(path) if isinstance(path, str) else None
    return hit[1] if hit is not None and data == hit[0] else None


def install(loader: Any, hypothesis_modules: Iterable[Any]) -> None:
    """Use what ``prepare`` kept: in the import system's compile step (``loader``:
    ``SourceLoader``), and in Hypothesis's survey of a module's constants."""
    compile_source = loader.source_to_code

    def source_to_code(self: Any, data: Any, path: Any, *, _optimize: int = -1) -> Any:
        if _optimize == -1 and isinstance(data, bytes):
            code = _same(CODE, path, data)
            if code is not None:
                return code
        return compile_source(self, data, path, _optimize=_optimize)

    loader.source_to_code = source_to_code
    modules = [m for m in hypothesis_modules if m is not None]
    originals = {getattr(m, "constants_from_module", None) for m in modules}
    survey = originals.pop() if len(originals) == 1 else None
    if not callable(survey):
        return  # another Hypothesis: each run surveys its modules itself

    def constants_from_module(module: Any, *, limit: bool = True) -> Any:
        path = getattr(module, "__file__", None)
        if limit and isinstance(path, str) and path in CONSTANTS:
            got = _same(CONSTANTS, path, _read(path))  # the file as this run reads it
            if got is not None:
                return got
        return survey(module, limit=limit)

    for m in modules:
        m.constants_from_module = constants_from_module


def hypothesis_constants() -> tuple[Callable[[bytes], Any] | None, Callable[[str], bool]]:
    """Hypothesis's own survey of a source's constants, and its test of a local file
    (None, where this Hypothesis has neither)."""
    ast_mod = sys.modules.get("hypothesis.internal.constants_ast")
    of = getattr(ast_mod, "_constants_from_source", None)
    local = getattr(ast_mod, "is_local_module_file", None)
    if not callable(of) or not callable(local):
        return None, lambda p: False
    return (lambda data: of(data, limit=True)), local
