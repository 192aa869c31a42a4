"""Runs properties under the PROJECT's interpreter (a standalone script, stdlib only).

ballot-guard is not installed in the project's environment, so this file is
run by path: ``<python> zygote.py serve`` or ``<python> zygote.py once REQUEST``.

``serve`` imports pytest (and Hypothesis, when the project has it) once, then
forks one child per request read from stdin.  Each child is a fresh process
state: a copy of a parent that never ran pytest, so nothing one run does (a
module imported, a global changed, a thread started) can reach another.  The
parent starts no thread, and it was itself started with the gate's
PYTHONHASHSEED, so every child hashes alike.  ``once`` runs one request in
this process: the fallback where fork is unavailable.

Protocol (``serve``), one JSON object a line: the parent first describes
the runner (pytest's version, whether Hypothesis and pytest-randomly are
there, whether it can fork).  Then ``{"op": "prepare", "id": ID, "req":
{"args", "log", "result", "home"}}`` forks a child that runs pytest up to
just before project code and waits (answer ``{"id", "prepared": PID}``);
``{"op": "go", "id"}`` releases it (``{"id", "started": PID}``, later
``{"id", "exit": N}`` or ``{"id", "signal": N}``); ``{"op": "cancel",
"id"}``, or the end of stdin, makes a prepared child exit without running
anything.  Each child is its own process group, so a timeout kills all it
started.  Replies go to a private copy of the original stdout; the process's
own fd 1 is pointed at its stderr so that nothing printed at import can
corrupt the protocol.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

# Exit code of a child whose own machinery (not pytest) failed.
CRASH = 70


def _drop_own_dir() -> None:
    """A script puts its own directory first, which would let ``import config``
    in a project find ballot-guard's module: take it out."""
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]


def _add_cwd() -> None:
    """Put the repository root first on ``sys.path``, as ``python -m pytest`` does.

    Called only after pytest, Hypothesis and the installed pytest plugins are
    imported from the interpreter's environment: a ``pytest.py``,
    ``_pytest/``, ``pluggy/`` or ``hypothesis/`` that a patch adds at the
    repository root must not replace the judge's runner.
    """
    if not getattr(sys.flags, "safe_path", False):
        sys.path.insert(0, os.getcwd())


def describe() -> dict[str, Any]:
    """What this interpreter offers: pytest (required), Hypothesis, pytest-randomly."""
    import importlib.util

    info: dict[str, Any] = {"ok": False, "python": sys.executable,
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
    return info


# What decides a test's outcome: the code under test runs in the same process and
# could replace one of these to make a failing check report a pass.  They are
# noted before pytest starts (before any project code) and compared at the end.
MACHINERY = (
    "_pytest.python:Function.runtest", "_pytest.python:pytest_pyfunc_call",
    "_pytest.runner:call_and_report", "_pytest.runner:runtestprotocol",
    "_pytest.runner:call_runtest_hook", "_pytest.runner:CallInfo.from_call",
    "_pytest.runner:pytest_runtest_makereport", "_pytest.runner:pytest_runtest_call",
    "_pytest.reports:TestReport.from_item_and_call", "_pytest.reports:TestReport.__init__",
    "_pytest.main:pytest_runtestloop", "_pytest.skipping:pytest_runtest_makereport",
    "_pytest.outcomes:fail", "_pytest.outcomes:skip", "_pytest.outcomes:exit",
    "pluggy._callers:_multicall", "pluggy._hooks:HookCaller.__call__",
    "pluggy._manager:PluginManager._hookexec",
    "hypothesis:given", "hypothesis.core:given", "hypothesis.core:settings",
    "hypothesis.core:StateForActualGivenExecution.execute_once",
    "hypothesis.core:StateForActualGivenExecution.run_engine",
)


_NOTED: dict[str, Any] = {}  # the serving parent's note, taken before installed plugins load


def _resolve(spec: str) -> Any:
    module, _, attrs = spec.partition(":")
    obj: Any = sys.modules.get(module)
    for attr in attrs.split("."):
        if obj is None:
            return None
        obj = obj.__dict__.get(attr) if hasattr(obj, "__dict__") else None
    return obj


def machinery() -> dict[str, Any]:
    """The objects of ``MACHINERY`` that exist in this process now."""
    found = {spec: _resolve(spec) for spec in MACHINERY}
    return {spec: obj for spec, obj in found.items() if obj is not None}


def _installed(path: str) -> bool:
    """Whether ``path`` lies in the interpreter's own installation (site-packages)."""
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        real = os.path.realpath(prefix)
        if path == real or path.startswith(real + os.sep):
            return True
    return False


def _source_url(dist: Any) -> str | None:
    """The local directory a distribution was installed from (PEP 610), if any."""
    try:
        text = dist.read_text("direct_url.json")
        url = json.loads(text).get("url", "") if text else ""
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    return os.path.realpath(unquote(urlparse(url).path))


def plugin_files(pm: Any) -> list[str]:
    """Every loaded pytest plugin that may be the project's own code, as real paths:
    plugin modules outside the interpreter's installation (conftests, ``-p``
    modules, editable installs), and, for plugins installed from a local
    directory (``pip install .``), that directory prefixed with ``dist:``.
    The parent judges which of them lie in the repository outside the oracle."""
    found: set[str] = set()
    for _name, plugin in pm.list_name_plugin():
        if plugin is None or isinstance(plugin, (_Plugin, _Hold)):
            continue  # ours (this file may lie in a checkout of ballot-guard itself)
        module = plugin if hasattr(plugin, "__file__") and not isinstance(plugin, type) \
            else sys.modules.get(getattr(type(plugin), "__module__", ""))
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            real = os.path.realpath(path)
            if not _installed(real):
                found.add(real)
    try:  # the plugins pytest loaded from entry points, with their distributions
        loaded = pm.list_plugin_distinfo()
    except Exception:  # noqa: BLE001
        loaded = ()
    for _plugin, dist in loaded:
        where = _source_url(dist)
        if where is not None:
            found.add(f"dist:{where}")
    return sorted(found)


def _unittest_skip(item: Any) -> bool:
    """A ``unittest.skip`` decorator on the test method or its class: written in the file."""
    return any(getattr(obj, "__unittest_skip__", False) is True
               for obj in (getattr(item, "obj", None), getattr(item, "cls", None)))


class _Plugin:
    """Our pytest plugin: isolate Hypothesis's database, count the outcomes."""

    def __init__(self, home: str, result: str, hold: _Hold,
                 noted: dict[str, Any] | None = None) -> None:
        self.home = home
        self.result = result
        self.hold = hold
        self.noted = noted or {}
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collected": 0,
                       "dodged": 0}
        self.done: set[str] = set()  # items with an outcome: a call report, or a setup skip
        self.marked: set[str] = set()  # items whose skip or xfail the property file declares

    def pytest_configure(self, config: Any) -> None:
        # Runs after Hypothesis's own pytest_configure (trylast), so a
        # --hypothesis-profile or a conftest's profile is kept, minus its database.
        if "hypothesis" not in sys.modules:
            return
        try:
            from hypothesis import configuration, settings
            configuration.set_hypothesis_home_dir(self.home)
            settings.register_profile("ballot-guard", parent=settings.default, database=None)
            settings.load_profile("ballot-guard")
        except Exception:  # noqa: BLE001 - an old Hypothesis: the fresh home dir suffices
            pass

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        self.counts["collected"] = len(items)
        for item in items:  # a skip or xfail written as a mark is the oracle's own choice
            if any(item.get_closest_marker(name) is not None
                   for name in ("skip", "skipif", "xfail")) or _unittest_skip(item):
                self.marked.add(item.nodeid)

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
        data: dict[str, Any] = dict(self.counts)
        try:
            data["plugins"] = plugin_files(session.config.pluginmanager)
        except Exception as exc:  # noqa: BLE001 - reported, judged by the parent
            data["plugins"] = [f"?{type(exc).__name__}: {exc}"]
        data["early"] = self.hold.early
        data["complete"] = len(self.done) >= self.counts["collected"]
        data["replaced"] = [spec for spec, obj in self.noted.items() if _resolve(spec) is not obj]
        tmp = self.result + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, self.result)


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

    def __init__(self, go_fd: int | None, path: str) -> None:
        self.go_fd = go_fd
        self.path = path
        self.defer = False
        self.base = set(sys.modules)
        self.early: list[str] = []

    def wait(self) -> None:
        if self.go_fd is None:
            return
        fd, self.go_fd = self.go_fd, None
        top = os.path.realpath(os.getcwd()) + os.sep
        env = os.path.realpath(sys.prefix) + os.sep
        for name, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if name in self.base or not isinstance(path, str):
                continue
            real = os.path.realpath(path)
            if real.startswith(top) and not real.startswith(env):
                self.early.append(name)
        go = os.read(fd, 1)
        os.close(fd)
        if go != b"g":  # cancelled: the gate is gone or stopped early; run nothing
            os._exit(CRASH)

    def _no_conftest(self) -> bool:
        d = os.path.dirname(os.path.abspath(self.path))
        while True:
            if os.path.lexists(os.path.join(d, "conftest.py")):
                return False
            parent = os.path.dirname(d)
            if parent == d:
                return True
            d = parent

    def pytest_load_initial_conftests(self, early_config: Any) -> None:
        if self.go_fd is not None and self._no_conftest():
            try:
                distributing = bool(early_config.getoption("numprocesses", None)) or \
                    early_config.getoption("dist", "no") not in ("no", None)
            except Exception:  # noqa: BLE001
                distributing = True
            if not distributing:
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


def _mark(pytest: Any) -> None:
    if hasattr(_Plugin.pytest_configure, "pytest_impl"):
        return
    last, first = pytest.hookimpl(trylast=True), pytest.hookimpl(tryfirst=True)
    _Plugin.pytest_configure = last(_Plugin.pytest_configure)  # type: ignore[method-assign]
    for name in ("pytest_load_initial_conftests", "pytest_configure", "pytest_sessionstart",
                 "pytest_collection"):
        setattr(_Hold, name, first(getattr(_Hold, name)))


def _run(req: dict[str, Any], go_fd: int | None = None) -> int:
    """One pytest session in this process; its exit code."""
    hold = _Hold(go_fd, req["args"][0])
    os.makedirs(req["home"], exist_ok=True)
    if "hypothesis" in sys.modules or req.get("hypothesis"):
        try:
            from hypothesis import configuration
            configuration.set_hypothesis_home_dir(req["home"])
        except Exception:  # noqa: BLE001
            pass
    import pytest

    _mark(pytest)
    plugin = _Plugin(req["home"], req["result"], hold, _NOTED or machinery())
    code = pytest.main(list(req["args"]), plugins=[hold, plugin])
    return int(code)


def _redirect(log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)


def _child(req: dict[str, Any], go_fd: int, close: list[int]) -> None:
    """In a forked child: become a process group, run, never return."""
    code = CRASH
    try:
        os.setpgid(0, 0)
        import signal
        signal.set_wakeup_fd(-1)
        for fd in close:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _redirect(req["log"])
        code = _run(req, go_fd)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else CRASH
    except BaseException:  # noqa: BLE001 - report as a crash, never fall back into the loop
        try:
            import traceback
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)


def _preimport() -> None:
    """Import what every run imports, so each fork starts with it loaded."""
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
    for name in ("hypothesis", "hypothesis.core", "_hypothesis_pytestplugin"):
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - no Hypothesis in this environment
            pass
    global _NOTED
    _NOTED = machinery()  # before any installed plugin, the project's own among them, loads
    names = ["_pytest._argcomplete", "faulthandler", "pdb", "readline"]
    try:  # every run loads the pytest11 plugins; this also warms importlib.metadata's caches
        import importlib.metadata
        for dist in importlib.metadata.distributions():
            for ep in dist.entry_points:
                if ep.group == "pytest11" and not os.environ.get(
                        "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
                    names.append(ep.value.split(":")[0].strip())
    except Exception:  # noqa: BLE001
        pass
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a plugin that fails here fails in the run too
            pass
    import gc
    gc.collect()
    if hasattr(gc, "freeze"):  # children skip the parent's objects when they collect
        gc.freeze()


def _status(status: int) -> dict[str, Any]:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exit": os.WEXITSTATUS(status)}


def serve() -> int:
    """Fork prepared children on "prepare", release them on "go", report their ends."""
    import select
    import signal

    private = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(private, "w", buffering=1)

    def reply(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    info = describe()
    if info["ok"]:
        _preimport()
        _add_cwd()
        import threading
        info["fork"] = hasattr(os, "fork") and threading.active_count() == 1
    reply(info)
    if not info["ok"] or not info["fork"]:
        return 0
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    prepared: dict[str, tuple[int, int]] = {}   # id -> (pid, go pipe)
    running: dict[int, str] = {}                # pid -> id
    ended: dict[int, int] = {}                  # pid -> status, ended before "go"
    buf = b""
    open_ = True

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in running:
                reply({"id": running.pop(pid), **_status(status)})
            else:
                ended[pid] = status

    while open_ or running:
        ready = select.select([wake_r] + ([0] if open_ else []), [], [])[0]
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        reap()
        if 0 not in ready:
            continue
        data = os.read(0, 65536)
        if not data:
            open_ = False
            for pid, go in prepared.values():
                os.close(go)  # a prepared child reads EOF and runs nothing
            prepared.clear()
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
                pid = os.fork()
                if pid == 0:
                    _child(msg["req"], go_r, [go_w, wake_r, wake_w, private])
                os.close(go_r)
                try:
                    os.setpgid(pid, pid)
                except OSError:
                    pass  # the child did it first, or already ended
                prepared[msg["id"]] = (pid, go_w)
                reply({"id": msg["id"], "prepared": pid})
            elif msg["op"] == "go":
                pid, go = prepared.pop(msg["id"])
                try:
                    os.write(go, b"g")
                except OSError:
                    pass  # it ended already; its status follows
                os.close(go)
                reply({"id": msg["id"], "started": pid})
                if pid in ended:
                    reply({"id": msg["id"], **_status(ended.pop(pid))})
                else:
                    running[pid] = msg["id"]
            elif msg["op"] == "cancel":
                pid, go = prepared.pop(msg["id"])
                os.close(go)
    return 0


def once(request: str) -> int:
    req = json.loads(request)
    if describe()["ok"]:
        _preimport()
    _add_cwd()
    try:
        return _run(req)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else CRASH


if __name__ == "__main__":
    _drop_own_dir()
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        raise SystemExit(serve())
    if len(sys.argv) == 3 and sys.argv[1] == "once":
        raise SystemExit(once(sys.argv[2]))
    if len(sys.argv) == 2 and sys.argv[1] == "describe":
        print(json.dumps(describe()))
        raise SystemExit(0)
    print("usage: zygote.py serve | once REQUEST | describe", file=sys.stderr)
    raise SystemExit(2)
