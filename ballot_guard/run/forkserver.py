"""Runs properties under the PROJECT's interpreter (a standalone script, stdlib only).

ballot-guard is not installed in the project's environment, so this file is
run by path: ``<python> forkserver.py serve`` or ``<python> forkserver.py once REQUEST``.

``serve`` imports pytest (and Hypothesis, when the project has it) once, then
forks one child per request read from stdin.  Each child is a fresh process
state: a copy of a parent that never ran pytest, so nothing one run does (a
module imported, a global changed, a thread started) can reach another.  The
parent starts no thread, and it was itself started with the gate's
PYTHONHASHSEED, so every child hashes alike.  ``once`` runs one request in
this process: the fallback where fork is unavailable.

``serve POLICY`` first enters the OS sandbox that POLICY (JSON, see
``sandbox.py``) asks for, where the OS allows it: each child then isolates
itself (its own namespaces and view) before anything of its run executes.

Protocol (``serve``), one JSON object a line: the parent first describes
the runner (pytest's version, whether Hypothesis and pytest-randomly are
there, whether it can fork, the isolation in force).  Then ``{"op":
"prepare", "id": ID, "req": {"args", "log", "result", "home"}}`` forks a child that runs
pytest up to just before project code and waits (answer ``{"id", "prepared": PID}``);
``{"op": "go", "id"}`` releases it (``{"id", "started": PID}``, later
``{"id", "exit": N}`` or ``{"id", "signal": N}``); ``{"op": "cancel",
"id"}``, or the end of stdin, makes a prepared child exit without running
anything.  A prepare with ``"idle": true`` prepares at the idle priority
(``SCHED_IDLE``) and goes back to the normal one on "go"; the description says
whether that is possible here (``"idle"``).  The PID in the replies is the run's
keeper (see "nothing left behind" below): a SIGTERM to it ends the run and all
it started; its exit status is the run's.  Replies go to a private copy of the
original stdout; the process's own fd 1 is pointed at its stderr so that nothing
printed at import can corrupt the protocol.
"""
from __future__ import annotations

import os
import sys

# The judge's decisive references, taken when this file starts, before anything of
# the project can run: a child reports and exits through these even when the code
# under test replaces the module attributes (which the integrity check then names).
_EXIT = os._exit
_BUILTINS = sys.modules["builtins"]  # what every module and function of the oracle looks up
_WRITE = os.write
_OPEN = os.open
_CLOSE = os.close
_REPLACE = os.replace
_REALPATH = os.path.realpath

import json  # noqa: E402 - after the references above
from hashlib import blake2b  # noqa: E402 - after the references above (pytest loads it)

_DUMPS = json.dumps
_SIGN = blake2b
from collections.abc import Callable  # noqa: E402 - after the references above
from typing import TYPE_CHECKING, Any, NamedTuple, cast  # noqa: E402 - after the references above


def _sibling(name: str, *, watched: bool = False) -> Any:
    """ballot-guard's ``NAME.py`` beside this file, loaded by path (ballot-guard is not
    installed in the project's environment); a ``watched`` one is put in
    ``sys.modules`` as ``_ballot_guard_NAME``, where the integrity check finds it among
    the judge's modules."""
    import importlib.util

    label = f"_ballot_guard_{name}"
    if label in sys.modules:
        return sys.modules[label]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(label, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if watched:
        sys.modules[label] = module
    return module


if TYPE_CHECKING:  # this file runs alone in the project's interpreter: names for the checker
    from ballot_guard.run import keeper
    from ballot_guard.run.protocol import Describe, Isolation, Reply, RunRequest
else:
    keeper = _sibling("keeper", watched=True)  # a run's keeper: nothing left behind

CRASH = keeper.CRASH  # the exit code of a child whose own machinery (not pytest) failed

SANDBOX: Any = None   # ballot-guard's sandbox.py, loaded by path when a policy asks for it
POLICY: dict[str, Any] = {}  # the sandbox policy in force in this server ({}: none)


def _enter_sandbox(policy_json: str | None) -> Isolation:
    """Enter the OS sandbox the gate asks for (before any thread or import); its record."""
    global SANDBOX, POLICY  # noqa: PLW0603 - this server's one sandbox, set at its start

    policy = json.loads(policy_json) if policy_json else {"mode": "off"}
    SANDBOX = _sibling("sandbox")
    policy = SANDBOX.with_environment(policy)
    isolation: Isolation = SANDBOX.enter(policy)
    if isolation["level"] == "sandbox":
        POLICY = policy
    return isolation


def _drop_own_dir() -> None:
    """A script puts its own directory first, which would let ``import config``
    in a project find ballot-guard's module: take it out."""
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]


# --- interpreter start without the checkout ------------------------------------
#
# The runner starts with ``-s -S``: no user site, no ``site`` at all, so that no
# ``.pth`` file or ``sitecustomize`` runs before the judge is ready.  ``_start``
# then adds the interpreter's site-packages by hand.  Path entries that lead into
# the checkout (an editable install, a src layout) are held back until the judge's
# modules are imported, and under ``--rev`` re-pointed from the main checkout to
# the same place in the worktree; a ``.pth`` import line runs only with the
# interpreter's own directories on the path; ``sitecustomize`` is imported only
# from the installation.

_HELD: list[str] = []   # sys.path as site would have made it, the checkout included
_ROOTS: dict[str, Any] = {"top": None, "tree": None, "repointed": [], "unrepointable": [],
                          "site": []}


def _prefixes() -> tuple[str, ...]:
    out: list[str] = []
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        for q in (os.path.abspath(p), _REALPATH(p)):
            if q not in out:
                out.append(q)
    return tuple(out)


_PREFIXES = _prefixes()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _installed(path: str) -> bool:
    """Whether ``path`` lies in the interpreter's own installation."""
    return any(_under(path, p) for p in _PREFIXES)


def _checkout_roots() -> list[str]:
    roots = [r for r in (_ROOTS["top"], _ROOTS["tree"]) if r]
    return list(dict.fromkeys(x for r in roots for x in (r, _REALPATH(r))))


def _in_checkout(path: str) -> bool:
    """A path of the checkout (main or worktree) that is not the interpreter's own env."""
    real = _REALPATH(path)
    return not _installed(real) and any(_under(real, r) or _under(path, r)
                                        for r in _checkout_roots())


def _repoint(path: str) -> str:
    """``path`` in the main checkout moved to the same place in the worktree (--rev)."""
    top, tree = _ROOTS["top"], _ROOTS["tree"]
    if not top or not tree or top == tree:
        return path
    real = _REALPATH(path)
    for base in dict.fromkeys((top, _REALPATH(top))):
        if _under(real, base) and not _installed(real) and not _under(real, _REALPATH(tree)):
            moved = os.path.join(tree, os.path.relpath(real, base))
            if os.path.exists(moved):
                _ROOTS["repointed"].append(f"{path} -> {moved}")
                return moved
            _ROOTS["unrepointable"].append(path)
            return path
    return path


def _pth_lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.splitlines()


def _venv() -> list[str]:
    """What ``site.venv`` decides (``sys.prefix``, the prefixes whose site-packages
    count), without processing any ``.pth`` file as it does."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    site_prefix = os.path.dirname(exe_dir)
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(site_prefix, "pyvenv.cfg")):
        if not os.path.isfile(conf):
            continue
        system = "true"
        try:
            with open(conf, encoding="utf-8") as f:
                for line in f:
                    key, eq, value = line.partition("=")
                    if eq and key.strip().lower() == "include-system-site-packages":
                        system = value.strip().lower()
        except (OSError, UnicodeDecodeError):
            pass
        base = [sys.prefix, sys.exec_prefix]
        sys.prefix = sys.exec_prefix = site_prefix
        return [site_prefix, *base] if system == "true" else [site_prefix]
    return [sys.prefix, sys.exec_prefix]


def _start(top: str | None, tree: str | None) -> None:
    """What ``site`` does at start-up, minus the checkout (see above)."""
    _ROOTS["top"] = os.path.abspath(top) if top else None
    _ROOTS["tree"] = os.path.abspath(tree) if tree else _ROOTS["top"]
    if not sys.flags.no_site:
        _HELD[:] = list(sys.path)
        import site
        _ROOTS["site"] = [d for d in site.getsitepackages() if os.path.isdir(d)]
        return
    import site

    global _PREFIXES  # noqa: PLW0603 - the interpreter's prefixes, set once at start
    prefixes = _venv()
    _PREFIXES = _prefixes()
    site.PREFIXES[:] = prefixes  # what site.venv leaves there: getsitepackages() agrees
    site.ENABLE_USER_SITE = False
    dirs = [d for d in site.getsitepackages(prefixes) if os.path.isdir(d)]
    _ROOTS["site"] = dirs
    path = list(sys.path)
    for sitedir in dirs:
        if sitedir not in path:
            path.append(sitedir)
        try:
            names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth"))
        except OSError:
            names = []
        for name in names:
            for line in _pth_lines(os.path.join(sitedir, name)):
                if not line.strip() or line.startswith("#"):
                    continue
                if line.startswith(("import ", "import\t")):
                    saved = sys.path
                    sys.path = [p for p in path if not _in_checkout(p)]
                    try:
                        exec(line)  # what site.addpackage does, off the checkout
                    except Exception:  # noqa: BLE001 - site reports and goes on, so do we
                        pass
                    finally:
                        sys.path = saved
                    continue
                entry = os.path.abspath(os.path.join(sitedir, line.rstrip()))
                if entry not in path and os.path.exists(entry):
                    path.append(_repoint(entry) if _in_checkout(entry) else entry)
    _repoint_finders()
    _HELD[:] = path
    sys.path = [p for p in path if not _in_checkout(p)]
    site.setquit()
    site.setcopyright()
    site.sethelper()
    try:
        import importlib
        import importlib.util
        spec = importlib.util.find_spec("sitecustomize")
        if spec is not None and spec.origin and not _in_checkout(spec.origin):
            importlib.import_module("sitecustomize")  # the installation's own, as site does
    except Exception:  # noqa: BLE001
        pass


def _repoint_finders() -> None:
    """setuptools' editable finders map package names to checkout paths: re-point them."""
    for name, mod in list(sys.modules.items()):
        if not name.startswith("__editable__"):
            continue
        mapping = getattr(mod, "MAPPING", None)
        if isinstance(mapping, dict):
            for key, value in list(mapping.items()):
                if isinstance(value, str) and _in_checkout(value):
                    mapping[key] = _repoint(value)
        spaces = getattr(mod, "NAMESPACES", None)
        if isinstance(spaces, dict):
            for key, values in list(spaces.items()):
                if isinstance(values, list):
                    spaces[key] = [_repoint(v) if isinstance(v, str) and _in_checkout(v) else v
                                   for v in values]


def _add_cwd() -> None:
    """The project's path entries back in place, and the repository root first on
    ``sys.path``, as ``python -m pytest`` does.

    Called only after pytest, Hypothesis and the installed pytest plugins are
    imported from the interpreter's environment: a ``pytest.py``,
    ``_pytest/``, ``pluggy/`` or ``hypothesis/`` that a patch adds at the
    repository root or under ``src/`` must not replace the judge's runner.
    """
    if _HELD:
        sys.path[:] = _HELD
    if not getattr(sys.flags, "safe_path", False):
        sys.path.insert(0, os.getcwd())


def _cache_from_source(orig: Callable[..., str]) -> Callable[..., str]:
    """Bytecode of the interpreter's installation in its own ``__pycache__``; every other
    file's (the checkout's) under ``sys.pycache_prefix``, which each run sets to a
    private empty folder: no run reads bytecode another run could have written."""
    def cache_from_source(path: str, debug_override: Any = None, *,
                          optimization: Any = None) -> str:
        got = orig(path, debug_override, optimization=optimization)
        if sys.pycache_prefix is None or not _installed(os.path.abspath(path)):
            return got
        return os.path.join(os.path.dirname(path), "__pycache__", os.path.basename(got))
    return cache_from_source


def _private_bytecode() -> None:
    import importlib._bootstrap_external as ext

    ext.cache_from_source = _cache_from_source(ext.cache_from_source)


def describe() -> Describe:
    """What this interpreter offers: pytest (required), Hypothesis, pytest-randomly."""
    import importlib.util

    info: Describe = {"ok": False, "python": sys.executable,
                            "version": sys.version.split()[0]}
    try:
        import pytest
    except Exception as exc:  # noqa: BLE001 - any import failure means "no runner"
        info["error"] = f"cannot import pytest ({type(exc).__name__}: {exc})"
        return info
    info["ok"] = True
    info["pytest"] = getattr(pytest, "__version__", "unknown")
    info["hypothesis"] = None
    if importlib.util.find_spec("hypothesis") is not None:
        try:  # its version without importing it: a lone probe stays quick
            import importlib.metadata
            info["hypothesis"] = importlib.metadata.version("hypothesis")
        except Exception:  # noqa: BLE001 - no metadata: ask the module itself
            try:
                import hypothesis
                info["hypothesis"] = getattr(hypothesis, "__version__", "unknown")
            except Exception:  # noqa: BLE001 - a broken Hypothesis is "not importable"
                pass
    info["randomly"] = importlib.util.find_spec("pytest_randomly") is not None
    info["site"] = list(_ROOTS["site"])
    return info


# --- integrity: the judge's objects, by identity --------------------------------

# Every module of the judge: what decides a test's outcome, and what reports it.
_JUDGE_TOPS = ("pytest", "_pytest", "pluggy", "hypothesis", "_hypothesis_pytestplugin",
               "_hypothesis_globals", "json", "unittest", "iniconfig")
_JUDGE_EXACT = ("builtins", "os", "posixpath", "importlib._bootstrap_external", "__main__",
                "_ballot_guard_keeper", "_ballot_guard_sources")
_SYS = ("exit", "modules", "meta_path", "path_hooks", "excepthook")
# Module globals that pytest and Hypothesis themselves set and reset while a session
# runs (per test, or lazily on first use): their identity is not the judge's meaning.
_VOLATILE = frozenset({
    "_pytest.assertion.util._reprcompare", "_pytest.assertion.util._assertion_pass",
    "_pytest.assertion.util._config", "hypothesis.core.running_under_pytest",
})
_VOLATILE_KEYS = frozenset({"__warningregistry__", "_pytest_diamond_inheritance_warning_shown"})
# Hypothesis keeps runtime state (caches, counters, timers) in the globals of these
# modules: there only functions, classes, modules and ALL_CAPS constants are compared.
_STATEFUL = ("hypothesis.internal.", "hypothesis.configuration")
_MISSING = object()
_PROFILES = "hypothesis settings profiles"
try:  # a keeper reports the CPU its run used (POSIX)
    import resource
except ImportError:  # pragma: no cover - no fork there either: no keeper
    resource = None  # type: ignore[assignment]
from itertools import chain  # noqa: E402
from operator import attrgetter, is_not  # noqa: E402
from types import CodeType, FunctionType, ModuleType  # noqa: E402

_CODE, _DEFAULTS, _KWDEFAULTS = (attrgetter("__code__"), attrgetter("__defaults__"),
                                 attrgetter("__kwdefaults__"))
_FUNCTION_KINDS = frozenset({FunctionType, staticmethod, classmethod, property})
_EMPTY_CELL = object()


def _functions_of(value: Any, depth: int = 2) -> list[FunctionType]:
    """The Python functions behind an attribute: the function itself, the ones a
    method, property or decorator wraps (``__wrapped__``, the cells of its closure)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return [f for x in (value.fget, value.fset, value.fdel) for f in _functions_of(x, depth)]
    if not isinstance(value, FunctionType):
        return []
    found = [value]
    if depth > 0:
        wrapped = value.__dict__.get("__wrapped__")
        if wrapped is not None:
            found += _functions_of(wrapped, depth - 1)
        for cell in value.__closure__ or ():
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            if isinstance(inner, FunctionType):
                found += _functions_of(inner, depth - 1)
    return found


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY_CELL


class _Functions:
    """What a function of the judge does without its name changing: its code, its
    defaults (and the values of its keyword defaults), what its closure holds.
    Replacing ``Function.runtest.__code__`` keeps every attribute of every module as
    it was; this is where it shows."""

    def __init__(self) -> None:
        self.funcs: list[FunctionType] = []
        self.ids: set[int] = set()
        self.codes: tuple[Any, ...] = ()
        self.defaults: tuple[Any, ...] = ()
        self.kwdefaults: tuple[Any, ...] = ()
        self.kw: list[tuple[FunctionType, dict[str, Any], tuple[Any, ...]]] = []
        self.cells: list[tuple[FunctionType, Any]] = []
        self.contents: tuple[Any, ...] = ()

    def add(self, values: Any) -> None:
        kinds, ids, funcs = _FUNCTION_KINDS, self.ids, self.funcs
        for value in [v for v in values if type(v) in kinds and id(v) not in ids]:
            if type(value) is FunctionType and value.__closure__ is None \
                    and "__wrapped__" not in value.__dict__:
                ids.add(id(value))  # the common case, without a call
                funcs.append(value)
                continue
            for f in _functions_of(value):
                if id(f) not in ids:
                    ids.add(id(f))
                    funcs.append(f)

    def _take(self, start: int = 0) -> None:
        """What the functions are now: all of them, or only those from ``start`` on
        (added since the rest were taken, which stay as they were)."""
        funcs = self.funcs[start:]
        codes = tuple(map(_CODE, funcs))
        defaults = tuple(map(_DEFAULTS, funcs))
        kwdefaults = tuple(map(_KWDEFAULTS, funcs))
        kw = [(f, d, tuple(d.values())) for f, d in zip(funcs, kwdefaults, strict=True) if d]
        cells = [(f, c) for f in funcs for c in f.__closure__ or ()]
        contents = tuple(_cell(c) for _, c in cells)
        if start:
            codes, defaults, kwdefaults = (self.codes + codes, self.defaults + defaults,
                                           self.kwdefaults + kwdefaults)
            kw, cells, contents = self.kw + kw, self.cells + cells, self.contents + contents
        self.codes, self.defaults, self.kwdefaults = codes, defaults, kwdefaults
        self.kw, self.cells, self.contents = kw, cells, contents

    def changed(self) -> list[str]:
        """Each function whose code, defaults or closure changed, by its full name."""
        funcs = self.funcs
        found: dict[int, FunctionType] = {}
        for get, then in ((_CODE, self.codes), (_DEFAULTS, self.defaults),
                          (_KWDEFAULTS, self.kwdefaults)):
            if any(map(is_not, map(get, funcs), then)):
                found.update((id(f), f) for f, was in zip(funcs, then, strict=True)
                             if get(f) is not was)
        kw = self.kw
        dicts = [d for _, d, _ in kw]
        if list(map(len, dicts)) != [len(v) for _, _, v in kw] or any(map(
                is_not, chain.from_iterable(map(dict.values, dicts)),
                chain.from_iterable(v for _, _, v in kw))):  # one pass; then which
            found.update((id(f), f) for f, d, values in kw
                         if len(d) != len(values) or any(map(is_not, d.values(), values)))
        if any(map(is_not, map(_cell, (c for _, c in self.cells)), self.contents)):
            found.update((id(f), f) for (f, c), then in zip(self.cells, self.contents,
                                                           strict=True)
                         if _cell(c) is not then)
        return sorted(f"{getattr(f, '__module__', '?')}.{f.__qualname__}"
                      for f in found.values())

    def rebase(self, new_values: Any) -> list[str]:
        """What changed so far (never set-up: pytest's and Hypothesis's configuration
        do not rewrite functions), then the functions of ``new_values`` watched too."""
        changed = self.changed()
        before = len(self.funcs)
        self.add(new_values)
        if changed:
            self._take()
        elif len(self.funcs) != before:
            self._take(before)
        return changed


def _data(value: Any) -> bool:
    return not (callable(value) or isinstance(value, type) or type(value).__name__ == "module")


def _benign(label: str, key: str, before: Any, after: Any, stateful: bool) -> bool:
    """A change that is not the judge's meaning: a registry pytest or Python keeps, a
    submodule imported on first use, runtime state of Hypothesis's internals."""
    if key in _VOLATILE_KEYS or f"{label}.{key}" in _VOLATILE:
        return True
    if before is _MISSING and type(after).__name__ == "module" \
            and getattr(after, "__name__", None) == f"{label}.{key}":
        return True
    return stateful and not key.isupper() and before is not _MISSING and after is not _MISSING \
        and _data(before) and _data(after)


def _version_view() -> Callable[[dict[Any, Any]], Any] | None:
    """A view of a dict's version tag (``ma_version_tag``), or None where this
    interpreter has none we can trust.

    CPython 3.10-3.13 gives every dict a 64-bit tag, right after its size, that
    changes whenever an entry is added, replaced or removed.  Reading it reads the
    dict's header only: comparing the values themselves, as the check must where the
    tag moved, writes each value's reference count, and in a forked run that copies
    the page each value lives on (the first check of a run: 10 ms of copying,
    measured).  Checked here on a probe dict before use (where the tag does not move
    on each kind of change, or the size beside it is not the dict's size, there is
    no view: every check compares every value, as before)."""
    if sys.implementation.name != "cpython" or not (3, 10) <= sys.version_info[:2] <= (3, 13) \
            or {"t", "d"} & set(getattr(sys, "abiflags", "")) or hasattr(sys, "gettotalrefcount"):
        return None
    try:
        import ctypes
        head = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
        tag_at = head + ctypes.sizeof(ctypes.c_ssize_t)

        def view(d: dict[Any, Any]) -> Any:
            return ctypes.c_uint64.from_address(id(d) + tag_at)

        def size(d: dict[Any, Any]) -> int:
            return int(ctypes.c_ssize_t.from_address(id(d) + head).value)

        probe: dict[Any, Any] = {}
        tag = view(probe)
        for change in (lambda: probe.__setitem__("a", object()),
                       lambda: probe.__setitem__("a", object()),
                       lambda: probe.__setitem__("b", 1), lambda: probe.pop("a"),
                       lambda: probe.update(c=2), probe.clear):
            was = tag.value
            change()
            if tag.value == was or size(probe) != len(probe):
                return None
        if any(size(d) != len(d) for d in (sys.__dict__, os.__dict__, vars(ctypes))):
            return None
        return view
    except Exception:  # noqa: BLE001 - no view: every value is compared
        return None


_VIEW = _version_view()
_NO_TAG = -1  # the version of a namespace without a view: never equal to a read one


def _tags(views: list[Any]) -> list[int]:
    return [v.value if v is not None else _NO_TAG for v in views]


def _judge_module(name: str) -> bool:
    return name in _JUDGE_EXACT or name.partition(".")[0] in _JUDGE_TOPS


_TRACERS_LABEL = "the interpreter's trace and profile functions (sys.settrace)"


def _tracers() -> tuple[Any, ...]:
    """What runs on every line, call or jump of every frame: a trace function can skip
    an ``assert`` (``frame.f_lineno = ...``).  pytest sets none; Hypothesis sets one only
    inside a test, and puts the one before back."""
    threading_ = sys.modules.get("threading")
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+
    tools = tuple(monitoring.get_tool(i) for i in range(6)) if monitoring else ()
    return (sys.gettrace(), sys.getprofile(), getattr(threading_, "_trace_hook", None),
            getattr(threading_, "_profile_hook", None), *tools)


class _Integrity:
    """The identity of every attribute of the judge's modules and of the classes they
    define, of the few ``sys`` attributes a run depends on, and of Hypothesis's active
    settings profile.  Taken in the serving parent before any project code, rebased in
    each run just before collection (the oracle's conftests and pytest's own set-up may
    configure things), and checked after collection and at the session's end: any
    change is named, and the run is an error."""

    def __init__(self) -> None:
        self.spaces: list[tuple[str, Any, tuple[Any, ...], tuple[Any, ...], bool]] = []
        # each space's version tag view and its tag when its values were taken (_VIEW)
        self.views: list[Any] = []
        self.versions: list[int] = []
        self.getters: list[tuple[str, Callable[[], tuple[Any, ...]], tuple[Any, ...]]] = []
        self.functions = _Functions()
        self.modules: set[str] = set()  # the judge's modules it watches

    @classmethod
    def take(cls, skip: frozenset[str] = frozenset()) -> _Integrity:
        snap = cls()
        for name, mod in list(sys.modules.items()):
            ns = getattr(mod, "__dict__", None)
            if not _judge_module(name) or not isinstance(ns, dict) or name in skip:
                continue
            snap.modules.add(name)
            snap._add(name, ns, name.startswith(_STATEFUL))
            for attr, obj in list(ns.items()):
                if isinstance(obj, type) and obj.__dict__.get("__module__") == name:
                    snap._add(f"{name}.{attr}", obj.__dict__)
        snap.functions = _Functions()
        for _label, _ns, _keys, values, _stateful in snap.spaces:
            snap.functions.add(values)
        snap.functions.add(vars(sys).values())
        snap.functions._take()
        snap._getter("sys", lambda: tuple(sys.__dict__.get(k) for k in _SYS))
        snap._getter("sys.meta_path", lambda: tuple(sys.meta_path))
        snap._getter(_TRACERS_LABEL, _tracers)
        hs = sys.modules.get("hypothesis._settings")
        if hs is not None and hasattr(hs, "settings"):
            profiles = getattr(hs.settings, "_profiles", None)
            if isinstance(profiles, dict):
                snap._add(_PROFILES, profiles)
            dv = getattr(hs, "default_variable", None)
            if dv is not None:
                snap._getter("hypothesis active settings profile", lambda: _profile(dv))
        return snap

    def extend(self) -> None:
        """Watch the judge's modules imported since it was taken, as they are now."""
        more = _Integrity.take(skip=frozenset(self.modules))
        labels = {label for label, *_ in self.spaces}
        for i, space in enumerate(more.spaces):
            if space[0] not in labels:
                self.spaces.append(space)
                self.views.append(more.views[i])
                self.versions.append(more.versions[i])
        self.modules |= more.modules
        self.functions = _Functions()
        for _label, _ns, _keys, values, _stateful in self.spaces:
            self.functions.add(values)
        self.functions.add(vars(sys).values())
        self.functions._take()
        self.getters = more.getters  # sys, the meta path and the active profile, as now

    def _add(self, label: str, ns: Any, stateful: bool = False) -> None:
        if not isinstance(ns, dict):  # a class's mappingproxy: watch the dict behind it
            import gc
            inner = [d for d in gc.get_referents(ns) if isinstance(d, dict)]
            ns = inner[0] if len(inner) == 1 else ns
        view = _VIEW(ns) if _VIEW is not None and type(ns) is dict else None
        self.views.append(view)
        self.versions.append(view.value if view is not None else _NO_TAG)
        self.spaces.append((label, ns, tuple(ns.keys()), tuple(ns.values()), stateful))

    def _getter(self, label: str, get: Callable[[], tuple[Any, ...]]) -> None:
        try:
            self.getters.append((label, get, get()))
        except Exception:  # noqa: BLE001 - nothing to watch there
            pass

    def _moved(self) -> list[int]:
        """The spaces whose version tag moved since their values were taken (all of
        them where there is no view): only those can have changed."""
        now = _tags(self.views)
        if now == self.versions:
            return []
        return [i for i, (a, b) in enumerate(zip(now, self.versions, strict=True)) if a != b]

    def changed(self) -> list[str]:
        """Every attribute added, removed or replaced since the snapshot."""
        found: list[str] = []
        spaces = self.spaces
        for i in self._moved():
            label, ns, keys, values, stateful = spaces[i]
            if len(ns) == len(values) and not any(map(is_not, ns.values(), values)):
                continue
            before = dict(zip(keys, values, strict=True))
            for key in list(ns.keys()) + [k for k in keys if k not in ns]:
                then, now = before.get(key, _MISSING), ns.get(key, _MISSING)
                if then is not now and not _benign(label, str(key), then, now, stateful):
                    found.append(f"{label}.{key}")
        for label, get, then in self.getters:
            try:
                now = get()
            except Exception:  # noqa: BLE001
                now = ()
            if len(now) != len(then) or any(map(is_not, now, then)):
                found.append(label)
        found += (name for name in self.functions.changed() if name not in found)
        return found

    def rebase(self) -> list[str]:
        """Accept what pytest's configuration, Hypothesis's plugin and the oracle's
        conftests set up before the property is collected (new attributes, settings,
        state, a profile), and return what is not set-up: a function or class of the
        judge replaced since the parent's snapshot (an installed plugin's import, a
        conftest's import of the code under test)."""
        replaced: list[str] = []
        spaces = list(self.spaces)
        fresh: list[Any] = []  # the values of namespaces set up since: their functions too
        for i in self._moved():
            label, ns, keys, values, stateful = spaces[i]
            view = self.views[i]
            if view is not None:
                self.versions[i] = view.value  # before its values are read: a change
            if len(ns) == len(values) and not any(map(is_not, ns.values(), values)):
                continue  # made while they are read moves it again
            if label != _PROFILES:  # a conftest may register and load the oracle's profiles
                for key, then in zip(keys, values, strict=True):
                    now = ns.get(key, _MISSING)
                    if now is not then and not _data(then) and not _judges_own(now) \
                            and not _benign(label, str(key), then, now, False):
                        replaced.append(f"{label}.{key}")
            spaces[i] = (label, ns, tuple(ns.keys()), tuple(ns.values()), stateful)
            fresh.extend(ns.values())
        self.spaces = spaces
        replaced += (n for n in self.functions.rebase(fresh) if n not in replaced)
        getters = []
        for label, get, then in self.getters:
            try:
                now = get()
            except Exception:  # noqa: BLE001
                continue
            if label == _SCANS_LABEL and (len(now) != len(then) or any(map(is_not, now, then))):
                replaced.append(label)  # never set-up: nothing of pytest's changes it
            elif label == _TRACERS_LABEL and any(
                    x is not y and x is not None and not _judges_own(x)
                    for x, y in zip(now, then, strict=False)):
                replaced.append(label)  # set up by code that is not the judge's
            getters.append((label, get, now))
        self.getters = getters
        return replaced


def _judges_own(value: Any) -> bool:
    """Whether ``value``'s code lies in pytest's, pluggy's or Hypothesis's own files (as
    when pytest's legacypath plugin installs its methods at configuration)."""
    func = getattr(value, "__func__", getattr(value, "fget", value))
    code = getattr(func, "__code__", None)
    where = getattr(code, "co_filename", None)
    if not isinstance(where, str):
        return False
    real = _REALPATH(where)
    return any(_under(real, d) for d in _judge_dirs())


def _judge_dirs() -> list[str]:
    dirs = []
    for name in ("_pytest", "pluggy", "hypothesis"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(path, str):
            dirs.append(os.path.dirname(_REALPATH(path)))
    return dirs


def _profile(dv: Any) -> tuple[Any, ...]:
    """The active Hypothesis settings object and its values (lazy caches left out)."""
    value = dv.value
    if value is None:
        return (None,)
    items = [x for k, v in vars(value).items() if not k.startswith("_cached") for x in (k, v)]
    return (value, *items)


_SNAPSHOT: _Integrity | None = None  # the serving parent's, taken before installed plugins load


_REAL: dict[str, str] = {}  # real paths of the installed plugins' files (plugin_files)


def _read_source_url(dist: Any) -> str | None:
    """The local directory a distribution was installed from (PEP 610), if any (read
    once in the serving parent for a distribution of the installation: ``_source_url``)."""
    try:
        text = dist.read_text("direct_url.json")
        url = json.loads(text).get("url", "") if text else ""
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    return _REALPATH(unquote(urlparse(url).path))


def _code_files(pm: Any, plugin: Any) -> set[str]:
    """Where the hook functions of ``plugin`` really are (their code objects' files)."""
    found: set[str] = set()
    try:
        callers = pm.get_hookcallers(plugin) or []
    except Exception:  # noqa: BLE001
        callers = []
    for caller in callers:
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            func = getattr(impl.function, "__func__", impl.function)
            code = getattr(func, "__code__", None)
            name = getattr(code, "co_filename", None)
            if isinstance(name, str):
                found.add(name)
    return found


def _all_code_files(pm: Any) -> dict[int, set[str]]:
    """``_code_files`` of every registered plugin, by ``id``, in one pass over the hooks."""
    found: dict[int, set[str]] = {}
    for caller in list(vars(pm.hook).values()):
        try:
            impls = caller.get_hookimpls()
        except Exception:  # noqa: BLE001 - not a hook caller
            continue
        for impl in impls:
            func = getattr(impl.function, "__func__", impl.function)
            name = getattr(getattr(func, "__code__", None), "co_filename", None)
            if isinstance(name, str):
                found.setdefault(id(impl.plugin), set()).add(name)
    return found


def plugin_files(pm: Any, skip: Any = frozenset()) -> list[str]:
    """Every loaded pytest plugin that may be the project's own code, as real paths:
    plugin modules and hook functions outside the interpreter's installation
    (conftests, ``-p`` modules, editable installs, a plugin object whose class claims
    another module), and, for plugins installed from a local directory
    (``pip install .``), that directory prefixed with ``dist:``.  The parent judges
    which of them lie in the repository outside the oracle.  Plugins whose ``id`` is
    in ``skip`` (listed already) are left out."""
    found: set[str] = set()
    code_files = _all_code_files(pm)
    for _name, plugin in pm.list_name_plugin():
        if plugin is None or isinstance(plugin, (_Plugin, _Hold)) or id(plugin) in skip:
            continue  # ours (this file may lie in a checkout of ballot-guard itself)
        module = plugin if hasattr(plugin, "__file__") and not isinstance(plugin, type) \
            else sys.modules.get(getattr(type(plugin), "__module__", ""))
        files = set(code_files.get(id(plugin), ()))
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            files.add(path)
        for f in files:
            real = _REAL.get(f) or _REALPATH(f)
            if not _installed(real):
                found.add(real)
            elif _KEEPING[0]:
                _REAL[f] = real  # read once in the serving parent, for every run
    try:  # the plugins pytest loaded from entry points, with their distributions
        loaded = pm.list_plugin_distinfo()
    except Exception:  # noqa: BLE001
        loaded = ()
    for plugin, dist in loaded:
        if id(plugin) in skip:
            continue
        where = _source_url(dist)
        if where is not None:
            found.add(f"dist:{where}")
    return sorted(found)


def _hooks(pm: Any) -> dict[str, tuple[Any, ...]]:
    """Every hook's implementations, by identity."""
    out: dict[str, tuple[Any, ...]] = {}
    for name, caller in list(vars(pm.hook).items()):
        try:
            out[name] = tuple(impl.function for impl in caller.get_hookimpls())
        except Exception:  # noqa: BLE001 - not a hook caller
            continue
    return out


def _unittest_skip(item: Any) -> bool:
    """A ``unittest.skip`` decorator on the test method or its class: written in the file."""
    return any(getattr(obj, "__unittest_skip__", False) is True
               for obj in (getattr(item, "obj", None), getattr(item, "cls", None)))


def _from_main(base: set[str]) -> list[str]:
    """Modules imported during the run from the main checkout, not the worktree (--rev)."""
    top, tree = _ROOTS["top"], _ROOTS["tree"]
    if not top or not tree or top == tree:
        return []
    tops = {top, _REALPATH(top)}
    trees = {tree, _REALPATH(tree)}
    found = []
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if name in base or not isinstance(path, str):
            continue
        real = _REALPATH(path)
        if any(_under(real, t) for t in tops) and not any(_under(real, t) for t in trees) \
                and not _installed(real):
            found.append(f"{name} ({real})")
    return sorted(found)


# --- the oracle's own modules hold what their code defined --------------------
#
# Behaviour code runs while the property file is imported (it imports the code under
# test) and while the tests run, in the same process: it can rebind what the oracle's
# modules hold (a test function swapped for one that passes, a reference such as
# ``sorted`` shadowed in the property's globals, a helper of the properties directory
# replaced) without touching a judge module.  So, once the property is collected
# (``_Oracle.take``): every collected test's code, wrapper by wrapper, must lie in the
# oracle, the judge or the interpreter's installation, and a test written in the
# property file must be what pytest compiles it to; the oracle's modules (the property's
# directory, the conftests) may hold nothing under a name their code does not bind, and
# what an import, a literal or a ``def`` binds must be what it gives; their builtins are
# the interpreter's.  From there to the session's end (``_Oracle.changed``) none of it
# may change but the names their functions declare ``global``.

_PYTEST_NAMES = frozenset({"@py_builtins", "@pytest_ar"})  # pytest's assertion rewriting's


class _Bound(NamedTuple):
    """What a module's code binds at its top level (``_bindings``)."""
    names: set[str]       # every global name it binds (``global`` in a function too)
    defs: set[str]        # bound by ``def``
    imports: dict[str, tuple[int, str, str]]  # bound once, by an import: (level, module, attr)
    literals: dict[str, Any]  # bound once, to a literal: its value
    declared: set[str]    # declared ``global`` in a function: the oracle may rebind them
    modules: list[str]    # every module an absolute import names (and ``from m import x``'s m.x)


def _bindings(source: str) -> _Bound | None:
    """What ``source`` binds; None when it cannot tell (a ``*`` import, a syntax error)."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    bound: set[str] = set()
    declared: set[str] = set()
    defs: set[str] = set()
    imports: dict[str, tuple[int, str, str]] = {}
    literals: dict[str, Any] = {}
    twice: set[str] = set()
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        elif isinstance(node, ast.Import):
            modules.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules.extend([node.module, *(f"{node.module}.{a.name}" for a in node.names)])

    def bind(name: str) -> None:
        (twice if name in bound else bound).add(name)

    todo: list[Any] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
            if not isinstance(node, ast.ClassDef):
                defs.add(node.name)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                name = (a.asname or a.name).split(".")[0]
                bind(name)
                if isinstance(node, ast.ImportFrom):
                    imports[name] = (node.level, node.module or "", a.name)
                else:  # ``import a.b`` binds a; ``import a.b as c`` binds a.b
                    imports[name] = (0, a.name if a.asname else name, "")
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                literals[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest)
        todo.extend(ast.iter_child_nodes(node))
    once = bound - twice - declared
    return _Bound(bound | declared, defs, {k: v for k, v in imports.items() if k in once},
                  {k: v for k, v in literals.items() if k in once}, declared,
                  list(dict.fromkeys(modules)))


def _imported(mod: Any, how: tuple[int, str, str]) -> Any:
    """What the import ``how`` of module ``mod`` gives now (``_MISSING`` when the module
    it names is not loaded)."""
    level, name, attr = how
    if level:
        package = (getattr(mod, "__package__", None) or "").split(".")
        if level > 1:
            package = package[:1 - level]
        name = ".".join([p for p in package if p] + ([name] if name else []))
    source = sys.modules.get(name)
    if source is None:
        return _MISSING
    if not attr:
        return source
    got = getattr(source, attr, _MISSING)
    return got if got is not _MISSING else sys.modules.get(f"{name}.{attr}", _MISSING)


def _layers(obj: Any) -> list[Any]:
    """``obj`` and every function it wraps (``__wrapped__``, ``functools.partial``,
    a method's function, Hypothesis's inner test), outermost first."""
    import functools
    out: list[Any] = []
    seen: set[int] = set()
    while obj is not None and id(obj) not in seen and len(out) < 32:
        seen.add(id(obj))
        out.append(obj)
        inner = getattr(getattr(obj, "hypothesis", None), "inner_test", None)
        if inner is None and isinstance(obj, functools.partial):
            inner = obj.func
        if inner is None:
            inner = getattr(obj, "__func__", None)
        if inner is None:
            inner = getattr(obj, "__dict__", {}).get("__wrapped__")
        obj = inner
    return out


def _compiled(path: str, config: Any, rewritten: bool) -> dict[tuple[str, int], Any] | None:
    """Every function's code in the file at ``path`` as it was compiled for the run: by
    pytest, its assertions rewritten, or (``rewritten`` False: ``--assert=plain``,
    ``PYTEST_DONT_REWRITE``) as the import system compiles a source file; by (name,
    first line).  None where it cannot tell."""
    try:
        if rewritten:
            from pathlib import Path

            from _pytest.assertion.rewrite import _rewrite_test
            _, top = _rewrite_test(Path(path), config)
        else:
            with open(path, "rb") as f:
                top = compile(f.read(), path, "exec", dont_inherit=True)
    except Exception:  # noqa: BLE001 - another pytest, an unreadable file: not compared
        return None
    found: dict[tuple[str, int], Any] = {}
    todo = [top]
    while todo:
        code = todo.pop()
        found.setdefault((code.co_name, code.co_firstlineno), code)
        todo.extend(c for c in code.co_consts if isinstance(c, CodeType))
    return found


def _code_file_of(mod: Any) -> str | None:
    path = getattr(mod, "__file__", None)
    return _REALPATH(path) if isinstance(path, str) else None


def _real_builtins(value: Any) -> bool:
    """Whether ``value`` is the builtins module or its dictionary (a module's or a
    function's ``__builtins__``: replaced, ``sorted`` could mean anything there)."""
    return value is _BUILTINS or value is _BUILTINS.__dict__


_FROZEN: dict[str, dict[tuple[str, int], Any]] = {}  # frozen module -> its code, by place


def _frozen_codes(name: str) -> dict[tuple[str, int], Any]:
    if name not in _FROZEN:
        found: dict[tuple[str, int], Any] = {}
        try:
            import _imp
            todo = [_imp.get_frozen_object(name)] if _imp.is_frozen(name) else []
        except Exception:  # noqa: BLE001 - not a frozen module: a made-up name
            todo = []
        while todo:
            c = todo.pop()
            found.setdefault((c.co_name, c.co_firstlineno), c)
            todo.extend(x for x in c.co_consts if isinstance(x, CodeType))
        _FROZEN[name] = found
    return _FROZEN[name]


def _frozen_code(func: Any) -> bool:
    """Whether ``func``'s code is a frozen module's own (``<frozen importlib._bootstrap>``,
    module ``_frozen_importlib``: the interpreter's, though no file holds it): the same
    as that module's code in the interpreter."""
    code = getattr(func, "__code__", None)
    where = getattr(code, "co_filename", "")
    if code is None or not (isinstance(where, str) and where.startswith("<frozen ")
                            and where.endswith(">")):
        return False
    place = (code.co_name, code.co_firstlineno)
    return any(_frozen_codes(name).get(place) == code
               for name in (where[len("<frozen "):-1], getattr(func, "__module__", None))
               if isinstance(name, str))


_ENV: list[tuple[str, ...]] = []  # the environment's own directories (``_environment``)


def _environment(real: str) -> bool:
    """Whether ``real`` is the environment's code: the interpreter's installation, or a
    directory outside the checkout that its ``.pth`` files put on the path at start
    (taken from the path as site made it, before anything of the project ran)."""
    if _installed(real):
        return True
    if not _ENV:  # once, in the run's process: _HELD is the path as it was at start
        _ENV.append(tuple(dict.fromkeys(_REALPATH(p) for p in _HELD if isinstance(p, str)
                                        and p and os.path.isdir(p) and not _in_checkout(p))))
    return any(_under(real, d) for d in _ENV[0])


def _code_file(obj: Any) -> str | None:
    code = getattr(obj, "__code__", None)
    where = getattr(code, "co_filename", None)
    return _REALPATH(where) if isinstance(where, str) else None


# The modules of the interpreter's installation that the oracle imports by name
# (``math``, ``statistics``, ``random``, an installed library) hold its references as
# ``builtins`` holds ``sorted``: ``math.isclose`` replaced makes every comparison pass.
# What of their namespaces is their meaning is compared by identity from the point the
# judge first sees them (for the standard library's, just before the property is
# imported, loaded then where they are not yet), and each must stay the module under
# its name; a function there whose code is not the installation's, the judge's or the
# oracle's is named wherever it came from.
_SCALARS = (int, float, complex, str, bytes, bool, type(None))
_CONTAINERS = (list, dict, set, bytearray)
_NOT_LOADED_EARLY = frozenset({"antigravity", "this", "__hello__", "__phello__"})


# The standard library's public values that are state, not meaning: set by a call
# (``time.tzset()``, ``tempfile.gettempdir()``) or meant to be set by a program.
_STDLIB_STATE = frozenset({("time", "timezone"), ("time", "altzone"), ("time", "daylight"),
                           ("tempfile", "tempdir"), ("tempfile", "template")})
_CONSTANTS = (int, float, complex, str, bytes)


def _meaning(key: str, value: Any, module: str) -> bool:
    """A module's function, class, submodule or constant: a name in capitals, or, in
    the standard library, any public number or text (``math.pi``, ``string.digits``:
    a flag is a bool or None, and is state, as ``_STDLIB_STATE`` is); an installed
    library's lower-case values may be its state.  Not the state a module keeps in
    objects (a list, a dict, an instance, a list's bound ``append`` kept as a hook, as
    ``warnings`` keeps one while pytest records)."""
    if type(value) is ModuleType:
        return True
    if isinstance(value, _SCALARS):
        return key.isupper() or (
            type(value) in _CONSTANTS and not key.startswith("_")
            and module.partition(".")[0] in getattr(sys, "stdlib_module_names", ())
            and (module, key) not in _STDLIB_STATE)
    return callable(value) and type(getattr(value, "__self__", None)) not in _CONTAINERS


def _file_bindings(path: str) -> _Bound | None:
    try:
        with open(path, encoding="utf-8") as f:
            return _bindings(f.read())
    except (OSError, UnicodeDecodeError):
        return None


class _Oracle:
    """The oracle's modules and the collected tests as the property's collection left
    them: what the check at the session's end compares with."""

    def __init__(self, target: str, top: str) -> None:
        self.dir = os.path.dirname(_REALPATH(target))
        self.top = _REALPATH(top)
        self.spaces: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.functions = _Functions()  # the collected tests, wrapper by wrapper
        self.refs: list[tuple[str, Any, dict[str, Any]]] = []  # _refer: module, meaning
        self.referred: set[str] = set()
        self.forged: list[str] = []  # references whose code is not where it may be

    def _ours(self, real: str | None) -> bool:
        return real is not None and (_under(real, self.dir) or (
            os.path.basename(real) == "conftest.py" and _under(real, self.top)))

    def _allowed(self, obj: Any) -> bool:
        """Whether code of ``obj`` may stand in the oracle: the oracle's own, the judge's,
        or the interpreter's installation's (a decorator of the standard library or of an
        installed package); not the checkout's behaviour code, nor code made at run time
        (``exec``: no file).  A callable object is judged by its class's ``__call__``."""
        if getattr(obj, "__code__", None) is None:
            call = next((c.__dict__["__call__"] for c in type(obj).__mro__
                         if "__call__" in c.__dict__), None)
            if type(call) is not FunctionType:
                return True  # a builtin's, a C type's: nothing of the project
            obj = call
        if _frozen_code(obj):
            return True
        real = _code_file(obj)
        return real is not None and os.path.isabs(real) and (
            self._ours(real) or _environment(real) or _judges_own(obj))

    def early(self, target: str, conftests: list[_Bound] | None = None) -> None:
        """Before the property is imported: the installed modules its file and the
        loaded conftest files import, as they are now (the standard library's loaded
        first where they are not yet: before any project code, that is the
        installation's code alone).  ``conftests``: their bindings, read already (by a
        session template, whose runs load no other conftest before this point)."""
        names = [n for n in [_file_bindings(target)] if n is not None]
        names += self.conftests() if conftests is None else conftests
        self._refer([m for n in names for m in n.modules], load=True)

    def conftests(self) -> list[_Bound]:
        """What each loaded conftest file of the oracle binds."""
        found = []
        for name, mod in list(sys.modules.items()):
            if name.rpartition(".")[2] != "conftest":  # how pytest names a conftest module
                continue
            real = _code_file_of(mod)
            if real is not None and os.path.basename(real) == "conftest.py" and self._ours(real):
                got = _file_bindings(real)
                if got is not None:
                    found.append(got)
        return found

    def _refer(self, modules: list[str], load: bool = False) -> None:
        """Watch each of ``modules`` that the installation provides (not the judge's
        modules, watched as the judge, nor ``sys``, nor the checkout's)."""
        import importlib
        import importlib.util
        for name in modules:
            if name in self.referred or _judge_module(name) or name == "sys":
                continue
            mod = sys.modules.get(name)
            top = name.partition(".")[0]
            if mod is None and load and top in getattr(sys, "stdlib_module_names", ()) \
                    and top not in _NOT_LOADED_EARLY:
                try:
                    spec = importlib.util.find_spec(top)
                    origin = getattr(spec, "origin", None)
                    if spec is not None and (origin in ("built-in", "frozen") or (
                            isinstance(origin, str) and _installed(_REALPATH(origin)))):
                        mod = importlib.import_module(name)
                except Exception:  # noqa: BLE001 - not loadable: the property fails on it
                    mod = None
            ns = getattr(mod, "__dict__", None)
            real = _code_file_of(mod)
            if not isinstance(ns, dict) or (real is not None and not _installed(real)):
                continue
            self.referred.add(name)
            then = {k: v for k, v in list(ns.items())
                    if isinstance(k, str) and _meaning(k, v, name)}
            self.refs.append((name, mod, then))
            for key, value in then.items():
                layers = _layers(value) if getattr(value, "__code__", None) is not None \
                    else []
                if not all(map(self._allowed, layers)):
                    self.forged.append(f"{name}.{key} (code of "
                                       f"{_code_file(layers[0]) or 'no file'})")

    def _references(self) -> list[str]:
        """The references forged when first seen, and those rebound since."""
        found = list(self.forged)
        for name, mod, then in self.refs:
            if sys.modules.get(name) is not mod:
                found.append(f"{name} (another module under its name, which the oracle "
                             "imports)")
            ns = mod.__dict__
            for key, was in then.items():
                if ns.get(key, _MISSING) is not was:
                    found.append(f"{name}.{key} (of {name}, which the oracle imports)")
        return found

    def take(self, items: list[Any], base: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """What is wrong with the collected tests and the oracle's modules now (modules
        in ``base``, loaded before the run, are the judge's: never the oracle's)."""
        found: list[str] = []
        compiled: dict[tuple[str, bool], dict[tuple[str, int], Any] | None] = {}
        for item in items:
            obj = getattr(item, "obj", None) if hasattr(item, "function") else None
            self.functions.add(_layers(obj))  # their code, defaults, closures: kept
            for layer in _layers(obj):
                if not self._allowed(layer):
                    found.append(f"the test {item.nodeid} (its code is in "
                                 f"{_code_file(layer)}, not the oracle's)")
                    break
                real = _code_file(layer)
                home = getattr(item, "module", None)
                if real is not None and real == _code_file_of(home) and \
                        not hasattr(layer, "hypothesis"):  # Hypothesis's wrapper names the
                    # test's file and line as its own (not compared)
                    how = (real, "@py_builtins" in getattr(home, "__dict__", {}))  # rewritten
                    if how not in compiled:
                        compiled[how] = _compiled(real, getattr(item, "config", None), how[1])
                    fresh = compiled[how]
                    code = layer.__code__
                    if fresh is not None and fresh.get((code.co_name, code.co_firstlineno)) \
                            != code:
                        found.append(f"the test {item.nodeid} (its code is not what "
                                     f"{real} compiles to)")
                        break
                if not _real_builtins(getattr(layer, "__builtins__", _BUILTINS)):
                    found.append(f"the test {item.nodeid} (other builtins than the "
                                 "interpreter's)")
                    break
        for name, mod in [(n, m) for n, m in list(sys.modules.items()) if n not in base]:
            ns = getattr(mod, "__dict__", None)
            real = _code_file_of(mod)
            if not isinstance(ns, dict) or not self._ours(real) or not str(real).endswith(".py"):
                continue
            try:
                with open(str(real), encoding="utf-8") as f:
                    names = _bindings(f.read())
            except (OSError, UnicodeDecodeError):
                names = None
            declared: set[str] = set()
            if names is not None:
                self._refer(names.modules)
            if not _real_builtins(ns.get("__builtins__", _BUILTINS)):
                found.append(f"{name}.__builtins__ (not the interpreter's)")
            if names is not None:
                declared = names.declared
                for key, value in list(ns.items()):
                    if not isinstance(key, str) or key in _PYTEST_NAMES or (
                            key.startswith("__") and key.endswith("__")) or (
                            type(value) is ModuleType and value.__name__ == f"{name}.{key}"):
                        continue  # a dunder, or a submodule the import system set here
                    if key not in names.names:
                        found.append(f"{name}.{key} (put there, not bound by {real})")
                    elif key in names.imports:
                        got = _imported(mod, names.imports[key])
                        if got is not _MISSING and got is not value:
                            found.append(f"{name}.{key} (not what its import gives)")
                    elif key in names.literals:
                        then = names.literals[key]
                        if type(value) is not type(then) or value != then:
                            found.append(f"{name}.{key} (not the value its code gives)")
                    elif key in names.defs:
                        layers = _layers(value)
                        if not all(map(self._allowed, layers)):
                            found.append(f"{name}.{key} (code of "
                                         f"{_code_file(layers[0]) or 'no file'})")
            self.spaces.append((name, ns, {k: v for k, v in ns.items() if k not in declared}))
        self.functions._take()
        return found + [n for n in self._references() if n not in found]

    def changed(self) -> list[str]:
        """The collected tests whose code, defaults or closure changed since ``take``;
        the names of the oracle's modules rebound or removed (those their functions
        declare ``global`` aside), and functions, classes or modules added under new
        ones."""
        found = [f"the test function {n}" for n in self.functions.changed()]
        for name, ns, then in self.spaces:
            now = {k: v for k, v in ns.items() if k in then or not _data(v)}
            if len(now) == len(then) and all(now.get(k, _MISSING) is v for k, v in then.items()):
                continue
            for key in now.keys() | then.keys():
                if now.get(key, _MISSING) is not then.get(key, _MISSING):
                    found.append(f"{name}.{key}")
        return found + [n for n in self._references() if n not in found]


class _Plugin:
    """Our pytest plugin: isolate Hypothesis's database, count the outcomes, check the
    judge's integrity, and report through the references taken at start."""

    def __init__(self, home: str, result: str, hold: _Hold,
                 integrity: _Integrity | None = None, key: bytes = b"") -> None:
        self.home = home
        self.result = result
        self.key = key  # the result's signing key (``signed``)
        self.hold = hold
        self.target = os.path.abspath(hold.path)  # the property's file
        self.integrity = integrity
        self.base = set(sys.modules)
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collected": 0,
                       "dodged": 0}
        self.ids: set[str] = set()     # the collected items
        self.done: set[str] = set()    # items with an outcome: a call report, or a setup skip
        self.marked: set[str] = set()  # items whose skip or xfail the property file declares
        self.replaced: list[str] = []
        self.registered: list[str] = []
        self.plugins_then: dict[int, Any] | None = None
        self.plugin_list: list[str] | None = None  # plugin_files when collection began
        self.hooks_then: dict[str, tuple[Any, ...]] = {}
        self.config: Any = None
        self.late: list[str] = []  # judge modules first imported in the run (unwatched)
        self.oracle = _Oracle(hold.path, hold.top or os.getcwd())
        self.rebound: list[str] = []  # what of the oracle's modules is not their code's
        self.rebased = False  # the integrity rebase made already (by a session template)
        self.conftests: list[_Bound] | None = None  # their bindings, read by a template

    def pytest_configure(self, config: Any) -> None:
        # Runs after Hypothesis's own pytest_configure (trylast), so a
        # --hypothesis-profile or a conftest's profile is kept, minus its database.
        self.config = config
        if "hypothesis" not in sys.modules:
            return
        try:
            from hypothesis import configuration, settings
            configuration.set_hypothesis_home_dir(self.home)
            settings.register_profile("ballot-guard", parent=settings.default, database=None)
            settings.load_profile("ballot-guard")
        except Exception:  # noqa: BLE001 - an old Hypothesis: the fresh home dir suffices
            pass

    def pytest_ignore_collect(self, collection_path: Any) -> bool | None:
        """Only the property's file is collected, and the directories on the way to it:
        pytest otherwise makes a node of every file beside it, in every run (with 300
        properties, 56 ms more CPU a run than with 20, measured).  What pytest reads in
        those directories (``__init__.py``, ``conftest.py``) and the property itself
        are left to pytest's own rules, ``collect_ignore`` and ``--ignore`` included."""
        path = str(collection_path)
        target = self.target
        if path == target or target.startswith(path.rstrip(os.sep) + os.sep) \
                or os.path.basename(path) in ("__init__.py", "conftest.py"):
            return None
        return True

    def pytest_collection(self, session: Any) -> None:
        """Just before the property is imported: what the judge is from here on."""
        if self.integrity is not None and not self.rebased:
            self.replaced.extend(self.integrity.rebase())
            self.hold.warm = _nothing  # the rebase read all of it in this process
        self.oracle.early(self.target, self.conftests)
        if self.plugins_then is None:  # not taken already, by a session template
            self.take_plugins(session.config.pluginmanager)

    def take_plugins(self, pm: Any) -> None:
        """The plugins and hook implementations before the run, which the checks after
        it compare with, and the plugins' files (at its end, only those added since)."""
        self.plugins_then = {id(p): p for p in pm.get_plugins()}
        self.hooks_then = _hooks(pm)
        try:
            self.plugin_list = plugin_files(pm)
        except Exception as exc:  # noqa: BLE001 - reported, judged by the parent
            self.plugin_list = [f"?{type(exc).__name__}: {exc}"]

    def _check(self, session: Any) -> None:
        if self.integrity is not None:
            for name in self.integrity.changed():
                if name not in self.replaced:
                    self.replaced.append(name)
            watched = self.integrity.modules
            self.late = [m for m in _LOADED_IF_NAMED if m not in watched and any(
                n == m or n.startswith(m + ".") for n in list(sys.modules))]
        if self.plugins_then is None:
            return
        pm = session.config.pluginmanager
        for plugin in pm.get_plugins():
            if id(plugin) not in self.plugins_then:
                name = pm.get_name(plugin) or repr(plugin)
                files = sorted(_REALPATH(f) for f in _code_files(pm, plugin))
                what = f"{name} ({', '.join(files)})" if files else str(name)
                if what not in self.registered:
                    self.registered.append(what)
        now = _hooks(pm)
        for name, impls in now.items():
            then = self.hooks_then.get(name, ())
            if len(impls) != len(then) or any(a is not b for a, b in zip(impls, then, strict=True)):
                label = f"the implementations of hook {name}"
                if label not in self.replaced:
                    self.replaced.append(label)

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        self.counts["collected"] = len(items)
        for item in items:  # a skip or xfail written as a mark is the oracle's own choice
            self.ids.add(item.nodeid)
            if any(item.get_closest_marker(name) is not None
                   for name in ("skip", "skipif", "xfail")) or _unittest_skip(item):
                self.marked.add(item.nodeid)

    def pytest_collection_finish(self, session: Any) -> None:
        self.rebound = self.oracle.take(list(session.items), self.base)
        self._check(session)  # the property and the code under test are imported now

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call":
            key = "passed" if report.passed else "failed" if report.failed else "skipped"
            self.counts[key] += 1
            self.done.add(report.nodeid)
        elif report.failed:
            self.counts["errors"] += 1
            self.done.add(report.nodeid)
        elif report.skipped and report.when == "setup":
            self.counts["skipped"] += 1
            self.done.add(report.nodeid)
        if report.skipped and report.nodeid not in self.marked:
            # pytest.skip() or pytest.xfail() raised while running (from a fixture or the
            # code under test), not declared by a mark: the check did not happen
            self.counts["dodged"] += 1

    def pytest_sessionfinish(self, session: Any) -> None:
        self._check(session)
        self.rebound += (n for n in self.oracle.changed() if n not in self.rebound)
        data: dict[str, Any] = dict(self.counts)
        try:
            listed = self.plugin_list is not None and self.plugins_then is not None
            data["plugins"] = sorted({*(self.plugin_list or ()), *plugin_files(
                session.config.pluginmanager, self.plugins_then if listed else ())})
        except Exception as exc:  # noqa: BLE001 - reported, judged by the parent
            data["plugins"] = [f"?{type(exc).__name__}: {exc}"]
        data["early"] = self.hold.early
        data["complete"] = self.ids <= self.done
        data["replaced"] = self.replaced
        data["late"] = self.late
        data["registered"] = self.registered
        data["rebound"] = self.rebound
        data["from_main"] = _from_main(self.base)
        data["unrepointable"] = list(_ROOTS["unrepointable"])
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(tr, "stats", None)
        if isinstance(stats, dict):
            data["stats"] = {str(k): len(v) for k, v in stats.items()
                             if k and isinstance(v, list)}
        self._report(data)

    def _report(self, data: dict[str, Any]) -> None:
        """The result file: its signature (``signed``), a newline, the counts' JSON."""
        tmp = self.result + ".tmp"
        fd = _OPEN(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            _WRITE(fd, signed(_DUMPS(data).encode(), self.key))
        finally:
            _CLOSE(fd)
        _REPLACE(tmp, self.result)


def signed(payload: bytes, key: bytes) -> bytes:
    """``payload`` with its keyed BLAKE2b (hex) on a line before it.

    The key is the gate's, made anew for each run and given to the run only in its
    request (never in its environment, its arguments or a file): where the run's
    result lies can be found (beside its TMPDIR), but code under test that rewrites
    it, or writes one before the judge does and exits, cannot sign it without digging
    the key out of the judge's memory (frames, the garbage collector, ``/proc``:
    what scope rule 5 flags)."""
    return _SIGN(payload, key=key, digest_size=32).hexdigest().encode() + b"\n" + payload


def _nothing() -> None:
    return None


class _Hold:
    """Holds a prepared run before anything of the project executes.

    A prepared child parses pytest's options and loads the installed plugins
    while the previous run is still going, then waits here for "go" before
    conftest files are imported; when no conftest.py lies on the property's
    path (and pytest-xdist is not distributing), it goes on through
    ``pytest_configure`` and ``pytest_sessionstart`` and waits just before
    collection imports the property.  It also lists project modules imported
    before that point (a ``-p`` plugin of the project in ``addopts``, a plugin
    that loads the project in its configure hook): if there are any, the
    parent stops preparing runs ahead, so no project code ever overlaps
    another run.
    """

    def __init__(self, go_fd: int | None, path: str, top: str | None = None,
                 ready_fd: int | None = None) -> None:
        self.go_fd = go_fd
        self.ready_fd = ready_fd
        self.path = path
        self.top = top
        self.defer = False
        self.base = set(sys.modules)
        self.early: list[str] = []
        self.warm: Callable[[], object] = _nothing  # the judge's work before the hold

    def _early(self) -> list[str]:
        """Modules of the project imported since this hold was made."""
        top = _REALPATH(os.getcwd()) + os.sep
        env = _REALPATH(sys.prefix) + os.sep
        base = self.base
        early = []
        for name in [n for n in sys.modules if n not in base]:  # the modules not in base
            path = getattr(sys.modules.get(name), "__file__", None)  # are left untouched
            if not isinstance(path, str):
                continue
            real = _REALPATH(path)
            if real.startswith(top) and not real.startswith(env):
                early.append(name)
        return early

    def wait(self) -> None:
        if self.go_fd is None:
            return
        fd, self.go_fd = self.go_fd, None
        self.early.extend(self._early())
        if self.ready_fd is not None:  # held: whether project code ran before this point,
            self.warm()
            ready, self.ready_fd = self.ready_fd, None  # and the CPU its preparation took
            spent = os.times()
            try:
                os.write(ready, b"%s %.4f" % (b"1" if self.early else b"0",
                                              spent.user + spent.system))
            except OSError:
                pass
            os.close(ready)
        go = os.read(fd, 1)
        os.close(fd)
        if go != b"g":  # cancelled: the gate is gone or stopped early; run nothing
            _EXIT(CRASH)

    def _no_conftest(self) -> bool:
        return _no_conftest(self.path, self.top)

    def pytest_load_initial_conftests(self, early_config: Any) -> None:
        if self.go_fd is not None and self._no_conftest() and not _distributing(early_config):
            self.defer = True
            return
        self.wait()

    def pytest_configure(self) -> None:
        if not self.defer:
            self.wait()

    def pytest_sessionstart(self) -> None:
        if not self.defer:
            self.wait()

    def pytest_collection(self) -> None:
        self.wait()


def _no_conftest(path: str, top: str | None) -> bool:
    """Whether no conftest.py lies on the way from ``path`` up to ``top``."""
    d = os.path.dirname(os.path.abspath(path))
    stop = os.path.abspath(top) if top else None
    while True:
        if os.path.lexists(os.path.join(d, "conftest.py")):
            return False
        parent = os.path.dirname(d)
        if parent == d or d == stop:
            return True
        d = parent


def _mark(pytest: Any) -> None:
    if hasattr(_Plugin.pytest_configure, "pytest_impl"):
        return
    last, first = pytest.hookimpl(trylast=True), pytest.hookimpl(tryfirst=True)
    _Plugin.pytest_configure = last(_Plugin.pytest_configure)  # type: ignore[method-assign]
    _Plugin.pytest_ignore_collect = first(  # type: ignore[method-assign]
        _Plugin.pytest_ignore_collect)
    # first, before the hold (registered later, called earlier): still nothing of the
    # property has run, and a prepared run does this before it is released
    _Plugin.pytest_collection = first(_Plugin.pytest_collection)  # type: ignore[method-assign]
    for name in ("pytest_load_initial_conftests", "pytest_configure", "pytest_sessionstart",
                 "pytest_collection"):
        setattr(_Hold, name, first(getattr(_Hold, name)))
    # first of all (registered last): a template forks its runs before the judge's plugin
    # takes what the judge is
    _Fork.pytest_collection = first(_Fork.pytest_collection)  # type: ignore[method-assign]


def _config_file(prop: str, top: str) -> tuple[str, str]:
    """(config file, its directory) as pytest would find them from the property, but
    never above the checkout: ``os.devnull`` and the checkout root when none is there."""
    from pathlib import Path

    from _pytest.config import findpaths

    names = list(getattr(findpaths, "CONFIG_LOADERS_BY_NAME", None) or
                 ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"))
    root = Path(top).absolute()
    start = Path(prop).absolute().parent
    pyproject: Path | None = None
    for base in (start, *start.parents):
        for name in names:
            p = base / name
            if p.is_file():
                if name == "pyproject.toml" and pyproject is None:
                    pyproject = p
                if findpaths.load_config_dict_from_file(p) is not None:
                    return str(p), str(base)
        if base == root or root not in base.parents:
            break
    if pyproject is not None:
        return str(pyproject), str(pyproject.parent)
    return os.devnull, str(root)


def _confined(args: list[str], top: str) -> list[str]:
    """pytest's rootdir, config file and conftest search kept inside the checkout."""
    config, base = _config_file(args[0], top)
    return [args[0], "-c", config, f"--rootdir={base}", f"--confcutdir={base}", *args[1:]]


def _private(req: RunRequest) -> None:
    """This run's own empty TMPDIR, HOME and bytecode folder (removed after it)."""
    for key in ("tmp", "home_dir", "pycache"):
        if req.get(key):
            os.makedirs(req[key], exist_ok=True)
    if req.get("tmp"):
        for name in ("TMPDIR", "TEMP", "TMP"):
            os.environ[name] = req["tmp"]
        import tempfile
        tempfile.tempdir = None
    if req.get("home_dir"):
        os.environ["HOME"] = req["home_dir"]
    if req.get("pycache"):
        sys.pycache_prefix = req["pycache"]
        os.environ["PYTHONPYCACHEPREFIX"] = req["pycache"]
        sys.dont_write_bytecode = True


def _hypothesis_home(home: str) -> None:
    """The run's own (empty) Hypothesis home."""
    os.makedirs(home, exist_ok=True)
    if "hypothesis" in sys.modules:
        try:
            from hypothesis import configuration
            configuration.set_hypothesis_home_dir(home)
        except Exception:  # noqa: BLE001
            pass


def _run(req: RunRequest, go_fd: int | None = None, ready_fd: int | None = None) -> int:
    """One pytest session in this process; its exit code."""
    _private(req)
    top = _ROOTS["tree"] or os.getcwd()
    hold = _Hold(go_fd, req["args"][0], top, ready_fd)
    _hypothesis_home(req["home"])
    import pytest

    _mark(pytest)
    plugin = _Plugin(req["home"], req["result"], hold, _SNAPSHOT or _Integrity.take(),
                     bytes.fromhex(req.pop("key", "")))
    if plugin.integrity is not None:
        # A fresh copy of the parent copies each page of the snapshot on its first read
        # (reading an object writes its reference count): 10-20 ms, measured, in a
        # forked child.  A run prepared ahead reads it once while it waits, so that the
        # checks inside the run do not pay that.
        hold.warm = plugin.integrity.changed
    code = _main(pytest, _confined(list(req["args"]), top), [hold, plugin])
    return int(code)


# --- the fixtures of the judge's plugins, found once -----------------------------
#
# Each run's pytest session starts by looking at every attribute of every plugin
# for fixture definitions (``FixtureManager.parsefactories``): about 2,300 names a
# run, 25 ms of a trivial run's CPU, measured, and the same answer every time for
# the judge's own plugins (pytest's modules, the installed plugins' modules, the
# classes of pytest's per-session plugins).  The serving parent looks once, on
# each of those holders as it is before any run, and records what pytest would
# register; in a run, a holder found here gets the same registrations, in the same
# order, without the search.  Anything else (a conftest, a plugin of the project,
# an object whose class has fixtures, another pytest's call) is searched as
# before.  What was found is an integrity item of its own: a change to it, at any
# point of a run, is named as a replacement of the judge.

# id of the holder (a module or a class) -> (the holder, the registrations pytest made)
_SCANS: dict[int, tuple[Any, tuple[tuple[tuple[str, Any], ...], ...]]] = {}
_SCANS_LABEL = "pytest's fixture definitions of the judge's plugins"
# pytest's plugins made anew in every session (objects, recorded by their class, which
# holds no fixture; and LegacyTmpdirPlugin, a class registered as itself)
_SESSION_PLUGINS = (
    ("_pytest.terminal", "TerminalReporter"), ("_pytest.capture", "CaptureManager"),
    ("_pytest.main", "Session"), ("_pytest.logging", "LoggingPlugin"),
    ("_pytest.fixtures", "FixtureManager"), ("_pytest.legacypath", "LegacyTmpdirPlugin"))


def _scans_flat() -> tuple[Any, ...]:
    return tuple(x for entry in _SCANS.values() for x in entry)


def _scanned(parse: Callable[..., Any]) -> Callable[..., Any]:
    """``FixtureManager.parsefactories``, which takes a holder recorded in ``_SCANS``
    from there."""
    def parsefactories(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and len(kwargs) == 2 and "holder" in kwargs and "node" in kwargs:
            holder = kwargs["holder"]
            key = holder if isinstance(holder, (type, ModuleType)) else type(holder)
            entry = _SCANS.get(id(key))  # by identity: no hash or __eq__ of anyone's runs
            found = entry[1] if entry is not None and entry[0] is key else None
            if found is not None and (key is holder or not found):
                for pairs in found:
                    self._register_fixture(**dict(pairs), node=kwargs["node"])
                return None
        return parse(self, *args, **kwargs)

    parsefactories.__doc__ = parse.__doc__
    parsefactories.__qualname__ = getattr(parse, "__qualname__", "parsefactories")
    return parsefactories


_PARSE: list[Callable[..., Any]] = []  # pytest's own parsefactories, once wrapped


def _scan_wrap() -> None:
    """Put ``_scanned`` in place (before the snapshot: it is part of the judge)."""
    fixtures = sys.modules.get("_pytest.fixtures")
    manager = getattr(fixtures, "FixtureManager", None)
    parse = getattr(manager, "parsefactories", None)
    if manager is None or not callable(parse) or not hasattr(manager, "_register_fixture"):
        return
    try:
        import inspect
        if "holder" not in inspect.signature(parse).parameters:
            return  # another pytest: every run searches, as before
    except (TypeError, ValueError):
        return
    manager.parsefactories = _scanned(parse)
    _PARSE.append(parse)


def _scan_once(pm: Any, modules: list[str]) -> None:
    """Record what pytest registers for each of the judge's plugins (those the
    template's plugin manager holds, the installed plugins' modules in ``modules``,
    the classes of ``_SESSION_PLUGINS``), as it is now."""
    manager = getattr(sys.modules.get("_pytest.fixtures"), "FixtureManager", None)
    if manager is None or not _PARSE:
        return  # not wrapped: nothing to record for
    original = _PARSE[0]
    holders: list[Any] = []
    for plugin in (pm.get_plugins() if pm is not None else ()):
        holders.append(plugin if isinstance(plugin, (type, ModuleType)) else type(plugin))
    for name in modules:
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and _installed(os.path.abspath(path)):
            holders.append(mod)
    for mod_name, cls_name in _SESSION_PLUGINS:
        holders.append(getattr(sys.modules.get(mod_name), cls_name, None))
    holders += [_Plugin, _Hold]
    import warnings
    node = object()
    for holder in holders:
        if holder is None or id(holder) in _SCANS:
            continue
        calls: list[dict[str, Any]] = []
        rec = object.__new__(manager)

        def register(*a: Any, _calls: list[dict[str, Any]] = calls, **kw: Any) -> None:
            if a:
                raise TypeError("positional")
            _calls.append(kw)

        rec._register_fixture = register
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            try:
                original(rec, holder=holder, node=node)
            except Exception:  # noqa: BLE001 - left for each run to search
                continue
        if warned or set(vars(rec)) != {"_register_fixture"} \
                or any(kw.get("node") is not node for kw in calls):
            continue
        _SCANS[id(holder)] = (holder, tuple(tuple((k, v) for k, v in kw.items() if k != "node")
                                            for kw in calls))


# --- pytest's first step, done once in the serving parent -----------------------
#
# ``pytest.main`` starts with ``get_config``: a plugin manager, every built-in
# plugin registered and its options declared; the same for every run, and about a
# tenth of a trivial run's CPU.  The serving parent does it once (``_template``),
# for the ``-p no:...`` options every run passes (all that ``get_config`` reads of
# the arguments); each child, a copy, takes that Config over as its own in place
# of a new one, with its own invocation parameters, and pytest goes on exactly as
# in ``pytest.main``.  Nothing of the project takes part in it (no argument but
# those options, no file, no conftest, no installed plugin: those load later, in
# the run); a run whose options differ makes its own, as before.

_TEMPLATE: Any = None   # the parent's pytest Config, before any run
# the -p options it was made for (runner.pytest_args)
_TEMPLATE_P: tuple[str, ...] = ("no:cacheprovider",)
_UNLOADED_P = ("no:hypothesispytest",)  # and where Hypothesis is not loaded (HYPOTHESIS_PLUGIN)
_PROG = "pytest.main()"  # what pytest.main() names the program


def _p_options(args: list[str]) -> tuple[str, ...]:
    """The ``-p`` values of ``args``, as pytest's ``consider_preparse`` reads them."""
    out: list[str] = []
    i = 0
    while i < len(args):
        opt = args[i]
        i += 1
        if opt == "-p":
            if i < len(args):
                out.append(args[i].strip())
            i += 1
        elif opt.startswith("-p"):
            out.append(opt[2:].strip())
    return tuple(out)


def _template(hypothesis: bool = True) -> None:
    global _TEMPLATE, _TEMPLATE_P  # noqa: PLW0603 - made once, in the serving parent
    if not hypothesis:
        _TEMPLATE_P = (*_TEMPLATE_P, *_UNLOADED_P)
    try:
        from _pytest.config import get_config

        _TEMPLATE = get_config([x for p in _TEMPLATE_P for x in ("-p", p)], prog=_PROG)
    except Exception:  # noqa: BLE001 - every run makes its own
        _TEMPLATE = None


def _main(pytest: Any, args: list[str], plugins: list[Any]) -> Any:
    """``pytest.main(args, plugins=plugins)``, its first step taken from the template.

    ``get_config`` is replaced only until pytest calls it, once, right at the start,
    long before anything of the project runs (and before the integrity check's
    rebase): the judge's machinery is as it was for the rest of the run."""
    global _TEMPLATE
    template, _TEMPLATE = _TEMPLATE, None
    cfg: Any = sys.modules.get("_pytest.config")
    if template is None or cfg is None or _p_options(args) != _TEMPLATE_P:
        return pytest.main(args, plugins=plugins)
    original = cfg.get_config

    def get_config(a: Any = None, p: Any = None, *, prog: Any = None) -> Any:
        cfg.get_config = original
        if a is not args or prog != _PROG:
            return original(a, p, prog=prog)
        from pathlib import Path

        template.invocation_params = cfg.Config.InvocationParams(args=a, plugins=p,
                                                                 dir=Path.cwd())
        return template

    cfg.get_config = get_config
    try:
        return pytest.main(args, plugins=plugins)
    finally:
        cfg.get_config = original


def _redirect(log: str | int) -> None:
    """0 reads nothing; 1 and 2 write to ``log`` (a path, or an open descriptor)."""
    fd = log if isinstance(log, int) else \
        os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)


def _exit_code(body: Callable[[], int]) -> int:
    """``body()``, or the exit code a SystemExit asks for, or CRASH (its traceback
    printed) for anything else: never falls back into the caller's loop."""
    try:
        return body()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else CRASH
    except BaseException:  # noqa: BLE001 - report as a crash
        try:
            import traceback
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    return CRASH


def _child(req: RunRequest, go_fd: int, ready_fd: int | None = None,
           _exit: Any = _EXIT) -> None:
    """In the run's own process: a session of its own, run, never return.  Once held
    before anything of the project runs, it says so on ``ready_fd`` ("0", or "1" when
    project code was imported before that point) and waits for "go" on ``go_fd``."""
    def body() -> int:
        _own_process(req)
        if POLICY:  # returns in the run: PID 2 of its own namespaces, in its own view
            keep = (0, 1, 2, go_fd) + ((ready_fd,) if ready_fd is not None else ())
            SANDBOX.isolate(POLICY, keep=keep, ended=req.get("ended"),
                            writable=os.path.dirname(req["result"]))
        _redirect(req["log"])
        return _run(req, go_fd, ready_fd)

    code = CRASH
    try:
        code = _exit_code(body)
    finally:
        _flushed_exit(code, _exit)


def _own_process(req: RunRequest) -> None:
    """A run's own process: dumpable as any other (its keeper's is not), its own
    session and process group (what it starts stays with it), its priority, and the
    default signals."""
    import signal
    keeper.dumpable(True)
    os.setsid()
    if req.get("idle"):  # its keeper puts it back to the normal priority on "go"
        keeper.idle()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _flushed_exit(code: int, exit_: Any = _EXIT) -> None:
    """End this process now with ``code``, what it printed written out first."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the exit must happen
        pass
    exit_(code)


def _keeper(req: RunRequest, go_fd: int, ready_fd: int, done_fd: int,
            close: list[int]) -> None:
    """In a forked child of the serving parent: become the run's keeper."""
    keeper.becoming_keeper(close)
    keeper.keep(req, go_fd, lambda r_go: _child(req, r_go, ready_fd), sandboxed=bool(POLICY),
                ready_fd=ready_fd, done_fd=done_fd)


# --- session templates -------------------------------------------------------------
#
# A run's pytest session starts the same way for every property of one directory with
# no conftest.py on its path: the same arguments but the file, the same configuration
# file, the same installed plugins, none of the project's code (``_Hold``).  That start
# is about a third of a trivial run's CPU, and most of the pages a run copies from the
# serving parent.  A session template is a copy of the serving parent that makes that
# start once, up to the first step of collection, and then forks each run of that
# directory from there: each run's process is a copy of a process that never imported
# anything of the project, as before, with its own request (its file, log, folders,
# result and key) put in place before the judge takes what it is (the integrity
# rebase) and before collection.  The template never reads a run's key (it passes the
# descriptor on unread) and never runs anything a run sends: runs are forked from a
# state no run ever touched.  Under the OS sandbox, each run isolates itself first
# (``_as_run``), as a run forked from the serving parent does.

_TEMPLATE_LOG: tuple[int, int] | None = None  # (device, inode) of a template's own log
_TEMPLATE_START = 1.0  # seconds a run's "go" waits at most for a template's start


class _Fork:
    """The template's own plugin: at the start of collection, before the judge's plugin,
    the template serves forks; each run's process goes on from here."""

    def __init__(self, sock: Any, hold: _Hold, plugin: _Plugin, args: list[str]) -> None:
        self.sock = sock
        self.hold = hold
        self.plugin = plugin
        self.args = args
        self.ready_at: float | None = None  # when it began to serve (time.monotonic)

    def pytest_collection(self, session: Any) -> None:
        config = session.config
        if self.hold._early() or not self.hold._no_conftest() or _distributing(config):
            try:  # the project ran, or could: this session is no template, and it never
                self.sock.send(b"fail")  # goes on to collect
            except OSError:
                pass
            _EXIT(CRASH)
        plugin = self.plugin
        if plugin.integrity is not None:  # once for all its runs: what the judge is from
            plugin.replaced.extend(plugin.integrity.rebase())  # here on (a run reading it
            plugin.rebased = True  # anew in a fresh copy would copy most of its pages)
            # each run still reads it once while it is held: its copy of the pages the
            # checks read is made there, off the run's path once it is released
            self.hold.warm = plugin.integrity.changed
        plugin.take_plugins(config.pluginmanager)  # as every run's will be: no run has
        plugin.conftests = plugin.oracle.conftests()  # registered or loaded anything yet
        sys.stdout.flush()
        sys.stderr.flush()
        import time
        self.ready_at = time.monotonic()
        req, go, ready, key = _serve_forks(self.sock)  # returns in a run's process only
        _as_run(req, self.hold, self.plugin, config, self.args, go, ready, key)


def _distributing(config: Any) -> bool:
    try:
        return bool(config.getoption("numprocesses", None)) or \
            config.getoption("dist", "no") not in ("no", None)
    except Exception:  # noqa: BLE001
        return True


def _wake_on_children() -> tuple[int, int]:
    """A pipe a signal writes to (``signal.set_wakeup_fd``), SIGCHLD among them: a
    serving loop's ``select`` wakes when a child ends.  Both ends do not block."""
    import signal

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    return wake_r, wake_w


def _drain(fd: int) -> None:
    """Read a non-blocking wake-up pipe empty."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _serve_forks(sock: Any) -> tuple[RunRequest, int, int, bytes]:
    """In the template: say it is ready, fork a keeper and its run for each request
    (descriptors: go, ready, done, key), report each keeper's pid and end; exit when
    the serving parent closes the socket.  Returns only in a run's process."""
    import select
    import socket

    wake_r, wake_w = _wake_on_children()

    def ended(pid: int, status: int, cpu: float) -> None:
        try:
            sock.send(b"exit %d %d %.4f" % (pid, status, cpu))
        except OSError:
            pass

    sock.send(b"ready")
    while True:
        ready = select.select([sock, wake_r], [], [])[0]
        if wake_r in ready:
            _drain(wake_r)
        keeper.reap(ended)
        if sock not in ready:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 4)
        except OSError:
            data, fds = b"", []
        if not data or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            if data:
                continue
            keeper.reap(block=True)  # the serving parent is done: each keeper ends its run
            _EXIT(0)
        req: RunRequest = json.loads(data)
        go_r, ready_w, done_w, key_r = fds
        pid = os.fork()
        if pid == 0:  # the keeper, then (returning) its run
            keeper.becoming_keeper([sock.fileno(), wake_r, wake_w])
            try:
                key = os.read(key_r, 64)
                os.close(key_r)
            except OSError:
                _EXIT(CRASH)
            go = keeper.keep(req, go_r, None, sandboxed=bool(POLICY), ready_fd=ready_w,
                             done_fd=done_w)
            return req, go, ready_w, key
        for fd in fds:
            os.close(fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        sock.send(b"forked %d" % pid)


def _as_run(req: RunRequest, hold: _Hold, plugin: _Plugin, config: Any, args: list[str],
            go: int, ready: int, key: bytes) -> None:
    """In a run forked from a template: this run's own process, output, folders, file,
    result and key, then held for "go" as any prepared run."""
    _RUNNING[0] = True  # (a list: the judge's own globals are watched from the rebase on)
    _own_process(req)  # (its keeper gave it the default wake-up and SIGCHLD)
    inherited = _inherited()
    if POLICY:  # as a run forked from the server: PID 2 of its own namespaces, in its own
        # view, with only the descriptors that ``_logs_to`` makes its own (it closes others)
        keep = [0, 1, 2, go, ready, *(n for n, _kind in inherited)]
        SANDBOX.isolate(POLICY, keep=keep, ended=req.get("ended"),
                        writable=os.path.dirname(req["result"]))
    _private(req)  # (its fresh capture files are made in its own TMPDIR)
    _logs_to(req["log"], inherited)
    _hypothesis_home(req["home"])
    path = req["args"][0]
    hold.path = path
    plugin.home, plugin.result, plugin.key = req["home"], req["result"], key
    plugin.target = os.path.abspath(path)
    plugin.oracle = _Oracle(path, hold.top or os.getcwd())
    config.args = [path]
    for ns in (getattr(config, "option", None), getattr(config, "known_args_namespace", None)):
        if ns is not None and hasattr(ns, "file_or_dir"):
            ns.file_or_dir = [path]
    params = config.invocation_params
    config.invocation_params = type(params)(args=(path, *args[1:]), plugins=params.plugins,
                                            dir=params.dir)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if getattr(tr, "_session_start", None) is not None:  # pytest 9: the duration from here
        tr._session_start = type(tr._session_start)()
    elif isinstance(getattr(tr, "_sessionstarttime", None), float):  # pytest 8
        import time
        tr._sessionstarttime = time.time()
    hold.go_fd, hold.ready_fd = go, ready  # held at the hold's own step of collection


def _logs_to(log: str, inherited: list[tuple[int, str]]) -> None:
    """Every descriptor of ``inherited`` (``_inherited``) that wrote to the template's
    log (its output, and the copies pytest's capture and faulthandler keep) writes to
    the run's log now, and every unnamed scratch file (pytest's capture files) is a
    fresh one."""
    import tempfile

    _redirect(log)  # 1 and 2 write to the run's log from here
    for n, kind in inherited:
        if kind == "log":
            os.dup2(1, n)
        elif kind == "scratch":
            with tempfile.TemporaryFile() as fresh:
                os.dup2(fresh.fileno(), n)


def _inherited() -> list[tuple[int, str]]:
    """The descriptors of this process that a run forked from a template makes its own
    (``_logs_to``), by kind: "log" (the template's log), "scratch" (an unnamed scratch
    file: pytest's capture files), "null" (the null device)."""
    import stat

    null = os.stat(os.devnull)
    found = []
    for name in os.listdir("/proc/self/fd"):
        n = int(name)
        try:
            st = os.fstat(n)
        except OSError:
            continue  # (the listing's own)
        if (st.st_dev, st.st_ino) == _TEMPLATE_LOG:
            found.append((n, "log"))
        elif stat.S_ISREG(st.st_mode) and st.st_nlink == 0:
            found.append((n, "scratch"))
        elif (st.st_dev, st.st_ino) == (null.st_dev, null.st_ino):
            found.append((n, "null"))
    return found


_RUNNING = [False]  # whether this process (forked from a template) is a run


class _Tmpl:
    """One template, as the serving parent knows it."""

    def __init__(self, key: tuple[Any, ...], pid: int, sock: Any) -> None:
        import time
        self.key = key
        self.pid = pid
        self.sock = sock  # the serving parent's end
        self.ready = False  # whether it said it serves
        self.since = time.monotonic()  # when it was started


def _unkeyed(req: RunRequest) -> RunRequest:
    """The request as a template gets it: without the run's key (passed on unread)."""
    return cast("RunRequest", {k: v for k, v in req.items() if k != "key"})


class _Templates:
    """The serving parent's session templates, one per directory and arguments."""

    def __init__(self) -> None:
        import socket
        self.socket = socket
        self.off = not hasattr(socket, "send_fds") or \
            bool(os.environ.get("BALLOT_GUARD_NO_TEMPLATE"))
        self.by_key: dict[tuple[Any, ...], _Tmpl | None] = {}  # None: not to be used
        self.by_fd: dict[int, _Tmpl] = {}
        self.pids: set[int] = set()
        self.first: dict[int, tuple[tuple[Any, ...], RunRequest, float]] = {}  # ready pipe
        # -> the first run of a directory (and when it was prepared), until it is held

    def fds(self) -> list[int]:
        return list(self.by_fd)

    def starting(self) -> float | None:
        """How long until a template that is starting, or may start once the first run
        of its directory is held, should be ready (None: none is): the runs released
        meanwhile would share the machine with its session start."""
        import time
        since = [t.since for t in self.by_fd.values() if not t.ready]
        since += [when for _key, _req, when in self.first.values()]
        return max(0.0, min(since) + _TEMPLATE_START - time.monotonic()) if since else None

    def _key(self, req: RunRequest) -> tuple[Any, ...] | None:
        args = req.get("args") or []
        if self.off or not args or not _no_conftest(args[0], _ROOTS["tree"] or os.getcwd()):
            return None
        return (os.path.dirname(os.path.abspath(args[0])), *args[1:])

    def _start(self, key: tuple[Any, ...], req: RunRequest, close: list[int]) -> None:
        mine, its = self.socket.socketpair(self.socket.AF_UNIX, self.socket.SOCK_SEQPACKET)
        log = os.path.join(os.path.dirname(req["dir"]), f"template-{len(self.by_key)}.log")
        pid = os.fork()
        if pid == 0:
            _session_template(_unkeyed(req), its, log, [*close, mine.fileno()])
        its.close()
        self.pids.add(pid)
        self.by_key[key] = self.by_fd[mine.fileno()] = _Tmpl(key, pid, mine)

    def held(self, ready_r: int, clean: bool | None, close: list[int]) -> None:
        """A prepared run said whether project code ran before its hold."""
        first = self.first.pop(ready_r, None)
        if first is not None and clean:
            self._start(first[0], first[1], close)

    def _drop(self, t: _Tmpl) -> None:
        self.by_key[t.key] = None
        self.by_fd.pop(t.sock.fileno(), None)
        if not t.ready:
            try:
                os.kill(t.pid, 9)
            except OSError:
                pass
        t.sock.close()

    def prepare(self, req: RunRequest, pipes: tuple[int, int, int], ready_r: int,
                exited: Callable[[int, int, float], None]) -> int | None:
        """A keeper forked by the request's template (its pid), or None: fork it here.
        The first run of a directory is prepared as any other; once it is held with no
        project code imported, its directory gets a template (``held``): no template
        ever imports the project's code, even beside a run."""
        import time
        self.first.pop(ready_r, None)  # a pipe of that number before: its run is gone
        key = self._key(req)
        if key is None:
            return None
        if key not in self.by_key:
            self.by_key[key] = None
            self.first[ready_r] = (key, req, time.monotonic())
            return None
        t = self.by_key[key]
        if t is None or not t.ready:
            return None
        key_r, key_w = os.pipe()
        pid = None
        try:
            os.write(key_w, bytes.fromhex(req.get("key", "")))
            os.close(key_w)
            self.socket.send_fds(t.sock, [json.dumps(_unkeyed(req)).encode()],
                                 [*pipes, key_r])
            pid = self._forked(t, exited)
        except (OSError, ValueError):
            pass
        finally:
            os.close(key_r)
        if pid is None:
            self._drop(t)
        return pid

    def _forked(self, t: _Tmpl, exited: Callable[[int, int, float], None]) -> int | None:
        import select
        while select.select([t.sock], [], [], 10.0)[0]:
            said = t.sock.recv(256)
            if said.startswith(b"forked "):
                return int(said.split()[1])
            if not self._said(t, said, exited):
                return None
        return None

    def _said(self, t: _Tmpl, said: bytes, exited: Callable[[int, int, float], None]) -> bool:
        """Take one message of a template; False when it is gone or failed."""
        if said == b"ready":
            t.ready = True
            return True
        if said.startswith(b"exit "):
            _, pid, status, cpu = said.split()
            exited(int(pid), int(status), float(cpu))
            return True
        return False

    def read(self, fd: int, exited: Callable[[int, int, float], None]) -> None:
        t = self.by_fd[fd]
        try:
            said = t.sock.recv(256)
        except OSError:
            said = b""
        if not self._said(t, said, exited):
            self._drop(t)

    def ended(self, pid: int) -> bool:
        """Whether ``pid`` was a template's (it is not used any more)."""
        if pid not in self.pids:
            return False
        for t in [t for t in self.by_fd.values() if t.pid == pid]:
            self._drop(t)
        return True

    def close(self) -> None:
        """The gate is done: each template exits once its keepers did."""
        for t in list(self.by_fd.values()):
            self._drop(t)


def _session_template(req: RunRequest, sock: Any, log: str, close: list[int]) -> None:
    """In a forked child of the serving parent: become the session template of the
    request's directory (see above); in each run forked from it, run.  Never returns."""
    def body() -> int:
        global _TEMPLATE_LOG  # noqa: PLW0603 - this process's own log
        import signal
        parent = os.getppid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in close:
            os.close(fd)
        keeper.with_parent(parent, lambda *_: _EXIT(CRASH))
        if POLICY:  # the serving parent's view is read-only: the template's output goes
            import tempfile  # to memory, its capture files to a folder of its own
            tempfile.tempdir = SANDBOX.scratch()  # (each run sets its own TMPDIR)
            _redirect(os.memfd_create("ballot-guard-template-log"))
        else:
            _redirect(log)
        st = os.fstat(1)
        _TEMPLATE_LOG = (st.st_dev, st.st_ino)
        top = _ROOTS["tree"] or os.getcwd()
        args = _confined(list(req["args"]), top)
        hold = _Hold(None, req["args"][0], top)
        import pytest

        _mark(pytest)
        plugin = _Plugin(req["home"], req["result"], hold, _SNAPSHOT or _Integrity.take())
        return int(_main(pytest, args, [hold, plugin, _Fork(sock, hold, plugin, args)]))

    code = CRASH
    try:
        code = _exit_code(body)
    finally:
        if not _RUNNING[0]:  # the template ended before it served: the parent stops using it
            try:
                sock.send(b"fail")
            except Exception:  # noqa: BLE001
                pass
        _flushed_exit(code)


# Judge modules the runner loads only where a file of the checkout names them.
_LOADED_IF_NAMED = ("hypothesis",)

# Judge modules every run imports only on first use (pytest reading a pyproject.toml,
# pytest-xdist's hook specifications, Hypothesis's target optimiser): imported once here.
_LAZY = ("tomllib", "tomli", "xdist.newhooks", "hypothesis.internal.conjecture.optimiser")


def _warm_local_constants() -> None:
    """Hypothesis draws examples from the constants of "local" (non-installed) modules,
    and on its first draw looks at every module in ``sys.modules`` to find them (about
    a third of a trivial run's CPU in a fresh child).  Every module here is the judge's:
    decide for each which kind it is now, once, so a run only looks at the modules it
    imports itself.  The judge's own files (this one, the sandbox) are never local:
    under the gate, examples do not depend on ballot-guard's source.  A module that is
    local (none, unless a path entry of the installation lies outside it) stays unseen,
    so each run still reads its constants itself; nothing is read or written here."""
    providers = sys.modules.get("hypothesis.internal.conjecture.providers")
    constants = sys.modules.get("hypothesis.internal.constants_ast")
    seen = getattr(providers, "_seen_modules", None)
    is_local = getattr(constants, "is_local_module_file", None)
    if not isinstance(seen, set) or not callable(is_local):
        return  # another Hypothesis: each run does it all, as before
    here = os.path.dirname(_REALPATH(__file__))
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        try:
            if path is None or (isinstance(path, str) and _under(_REALPATH(path), here)) \
                    or not is_local(path):
                seen.add(id(mod))
        except Exception:  # noqa: BLE001 - left for the run to decide
            pass


def _prepare_sources(properties: str) -> None:
    """The property files of the checkout and what they import, read, compiled and
    surveyed once for every run (``sources.py``), before the judge's snapshot."""
    try:
        import importlib._bootstrap_external as ext

        sources = _sibling("sources", watched=True)
        survey, local = sources.hypothesis_constants()
        sources.prepare(_ROOTS["tree"] or os.getcwd(), properties, survey, local)
        sources.install(ext.SourceLoader,
                        [sys.modules.get("hypothesis.internal.constants_ast"),
                         sys.modules.get("hypothesis.internal.conjecture.providers")])
    except Exception:  # noqa: BLE001 - each run compiles and surveys its files, as before
        pass


def _read_once(kind: Any) -> None:
    """Every run's pytest reads the installed distributions' metadata (entry points to
    load plugins, the plugins' RECORD to rewrite their asserts, their names): about
    130 small files a run, parsed each time.  Read and parsed here once, from the
    installation as it is before any run: each run gets them from memory.  What was
    not read here (a distribution in the checkout, one installed during a run) is
    read from disk each time, as before."""
    for name in ("entry_points", "files", "metadata"):
        prop = getattr(kind, name, None)
        if isinstance(prop, property) and prop.fget is not None:
            setattr(kind, name, property(_kept(prop.fget, copy=name == "files"),
                                         doc=prop.__doc__))


_KEEPING = [True]  # metadata read from now on is kept (False once the runs can start)


def _kept(get: Callable[[Any], Any], *, copy: bool) -> Callable[[Any], Any]:
    seen: dict[str, Any] = {}

    def kept(self: Any) -> Any:
        where = os.path.abspath(str(getattr(self, "_path", "")))
        if where in seen:
            value = seen[where]
        else:
            value = get(self)
            if _KEEPING[0] and not _in_checkout(where):
                seen[where] = value
        return list(value) if copy and value is not None else value

    return kept


_source_url = _kept(_read_source_url, copy=False)


def _preimport(template: bool = False, hypothesis: bool = True,
               properties: str | None = None) -> None:
    """Import what every run imports, so each fork starts with it loaded (and, with
    ``template``, take pytest's first step for the runs: ``_template``).  Hypothesis
    only with ``hypothesis``: where no file of the checkout names it, no run needs it,
    and a run that imports it anyway is an error (``_Plugin.late``)."""
    import importlib

    try:
        from _pytest.config import default_plugins
        for name in default_plugins:
            try:
                importlib.import_module(f"_pytest.{name}")
            except Exception:  # noqa: BLE001
                pass
    except Exception:  # noqa: BLE001
        pass
    for name in (*(("hypothesis", "hypothesis.core") if hypothesis else ()),
                 "_hypothesis_pytestplugin"):
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - no Hypothesis in this environment
            pass
    _private_bytecode()
    if properties is not None:
        _prepare_sources(properties)
    global _SNAPSHOT  # noqa: PLW0603 - the parent's one snapshot, taken at start
    _scan_wrap()
    snapshot = _SNAPSHOT = _Integrity.take()  # before any installed plugin, the project's own
    plugins: list[str] = []  # the installed plugins' modules (pytest11 entry points)
    try:  # every run loads the pytest11 plugins; this also warms importlib.metadata's caches
        import importlib.metadata
        _read_once(importlib.metadata.PathDistribution)
        for dist in importlib.metadata.distributions():
            for ep in dist.entry_points:
                if ep.group == "pytest11" and not os.environ.get(
                        "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
                    plugins.append(ep.value.split(":")[0].strip())
                    dist.metadata, dist.files  # noqa: B018 - read once, for every run
                    _source_url(dist)
    except Exception:  # noqa: BLE001
        pass
    names = ["_pytest._argcomplete", "faulthandler", "pdb", "readline", *plugins]
    for name in names + [n for n in _LAZY if hypothesis or not n.startswith("hypothesis")]:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a plugin that fails here fails in the run too
            pass
    if any(m in sys.modules and m not in snapshot.modules for m in _LOADED_IF_NAMED):
        snapshot.extend()  # an installed plugin imported it: watched from here, as it is
    _warm_local_constants()
    if template:
        _template(hypothesis)
    for name in plugins:  # their files' real paths, for every run's plugin_files
        path = getattr(sys.modules.get(name), "__file__", None)
        real = _REALPATH(path) if isinstance(path, str) else None
        if path is not None and real is not None and _installed(real):
            _REAL[path] = real
    try:
        plugin_files(getattr(_TEMPLATE, "pluginmanager", None))
    except Exception:  # noqa: BLE001 - each run reads them itself
        pass
    _KEEPING[0] = False
    _scan_once(getattr(_TEMPLATE, "pluginmanager", None), plugins)
    snapshot._getter(_SCANS_LABEL, _scans_flat)
    # Python's advice for fork without exec: the collector off while the parent loads
    # (``serve``), everything it holds frozen before the first fork, on again for the
    # children, so their collections never touch (and copy) the parent's objects.  No
    # collection first: a full one took 20-25 ms of the runner's start, to free a
    # little import-time garbage.
    import gc
    if hasattr(gc, "freeze"):
        gc.freeze()
    gc.enable()


def _status(status: int, cpu: float) -> Reply:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status), "cpu": round(cpu, 4)}
    return {"exit": os.WEXITSTATUS(status), "cpu": round(cpu, 4)}


def _load() -> tuple[bool, str | None]:
    """The gate's first request (``{"op": "load", "hypothesis": false, "properties":
    "properties"}``): whether to load Hypothesis before the runs (anything else, or
    nothing, loads it), and the checkout's properties directory, if it says."""
    line = b""
    while not line.endswith(b"\n") and len(line) < 4096:
        got = os.read(0, 1)  # a byte at a time: nothing of a later request is taken
        if not got:
            break
        line += got
    try:
        msg = json.loads(line)
    except ValueError:
        return True, None
    if not isinstance(msg, dict) or msg.get("op") != "load":
        return True, None
    properties = msg.get("properties")
    return msg.get("hypothesis") is not False, properties if isinstance(properties, str) else None


def serve(policy: str | None = None) -> int:
    """Fork prepared children on "prepare", release them on "go", report their ends."""
    import gc
    import select
    import signal

    gc.disable()  # until everything every run needs is loaded (``_preimport``)
    isolation = _enter_sandbox(policy)
    keeper.dumpable(False)  # its keepers inherit it; each run gives it up (``_child``)
    private = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(private, "w", buffering=1)

    def reply(msg: Reply | Describe) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    info = describe()
    if info["ok"]:
        info["idle"] = keeper.can_idle()
        hypothesis, properties = _load()
        _preimport(template=True, hypothesis=hypothesis, properties=properties)
        _add_cwd()
        try:
            keeper.libc()  # loaded once here, not in every keeper
        except Exception:  # noqa: BLE001
            pass
        import threading
        info["fork"] = hasattr(os, "fork") and threading.active_count() == 1
    info["isolation"] = isolation
    reply(info)
    if not info["ok"] or not info["fork"]:
        return 0
    wake_r, wake_w = _wake_on_children()
    prepared: dict[str, tuple[int, int]] = {}   # id -> (pid, go pipe)
    readies: dict[int, str] = {}                # ready pipe -> id, until the child is held
    running: dict[int, str] = {}                # pid -> id
    ended: dict[int, tuple[int, float]] = {}    # pid -> (status, cpu), ended before "go"
    dones: dict[int, int] = {}                  # done pipe -> keeper, until it said
    told: set[int] = set()                      # keepers that said, not yet reaped
    muted: dict[int, int] = {}                  # keeper -> its done pipe, not read again
    buf = b""
    open_ = True

    def filed(pid: int, status: int, cpu: float) -> None:
        if pid in running:
            reply({"id": running.pop(pid), **_status(status, cpu)})
        else:
            ended[pid] = (status, cpu)

    templates = _Templates()

    def exited(pid: int, status: int, cpu: float) -> None:
        if templates.ended(pid):
            return
        if pid in told:  # it said so before its exit: this is that exit
            told.discard(pid)
            return
        for fd in [fd for fd, keeper in dones.items() if keeper == pid]:
            del dones[fd]  # it ended without saying (or just after: its exit tells first)
            os.close(fd)
        if pid in muted:
            os.close(muted.pop(pid))
        filed(pid, status, cpu)

    def release(rid: str) -> None:
        pid, go = prepared.pop(rid)
        try:
            os.write(go, b"g")
        except OSError:
            pass  # it ended already; its status follows
        os.close(go)
        reply({"id": rid, "started": pid})
        if pid in ended:
            reply({"id": rid, **_status(*ended.pop(pid))})
        else:
            running[pid] = rid

    # Runs whose "go" waits while a template starts, where releasing them would leave no
    # core for it: a run that computes beside another process's work measures another
    # time than alone (so a template starts beside one computing run at most, as a run
    # is prepared ahead only where a core is left over).
    held_back: list[str] = []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)

    def must_wait() -> bool:
        """Whether a run released now would leave no core for a template starting."""
        return len(running) + 1 >= cores and templates.starting() not in (None, 0.0)

    while open_ or running or held_back:
        wait = templates.starting() if held_back else None
        ready = select.select([wake_r, *readies, *dones, *templates.fds()] +
                              ([0] if open_ else []), [], [], wait)[0]
        for fd in [fd for fd in ready if fd in templates.by_fd]:
            templates.read(fd, exited)
        while held_back and not must_wait():
            release(held_back.pop(0))
        for fd in [fd for fd in ready if fd in dones]:
            pid = dones.pop(fd)
            try:
                said = os.read(fd, 64).split()
            except OSError:
                said = []
            try:
                status, cpu = int(said[0]), float(said[1])
            except (IndexError, ValueError):  # it ended without saying, or this is not
                muted[pid] = fd  # its keeper's (written through /proc): its exit tells;
                continue  # open until then, so that a writer there blocks, as before
            os.close(fd)
            filed(pid, status, cpu)
            told.add(pid)
        for fd in [fd for fd in ready if fd in readies]:
            try:
                said = os.read(fd, 64).split()
            except OSError:
                said = []
            os.close(fd)  # read once: nothing the run writes later reaches the gate
            held: Reply = {"id": readies.pop(fd),
                           "ready": {b"0": True, b"1": False}.get(said[0]) if said else None}
            templates.held(fd, held["ready"], [
                wake_r, wake_w, private, *(g for _p, g in prepared.values()), *readies,
                *dones, *muted.values(), *templates.fds()])
            try:
                held["prep"] = float(said[1])
            except (IndexError, ValueError):
                pass
            reply(held)
        if wake_r in ready:
            _drain(wake_r)
        keeper.reap(exited)
        if 0 not in ready:
            continue
        data = os.read(0, 65536)
        if not data:
            open_ = False
            for _pid, go in prepared.values():
                os.close(go)  # a prepared child reads EOF and runs nothing
            prepared.clear()
            held_back.clear()  # (those were prepared: they run nothing either)
            for pid in running:  # the gate is gone (it ends its runs before it closes
                try:  # this pipe): nobody judges these, nor ends them at their timeout;
                    os.kill(pid, signal.SIGTERM)  # each keeper ends its run and the rest
                except OSError:
                    pass
            continue
        buf += data
        while b"\n" in buf:
            line, _, buf = buf.partition(b"\n")
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg["op"] == "prepare":
                sys.stdout.flush()
                sys.stderr.flush()
                go_r, go_w = os.pipe()
                ready_r, ready_w = os.pipe()
                done_r, done_w = os.pipe()
                # no descriptor of the parent's, nor another run's pipes, nor a template's
                close = [go_w, ready_r, done_r, wake_r, wake_w, private,
                         *(g for _p, g in prepared.values()), *readies, *dones,
                         *muted.values(), *templates.fds()]
                forked = templates.prepare(msg["req"], (go_r, ready_w, done_w), ready_r,
                                           exited)
                if forked is not None:
                    pid = forked
                else:
                    pid = os.fork()
                    if pid == 0:
                        _keeper(msg["req"], go_r, ready_w, done_w, close)
                    try:
                        os.setpgid(pid, pid)
                    except OSError:
                        pass  # the child did it first, or already ended
                os.close(go_r)
                os.close(ready_w)
                os.close(done_w)
                readies[ready_r] = msg["id"]
                dones[done_r] = pid
                prepared[msg["id"]] = (pid, go_w)
                reply({"id": msg["id"], "prepared": pid})
            elif msg["op"] == "go":
                if held_back or must_wait():
                    held_back.append(msg["id"])
                else:
                    release(msg["id"])
            elif msg["op"] == "cancel":
                if msg["id"] in held_back:
                    held_back.remove(msg["id"])
                pid, go = prepared.pop(msg["id"])
                os.close(go)
    templates.close()
    keeper.reap(block=True)  # every keeper left: each ends what its run left before it exits
    return 0


def _once(req: RunRequest) -> int:
    if describe()["ok"]:
        _preimport()
    _add_cwd()
    try:
        return _run(req)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else CRASH


def once(request: str) -> int:
    """One run in a fresh process: under a keeper where the OS can fork."""
    req = json.loads(request)
    line = b""
    while not line.endswith(b"\n") and len(line) < 256:  # the signing key, on stdin alone
        got = os.read(0, 1)
        if not got:
            break
        line += got
    req["key"] = line.strip().decode("ascii", "replace")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the run reads nothing more there, as from /dev/null
    os.close(null)
    if not hasattr(os, "fork"):
        return _once(req)

    def start(_go: int) -> None:
        code = CRASH
        try:
            keeper.dumpable(True)
            os.setsid()
            import signal
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            code = _once(req)
        finally:
            _flushed_exit(code)

    keeper.dumpable(False)  # the keeper: its pipes are the gate's
    keeper.keep(req, None, start)
    return CRASH


def _roots(argv: list[str]) -> tuple[str | None, str | None]:
    """``--top DIR --tree DIR`` (the main checkout, the checkout under test)."""
    got: dict[str, str] = {}
    while len(argv) >= 2 and argv[0] in ("--top", "--tree"):
        got[argv[0][2:]] = argv[1]
        del argv[:2]
    top = got.get("top") or os.getcwd()
    return top, got.get("tree") or top


if __name__ == "__main__":
    _drop_own_dir()
    argv = sys.argv[1:]
    command = argv.pop(0) if argv else ""
    _start(*_roots(argv))
    if command == "serve" and len(argv) <= 1:  # the sandbox policy, if any
        code = serve(argv[0] if argv else None)
        sys.stdout.flush()
        sys.stderr.flush()
        _EXIT(code)  # no interpreter shutdown: the gate waits for this exit
    if command == "once" and len(argv) == 1:
        code = once(argv[0])
        sys.stdout.flush()
        sys.stderr.flush()
        _EXIT(code)
    if command == "describe" and not argv:
        print(json.dumps(describe()))
        raise SystemExit(0)
    print("usage: forkserver.py serve|once REQUEST|describe [--top DIR --tree DIR]",
          file=sys.stderr)
    raise SystemExit(2)
