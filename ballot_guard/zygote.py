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

Protocol (``serve``): the parent prints one JSON line describing the runner
(pytest version, whether Hypothesis and pytest-randomly are importable), then
for each request line ``{"args": [...], "log": PATH, "result": PATH,
"home": DIR}`` it answers ``{"pid": N}`` when the child started and
``{"status": ...}`` when it ended.  Replies go to a private copy of the
original stdout; the process's own fd 1 is pointed at its stderr so that
nothing printed at import can corrupt the protocol.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

# Exit code of a child whose own machinery (not pytest) failed.
CRASH = 70


def _fix_sys_path() -> None:
    """Make ``sys.path`` what ``python -m pytest`` run in the repo root would see.

    A script puts its own directory first, which would let ``import config``
    in a project find ballot-guard's module; ``-m`` puts the cwd first instead
    (unless safe-path mode is on).
    """
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]
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
        try:
            import hypothesis
            info["hypothesis"] = getattr(hypothesis, "__version__", "unknown")
        except Exception:  # noqa: BLE001 - a broken Hypothesis is "not importable"
            pass
    info["randomly"] = importlib.util.find_spec("pytest_randomly") is not None
    return info


class _Plugin:
    """Our pytest plugin: isolate Hypothesis's database, count the outcomes."""

    def __init__(self, home: str, result: str) -> None:
        self.home = home
        self.result = result
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collected": 0}

    def pytest_configure(self, config: Any) -> None:
        # Runs after Hypothesis's own pytest_configure (registered later), so a
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

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call":
            key = "passed" if report.passed else "failed" if report.failed else "skipped"
            self.counts[key] += 1
        elif report.failed:
            self.counts["errors"] += 1
        elif report.skipped and report.when == "setup":
            self.counts["skipped"] += 1

    def pytest_sessionfinish(self) -> None:
        tmp = self.result + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.counts, f)
        os.replace(tmp, self.result)


def _run(req: dict[str, Any]) -> int:
    """One pytest session in this process; its exit code."""
    os.makedirs(req["home"], exist_ok=True)
    if "hypothesis" in sys.modules or req.get("hypothesis"):
        try:
            from hypothesis import configuration
            configuration.set_hypothesis_home_dir(req["home"])
        except Exception:  # noqa: BLE001
            pass
    import pytest

    hookimpl = pytest.hookimpl(trylast=True)
    if not hasattr(_Plugin.pytest_configure, "pytest_impl"):
        _Plugin.pytest_configure = hookimpl(_Plugin.pytest_configure)  # type: ignore[method-assign]
    code = pytest.main(list(req["args"]), plugins=[_Plugin(req["home"], req["result"])])
    return int(code)


def _redirect(log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)


def _child(req: dict[str, Any], private: int) -> None:
    """In a forked child: become a process group, run, never return."""
    code = CRASH
    try:
        os.setpgid(0, 0)
        os.close(private)
        import signal
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        _redirect(req["log"])
        code = _run(req)
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
    for name in ("hypothesis", "_hypothesis_pytestplugin"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            pass
    try:  # warm importlib.metadata's path caches: every run scans for pytest11 plugins
        import importlib.metadata
        for dist in importlib.metadata.distributions():
            dist.entry_points  # noqa: B018
    except Exception:  # noqa: BLE001
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
    private = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(private, "w", buffering=1)
    info = describe()
    if info["ok"]:
        _preimport()
        import threading
        info["fork"] = hasattr(os, "fork") and threading.active_count() == 1
    out.write(json.dumps(info) + "\n")
    out.flush()
    if not info["ok"] or not info["fork"]:
        return 0
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req, private)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or already ended
        out.write(json.dumps({"pid": pid}) + "\n")
        out.flush()
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps(_status(status)) + "\n")
        out.flush()
    return 0


def once(request: str) -> int:
    req = json.loads(request)
    try:
        return _run(req)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else CRASH


if __name__ == "__main__":
    _fix_sys_path()
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        raise SystemExit(serve())
    if len(sys.argv) == 3 and sys.argv[1] == "once":
        raise SystemExit(once(sys.argv[2]))
    if len(sys.argv) == 2 and sys.argv[1] == "describe":
        print(json.dumps(describe()))
        raise SystemExit(0)
    print("usage: zygote.py serve | once REQUEST | describe", file=sys.stderr)
    raise SystemExit(2)
