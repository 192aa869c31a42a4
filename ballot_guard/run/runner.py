"""Running one property once, in a fresh process state, with identical inputs.

The fast route forks each run from a "forkserver" (``forkserver.py serve``) started
under the project's interpreter with the gate's environment; the fallback
starts a fresh process per run.  Which interpreter, and whether it can run
pytest, is ``ballot_guard.run.interpreter``'s job (re-exported here).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, cast

from ballot_guard.errors import CannotJudge
from ballot_guard.run import isolation, site_watch
from ballot_guard.run.interpreter import (
    HANDSHAKE_TIMEOUT,
    HYPOTHESIS_PLUGIN,
    RunnerInfo,
    check_not_tracked,
    find_interpreter,
    forkserver_command,
    parse_describe,
    probe,
    resolve_runner,
)
from ballot_guard.run.protocol import (
    Filed,
    Isolation,
    Policy,
    Reply,
    Request,
    RunCard,
    RunRequest,
    RunResult,
)
from ballot_guard.run.schedule import Scheduler
from ballot_guard.run.trash import Trash
from ballot_guard.vocabulary import Outcome
from ballot_guard.vote.freeze_hint import excerpt

__all__ = ["Run", "RunnerInfo", "Session", "check_not_tracked", "find_interpreter",
           "outcome_of", "probe", "pytest_args", "resolve_runner", "run_env"]


@dataclass(frozen=True)
class Run:
    outcome: Outcome
    exit: int | None          # pytest's exit code; None when killed or crashed by a signal
    seconds: float
    passed: int = 0
    failed: int = 0
    detail: str = ""          # why an error/timeout happened, in one line
    output: str = ""          # the tail of the run's output, kept for failures
    plugins: tuple[str, ...] = ()  # pytest plugins that may be project code (real paths)
    early: bool = False       # project code ran before the run was released
    started: float | None = None  # when it was released: seconds since the runs began
    ended: int | None = None  # processes it left running, ended with it (None: unknown)
    cpu: float | None = None  # CPU seconds it used once released (None: unknown)

    def to_json(self) -> RunCard:
        card: RunCard = {"outcome": self.outcome, "exit": self.exit,
                         "seconds": round(self.seconds, 3), "passed": self.passed,
                         "failed": self.failed,
                         "started": None if self.started is None else round(self.started, 3)}
        if self.outcome != "pass" and self.output.strip():
            card["failure"] = excerpt(self.output)
        if self.ended is not None:
            card["ended"] = self.ended
        if self.cpu is not None:
            card["cpu"] = round(self.cpu, 3)
        return card


def outcome_of(exit_code: int | None, timed_out: bool) -> Outcome:
    """pytest 0 pass, 1 fail; a timeout counts as failing; anything else broke the runner."""
    if timed_out:
        return "timeout"
    if exit_code == 0:
        return "pass"
    if exit_code == 1:
        return "fail"
    return "error"


# What the environment may not carry into a run: how Python and pytest start and
# where they look (a kept PYTHONPATH leads into the checkout; PYTEST_PLUGINS loads
# plugins; COV_CORE_* and COVERAGE_PROCESS_START make a site .pth run coverage).
# Every PYTHON* variable goes except these encoding choices; the gate sets its own.
_KEEP_PYTHON = frozenset({"PYTHONIOENCODING", "PYTHONUTF8", "PYTHONCOERCECLOCALE",
                          "PYTHONLEGACYWINDOWSFSENCODING", "PYTHONLEGACYWINDOWSSTDIO"})
_SCRUB_PREFIXES = ("PYTHON", "PYTEST_", "HYPOTHESIS_", "COV_CORE_")
_SCRUB = frozenset({"COVERAGE_PROCESS_START", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                    "XDG_DATA_HOME", "XDG_STATE_HOME"})
def run_env(environ: Mapping[str, str] | None, *, seed: int,
            pycache: str | None = None) -> dict[str, str]:
    """The one environment every run (and the forkserver) gets (``pycache`` is ignored:
    each run has its own private bytecode folder)."""
    env = {k: v for k, v in (os.environ if environ is None else environ).items()
           if not (k in _SCRUB or (k.startswith(_SCRUB_PREFIXES) and k not in _KEEP_PYTHON))}
    env["PYTHONHASHSEED"] = str(seed % 4294967296)
    env["PYTHONNOUSERSITE"] = "1"
    return env


def pytest_args(path: str, info: RunnerInfo, seed: int, *, hypothesis: bool = True) -> list[str]:
    """Identical arguments for every run of every property.  ``hypothesis`` False: the
    runner does not load Hypothesis (``interpreter.names_hypothesis``), so its pytest
    plugin is off too (its terminal summary imports Hypothesis: about half a second a
    run, measured under load) and none of its options is given."""
    args = [path, "--verbosity=-1", "-p", "no:cacheprovider",
            *(() if hypothesis else ("-p", f"no:{HYPOTHESIS_PLUGIN}")),
            "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    if info.hypothesis is not None and hypothesis:
        args.append(f"--hypothesis-seed={seed}")
    if info.randomly:
        args.append(f"--randomly-seed={seed}")
    return args


# --- running -----------------------------------------------------------------

def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _end_run(pid: int) -> None:
    """Ask a run's keeper to end the run and everything it started (forkserver.py)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def _ended(path: str | None) -> int | None:
    """What the run left running and was ended with it, as its keeper (hermetic level)
    or its PID namespace's init (in the sandbox) counted; None: unknown."""
    return _ints(_counts_raw(path)[0]).get("ended") if path else None


def _log_end(path: str, size: int) -> str | None:
    """The last ``size`` bytes of a run's log, as text (None when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode(errors="replace")
    except OSError:
        return None


def _tail(path: str, lines: int = 25) -> str:
    text = _log_end(path, 8192)
    return "" if text is None else "\n".join(text.splitlines()[-lines:])


FORGED = ("the run's result does not carry the judge's signature: something other than "
          "the judge wrote it (code under test forging its outcome), so it cannot count")


def _counts_raw(path: str, key: str | None = None) -> tuple[RunResult, bool]:
    """The run's result file, and whether it is forged: with ``key`` (the run's), only
    a file the judge signed with it (``forkserver.signed``) is read; another one is
    forged.  No file, or one that does not parse once signed: empty, not forged."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return {}, False
    if key is not None:
        mac, _, blob = blob.partition(b"\n")
        want = hashlib.blake2b(blob, key=bytes.fromhex(key), digest_size=32).hexdigest()
        if mac != want.encode():  # one look a run: no timing to learn from
            return {}, True
    try:
        data = json.loads(blob)
    except (ValueError, RecursionError):
        return {}, False
    return (cast(RunResult, data) if isinstance(data, dict) else {}), False  # read with checks


def _ints(data: Mapping[str, Any]) -> dict[str, int]:
    return {k: v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


_SUMMARY = re.compile(r"^(?:=+ )?(\d+ [a-z]+(?:, \d+ [a-z]+)*) in \d+(?:\.\d+)?s\b",
                      re.MULTILINE)


def _summary(log: str) -> dict[str, int] | None:
    """pytest's own final count line (``1 failed, 2 passed in 0.03s``) from a run's log."""
    text = _log_end(log, 16384)
    if text is None:
        return None
    found = _SUMMARY.findall(text)
    if not found:
        return None
    counts: dict[str, int] = {}
    for part in found[-1].split(", "):
        n, _, word = part.partition(" ")
        word = {"errors": "error", "warnings": "warning"}.get(word, word)
        counts[word] = counts.get(word, 0) + int(n)
    return counts


def _listed(raw: Mapping[str, Any], key: str) -> list[str]:
    """The names a run's result lists under ``key``; a value of another shape (the run
    wrote the file itself) is one name, so that it still counts."""
    value = raw.get(key)
    if not value:
        return []
    return [str(n) for n in value] if isinstance(value, list) else [str(value)]


def _tampered(raw: Mapping[str, Any]) -> str | None:
    """Why a run cannot count whatever it exited with: the judge changed under it."""
    late = _listed(raw, "late")
    if late:
        names = ", ".join(late)
        return (f"the run imported {names}, which no file of the checkout names, so the runner "
                f"had not loaded it and the judge could not watch it (the code under test could "
                f"have changed it unseen): name it beside the properties, for example `import "
                f"{late[0]}` in a conftest.py of the properties directory")
    registered = _listed(raw, "registered")
    if registered:
        return (f"a pytest plugin was registered during the run ({', '.join(registered[:3])}):"
                " a plugin can rewrite outcomes")
    replaced = _listed(raw, "replaced")
    if replaced:
        names = ", ".join(replaced[:4]) + (f" and {len(replaced) - 4} more"
                                           if len(replaced) > 4 else "")
        return (f"the code under test replaced the test machinery ({names}) during the run: "
                "its outcome cannot be trusted")
    rebound = _listed(raw, "rebound")
    if rebound:
        names = ", ".join(rebound[:3]) + (f" and {len(rebound) - 3} more"
                                          if len(rebound) > 3 else "")
        return (f"what the oracle's modules hold is not what their code defines ({names}): "
                "a test, or a reference it uses, was swapped in the run; its outcome cannot "
                "be trusted")
    unrepointable = _listed(raw, "unrepointable")
    if unrepointable:
        return (f"the import path {', '.join(unrepointable[:3])} leads into the main checkout "
                "and has no counterpart in the worktree under test: this would vote on other "
                "code")
    from_main = _listed(raw, "from_main")
    if from_main:
        return (f"the run imported {', '.join(from_main[:3])} from the main checkout, not from "
                "the revision under test")
    return None


def _unfinished_pass(raw: Mapping[str, Any], log: str) -> tuple[Outcome, str] | None:
    """(outcome, why) when pytest said 0 but the session does not show every test
    checked: no session end recorded (``os._exit`` from the code under test), an
    early end (``pytest.exit``), a test that failed, errored, skipped or xfailed
    itself while running, nothing run at all, or pytest's own counts (its terminal
    statistics, its summary line) telling another story.  None: a real pass."""
    if not raw:
        return "error", ("the run ended without finishing its pytest session (os._exit or "
                         "a crash in the code under test), though its exit code was 0")
    counts = _ints(raw)
    if counts.get("failed", 0) or counts.get("errors", 0):
        return "error", (f"pytest's exit code was 0 but {counts.get('failed', 0)} test(s) "
                         f"failed and {counts.get('errors', 0)} errored: the exit was forged")
    if raw.get("complete") is False:
        return "error", ("the pytest session ended before every collected test ran "
                         "(pytest.exit?), though its exit code was 0")
    if raw.get("dodged"):
        return "fail", (f"{raw['dodged']} test(s) skipped or xfailed themselves while running "
                        "(not by a mark in the property file): a property must check")
    if not raw.get("passed"):
        return "error", "no test passed: every test was skipped"
    if counts.get("passed", 0) + counts.get("skipped", 0) != counts.get("collected", -1):
        return "error", (f"{counts.get('collected')} test(s) collected but "
                         f"{counts.get('passed', 0)} passed and {counts.get('skipped', 0)} "
                         "skipped by a mark")
    stats = raw.get("stats")
    summary = _summary(log)
    for label, seen in (("terminal statistics", stats), ("summary line", summary)):
        if not isinstance(seen, dict):
            return "error", f"pytest's {label} is missing from the run, though its exit was 0"
        if (_n(seen, "passed") + _n(seen, "xpassed"), _n(seen, "failed"), _n(seen, "error")) \
                != (counts.get("passed", 0), 0, 0):
            return "error", (f"pytest's {label} ({_show(seen)}) disagree with the run's own "
                             f"count ({counts.get('passed', 0)} passed)")
    return None


def _n(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key, 0)
    return v if isinstance(v, int) and not isinstance(v, bool) else -1


def _show(d: Mapping[str, Any]) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(d.items())) or "nothing"


def _remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _after(cpu: float | None, prep: float | None) -> float | None:
    """The CPU a run used once released: all it used, less its preparation."""
    if cpu is None:
        return None
    return max(0.0, cpu - prep) if prep is not None else cpu


def _seconds(value: Any) -> float | None:
    """A count of seconds the runner reported, if it is one."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e9
    return float(value) if ok else None


def _finish(req: RunRequest, exit_code: int | None, sig: int | None, timed_out: bool,
            start: float, timeout: float, discard: Callable[[str], None] = _remove,
            cpu: Any = None, prep: Any = None) -> Run:
    seconds = time.monotonic() - start
    outcome = outcome_of(exit_code, timed_out)
    raw, forged = _counts_raw(req["result"], req.get("key"))
    counts = _ints(raw)
    tampered = FORGED if forged else _tampered(raw) if raw else None
    unfinished = _unfinished_pass(raw, req["log"]) if outcome == "pass" else None
    if tampered is not None and outcome != "timeout":
        outcome, detail = "error", tampered
    elif unfinished is not None:
        outcome, detail = unfinished
    elif outcome == "fail" and raw and raw.get("complete") and not (
            counts.get("failed", 0) or counts.get("errors", 0) or raw.get("dodged")):
        outcome, detail = "error", ("pytest's exit code was 1 but the run's counts show no "
                                    "failure: the counts were forged")
    elif timed_out:
        detail = f"killed after the {timeout:g} s timeout"
    elif sig is not None:
        detail = f"the run died on signal {sig}"
    elif exit_code == 5:
        detail = "no tests collected (pytest exit 5)"
    elif exit_code in (2, 3, 4):
        detail = {2: "interrupted", 3: "pytest internal error", 4: "pytest usage error"}[
            exit_code] + f" (pytest exit {exit_code})"
    elif outcome == "error":
        detail = f"the runner crashed (exit {exit_code})"
    else:
        detail = ""
    plugins = raw.get("plugins")
    run = Run(outcome, exit_code, seconds, counts.get("passed", 0),
              counts.get("failed", 0) + counts.get("errors", 0), detail,
              "" if outcome == "pass" else _tail(req["log"]),
              tuple(str(p) for p in plugins) if isinstance(plugins, list) else (),
              bool(raw.get("early")), start,
              _ended(req.get("ended")), _after(_seconds(cpu), _seconds(prep)))
    if req.get("dir"):
        discard(req["dir"])  # its TMPDIR, HOME, bytecode, log
    return run


# Every wait on the fork server has a deadline (the code under test runs in its
# children and can stop it, flood its pipes or kill it):
PROMPT = 30.0  # seconds it has to answer a request that runs nothing (prepare)
WAITS = 0.25  # a run on a CPU for at most this share of its time mostly waits (``_waits``)
GRACE = 5.0  # seconds it has to report a run's end once the run's group is killed
LINE_LIMIT = 1 << 20  # a reply longer than this is not one of its replies: dropped


class RunnerStopped(EOFError):
    """The fork server did not answer in time: it is killed, and replaced by the caller."""


class _ForkServer:
    """One forking parent under the project's interpreter, shared by every job slot.

    ``prepare`` forks a child that loads pytest's options and installed plugins
    and then waits; ``go`` releases it.  Replies carry the request id; one
    reader thread files them, and each caller waits for its own, never past a
    deadline: a run's own (``start + timeout``, then ``GRACE`` for its end to be
    reported once its group is killed), ``PROMPT`` for a prepare.  A server that
    misses one is killed (``RunnerStopped``); the session starts another.
    Requests are written without blocking, so a pipe the code under test filled
    cannot hold the gate either.
    """

    def __init__(self, python: str, cwd: str, env: Mapping[str, str], errlog: str,
                 sandbox: Mapping[str, object], top: str | None = None) -> None:
        self.python = python
        self.errlog = errlog
        self.isolation: Isolation | None = None
        with open(errlog, "ab") as err:
            self.proc = subprocess.Popen([*forkserver_command(python, "serve", top=top, tree=cwd),
                                          json.dumps(dict(sandbox))],
                                         cwd=cwd, env=dict(env),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, start_new_session=True)
        assert self.proc.stdin is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        # replies as they came: the server runs beside the code under test, so each is
        # read with checks, never trusted to have the shape protocol.Filed names
        self.inbox: dict[str, Filed] = {}
        self.eof = False
        self.killed = False
        self.cond = threading.Condition()
        self.send_lock = threading.Lock()
        self.live: set[int] = set()   # prepared or running children (process groups)
        self.pids: dict[str, int] = {}  # request id -> its child
        self.ids = itertools.count(1)
        self.info: RunnerInfo | None = None
        self.idle = False  # whether a run prepared ahead can wait at the idle priority
        self.loaded = False  # whether it was told what to load (``load``)
        self.reader = threading.Thread(target=self._reader, daemon=True)
        self.reader.start()

    def _reader(self) -> None:
        """File every reply line; drop what is not one (junk, or a line past LINE_LIMIT)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf, skipping = b"", False
        try:
            while data := os.read(fd, 65536):
                buf += data
                while (nl := buf.find(b"\n")) >= 0:
                    line, buf = buf[:nl], buf[nl + 1:]
                    if skipping:
                        skipping = False
                    else:
                        self._file(line)
                if len(buf) > LINE_LIMIT:
                    buf, skipping = b"", True
        except OSError:
            pass
        finally:
            with self.cond:
                self.eof = True
                self.cond.notify_all()
            self.proc.stdout.close()  # only here: no other thread reads it

    def _file(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if isinstance(msg, dict):
            with self.cond:
                self.inbox.setdefault(str(msg.get("id")), {}).update(cast(Filed, msg))
                self.cond.notify_all()

    def _await(self, rid: str, keys: tuple[str, ...],
               deadline: float) -> Filed | None:
        """The reply for ``rid`` once it holds one of ``keys``; None at the deadline."""
        with self.cond:
            while True:
                got = self.inbox.get(rid, {})
                if any(k in got for k in keys):
                    return got
                if self.eof:
                    raise EOFError
                wait = deadline - time.monotonic()
                if wait <= 0:
                    return None
                self.cond.wait(wait)

    def load(self, hypothesis: bool, properties: str | None = None) -> None:
        """Tell the server, once, whether to load Hypothesis before the runs (it waits
        for this after importing pytest), and where the property files are."""
        if self.loaded:
            return
        self.loaded = True
        try:
            self._send({"op": "load", "hypothesis": hypothesis, "properties": properties},
                       time.monotonic() + HANDSHAKE_TIMEOUT)
        except (RunnerStopped, OSError):
            pass  # it is gone: the handshake says so

    def handshake(self) -> RunnerInfo:
        if self.info is not None:
            return self.info
        self.load(True)  # not told: everything, as a run may need it
        try:
            line = self._await("None", ("ok",), time.monotonic() + HANDSHAKE_TIMEOUT)
        except EOFError:
            line = None
        if line is None:
            self.close()
            last = _tail(self.errlog, 1)
            raise CannotJudge(f"runner interpreter {self.python} did not start"
                              + (f": {last}" if last else ""))
        self.info = parse_describe(self.python, json.dumps(line))
        self.isolation = line.get("isolation")
        self.idle = line.get("idle") is True
        return self.info

    def _send(self, msg: Request, deadline: float) -> None:
        """Write one request, without blocking past ``deadline`` (RunnerStopped then)."""
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview((json.dumps(msg) + "\n").encode())
        if not self.send_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            self._stopped("took no request")
        try:
            while view:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stopped("took no request")
                if not select.select([], [fd], [], left)[1]:
                    continue
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    continue
        finally:
            self.send_lock.release()

    def _stopped(self, what: str) -> NoReturn:
        self.kill()
        raise RunnerStopped(f"the runner {what} in time (stopped or flooded by the code "
                            "under test?): it was killed")

    def _child(self, got: Mapping[str, Any], key: str) -> int:
        pid = got.get(key)
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
            self._stopped("gave no process id")  # never a signal to group 0 or 1
        return pid

    def prepare(self, req: RunRequest) -> str:
        rid = str(next(self.ids))
        deadline = time.monotonic() + PROMPT
        self._send({"op": "prepare", "id": rid, "req": req}, deadline)
        got = self._await(rid, ("prepared",), deadline)
        if got is None:
            self._stopped("did not prepare a run")
        pid = self.pids[rid] = self._child(got, "prepared")
        self.live.add(pid)
        return rid

    def held(self, rid: str, within: float) -> bool | None:
        """Wait until a prepared run is held before anything of the project runs:
        True when no project code ran before that point, False when some did, None
        when it cannot tell (it ended first, or did not say within ``within``
        seconds: then it is left to go as it is)."""
        try:
            got = self._await(rid, ("ready",), time.monotonic() + within)
        except EOFError:
            return None
        said = None if got is None else got.get("ready")
        return said if isinstance(said, bool) else None

    def go(self, rid: str, req: RunRequest, timeout: float, *, alone: bool = True,
           meanwhile: Callable[[], None] = lambda: None,
           discard: Callable[[str], None] = _remove) -> Run:
        """Release a prepared run and wait for its end, ``timeout`` at most: then its
        group is killed, and a server that cannot report that end within GRACE too.
        ``meanwhile`` is called once the run is released (preparing the next one
        there keeps its fork off the run's path).

        Alone on its server, such a run is a ``timeout``.  Beside other runs
        (``alone`` False) it may not be the one that stopped the server: RunnerStopped,
        and the caller runs it again alone."""
        start = time.monotonic()
        deadline = start + timeout
        pid = self.pids.pop(rid)
        status: Reply | None = None
        try:
            self._send({"op": "go", "id": rid}, deadline)
            if self._await(rid, ("started",), deadline) is not None:
                meanwhile()
                status = self._await(rid, ("exit", "signal"), deadline)
            timed_out = status is None
            if timed_out:
                _end_run(pid)  # its keeper ends the run and all it started
                status = self._await(rid, ("exit", "signal"), time.monotonic() + GRACE)
                if status is None:  # it cannot report: stopped, or its replies flooded
                    self.kill()
                    if not alone:
                        raise RunnerStopped("the runner could not report a run's end in time "
                                            "(stopped or flooded): it was killed")
                    status = {}
        except EOFError:
            _end_run(pid)  # the server died under it: nothing of the run stays
            raise
        finally:
            self.live.discard(pid)
            with self.cond:
                got = self.inbox.pop(rid, None) or {}
        assert status is not None
        return _finish(req, status.get("exit"), status.get("signal"), timed_out, start,
                       timeout, discard, status.get("cpu"), got.get("prep"))

    @property
    def alive(self) -> bool:
        return not self.killed and self.proc.poll() is None and not self.eof

    def kill(self) -> None:
        """End the server now (SIGKILL ends a stopped process too); its runs have their
        own groups, which ``close`` ends."""
        self.killed = True
        if self.proc.poll() is None:
            _kill_group(self.proc.pid)
            try:
                self.proc.wait(timeout=GRACE)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        for pid in list(self.live):
            _end_run(pid)  # its keeper ends the run and what it started, then exits
        self.live.clear()
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # nothing buffered: requests are written raw
            except OSError:
                pass
        try:  # it cancels what it prepared and waits for every run's keeper
            self.proc.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        self.reader.join(timeout=GRACE)


def _reap(proc: subprocess.Popen[bytes]) -> int:
    """The exit status of a process just sent SIGKILL (-9 if it is not gone within GRACE)."""
    try:
        return proc.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        return -signal.SIGKILL


def _private_env(req: Mapping[str, Any]) -> dict[str, str]:
    """A fresh process's own TMPDIR and HOME (made before it starts)."""
    for key in ("tmp", "home_dir"):
        os.makedirs(req[key], exist_ok=True)
    return {"TMPDIR": req["tmp"], "TEMP": req["tmp"], "TMP": req["tmp"],
            "HOME": req["home_dir"]}


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _run_fresh(python: str, req: RunRequest, *, cwd: str, env: Mapping[str, str],
               timeout: float, live: set[int], top: str | None = None,
               discard: Callable[[str], None] = _remove) -> Run:
    """The fallback: one fresh process per run (its own process group)."""
    start = time.monotonic()
    shown = {k: v for k, v in req.items() if k != "key"}  # the key goes on stdin, never in
    with open(req["log"], "wb") as log:  # arguments a run could read (/proc/<pid>/cmdline)
        try:
            proc = subprocess.Popen(
                [*forkserver_command(python, "once", top=top, tree=cwd), json.dumps(shown)],
                cwd=cwd, env={**env, **_private_env(req)}, stdin=subprocess.PIPE, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            shutil.rmtree(req["dir"], ignore_errors=True)
            return Run("error", None, 0.0, detail=f"cannot start {python}: {exc}")
    assert proc.stdin is not None
    try:
        proc.stdin.write(req.get("key", "").encode() + b"\n")
        proc.stdin.close()
    except OSError:
        pass  # it is gone already: its end says why
    live.add(proc.pid)
    timed_out = False
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _end_run(proc.pid)
        code = _reap(proc)
    except BaseException:
        _end_run(proc.pid)
        _reap(proc)
        raise
    finally:
        live.discard(proc.pid)
    sig = -code if code < 0 else None
    return _finish(req, None if sig else code, sig, timed_out, start, timeout, discard)


def _no_server(sandbox: Mapping[str, object]) -> Isolation:
    """The isolation of fresh-process runs: the sandbox lives in the fork server only."""
    off = sandbox.get("mode", "off") == "off"
    return {"level": "hermetic", "namespaces": [], "network": True,
            "reason": 'sandbox = "off"' if off else "no fork server (fresh process per run)"}


class Session:
    """Runs properties for one gate: same interpreter, environment, cwd and seed for all."""

    def __init__(self, python: str, *, cwd: str, env: Mapping[str, str], workdir: str,
                 seed: int, timeout: float, jobs: int = 1, fork: bool = True,
                 top: str | None = None, sandbox: Policy | None = None) -> None:
        self.python = python
        self.sandbox = dict(sandbox or {"mode": "off"})
        self.isolation: Isolation | None = None  # the runner's record, once started
        self.cwd = cwd
        self.top = top or cwd  # the main checkout (cwd is the worktree under --rev)
        self.env = dict(env)
        self.workdir = workdir
        self.seed = seed
        self.timeout = timeout
        self.jobs = max(1, jobs)
        self.fork = fork and hasattr(os, "fork") and not self.env.get("BALLOT_GUARD_NO_FORK")
        self.ahead = not self.env.get("BALLOT_GUARD_NO_AHEAD")
        self.info: RunnerInfo | None = None
        self.forkserver: _ForkServer | None = None
        self.spawn_lock = threading.Lock()
        self.stopped = False
        self.scheduler: Scheduler | None = None
        self.going = 0  # runs released and not ended, over all slots
        self.going_lock = threading.Lock()
        self.cpus = _usable_cpus()
        self.fresh: set[int] = set()  # fallback runs going now (process groups)
        self.counter = itertools.count(1)
        self.site: site_watch.Signature = {}
        self.site_lock = threading.Lock()
        self.hidden: int | None = None  # what isolation.hide found, while it is hidden
        self.trash = Trash(workdir)  # each run's directory, out of the next one's way
        self.busy: dict[str, float] = {}  # path -> CPU share of its last run (``_waits``)
        self.hypothesis: bool | None = None  # whether the runner loads Hypothesis (``load``)
        self.properties: str | None = None  # the properties directory (``load``)

    def load(self, hypothesis: bool, properties: str | None = None) -> None:
        """Whether the runner loads Hypothesis before the runs: only where a file of the
        checkout names it (``interpreter.names_hypothesis``); and the checkout's
        properties directory, whose files and imports it reads once (``sources.py``).
        Told to every runner started."""
        self.hypothesis = hypothesis
        self.properties = properties
        if self.forkserver is not None:
            self.forkserver.load(hypothesis, properties)

    def launch(self) -> None:
        """Start the runner (without waiting for it): overlaps its start-up."""
        if self.fork and self.forkserver is None:
            self.forkserver = self._spawn()

    def start(self) -> RunnerInfo:
        """Wait for the runner; CannotJudge if the interpreter cannot import pytest."""
        self.launch()
        if self.hidden is None:  # before any run: out of their sight (while it waits)
            self.hidden = isolation.hide()
        if self.fork:
            assert self.forkserver is not None
            self.info = self.forkserver.handshake()
            self.isolation = self.forkserver.isolation
            if not self.info.fork:
                self.fork = False
                self.close()
        if self.info is None or not self.fork:
            self.isolation = _no_server(self.sandbox)
            got = probe(self.python, cwd=self.cwd, env=self.env, top=self.top)
            self.info = RunnerInfo(got.python, got.pytest, got.hypothesis, got.randomly, False,
                                   got.site)
        self.site = site_watch.signature(self.info.site)
        return self.info

    def _checked(self, run: Run) -> Run:
        """The run, an ``error`` when it changed the interpreter's start-up files."""
        assert self.info is not None
        with self.site_lock:
            now = site_watch.signature(self.info.site)
            moved = site_watch.changed(self.site, now)
            self.site = now
        if not moved:
            return run
        return dataclasses.replace(run, outcome="error", detail=(
            f"the run changed the runner interpreter's start-up files ({', '.join(moved[:3])}):"
            " code there would run inside every later run and gate; remove it, and check "
            "the environment"))

    def _spawn(self) -> _ForkServer:
        n = len(os.listdir(self.workdir))
        z = _ForkServer(self.python, self.cwd, self.env,
                        os.path.join(self.workdir, f"forkserver-{n}.log"), self.sandbox,
                        self.top)
        if self.hypothesis is not None:
            z.load(self.hypothesis, self.properties)
        return z

    def request(self, path: str) -> RunRequest:
        assert self.info is not None
        base = os.path.join(self.workdir, f"run-{next(self.counter)}")
        os.mkdir(base)
        loads = self.hypothesis is not False or not self.fork  # a fresh process loads it
        return {"args": pytest_args(path, self.info, self.seed, hypothesis=loads), "dir": base,
                "log": os.path.join(base, "log"), "result": os.path.join(base, "result.json"),
                "home": os.path.join(base, "hypothesis"), "tmp": os.path.join(base, "tmp"),
                "home_dir": os.path.join(base, "home"), "pycache": os.path.join(base, "pycache"),
                "ended": os.path.join(base, "ended"), "key": os.urandom(32).hex()}

    def run_all(self, tasks: Sequence[tuple[Hashable, str]],
                on_run: Callable[[Hashable, Run], None] = lambda k, r: None,
                busy: Mapping[str, float] | None = None) -> dict[Hashable, Run]:
        """Run each (key, property path) once, ``jobs`` at a time; each a fresh process state.

        The order is ``tasks``' own, except that runs of one path never overlap nor
        follow each other directly while another path has runs (``schedule.Scheduler``).
        ``busy``: the share of its time each path's runs spent on a CPU, as known
        before (the last scorecard); each run of this gate updates it.
        """
        sched = self.scheduler = Scheduler(tasks)
        if self.stopped:
            sched.stop()
        results: dict[Hashable, Run] = {}
        origin = time.monotonic()
        self.busy.update(busy or {})

        def done(task: tuple[Hashable, str], run: Run) -> None:
            if run.cpu is not None and run.seconds > 0:
                self.busy[task[1]] = run.cpu / run.seconds
            run = self._checked(run)
            if run.started is not None:
                run = dataclasses.replace(run, started=run.started - origin)
            assert self.scheduler is not None  # sched, or the one of the runs run again
            self.scheduler.done(task, run.seconds)
            results[task[0]] = run
            on_run(task[0], run)

        if self.fork and self.jobs > 1:
            # a stopped or flooded server is one for every slot: which run stopped it is
            # not known, so the runs it took down are run again, alone, afterwards
            lost: list[tuple[Hashable, str]] = []
            self._pool([functools.partial(self._work, sched, done, lost)
                        for _ in range(self.jobs)])
            if lost:
                again = self.scheduler = Scheduler(lost)
                if self.stopped:
                    again.stop()
                self._work(again, done, None)
            return results
        if not self.fork:
            def fresh_worker() -> None:
                while (task := sched.take()) is not None:
                    done(task, _run_fresh(self.python, self.request(task[1]), cwd=self.cwd,
                                          env=self.env, timeout=self.timeout,
                                          live=self.fresh, top=self.top,
                                          discard=self.trash.put))
            workers = [fresh_worker] * self.jobs
        else:
            workers = [functools.partial(self._work, sched, done, None)]
        if len(workers) == 1:
            workers[0]()
            return results
        self._pool(workers)
        return results

    def _pool(self, workers: Sequence[Callable[[], None]]) -> None:
        """Each worker in a thread of its own, all waited for; then the first error, the
        runner closed.  A worker's error stops the schedule (the others end after their
        run); Ctrl-C closes the runner at once (the workers see their runner end).  Plain
        threads: ``concurrent.futures`` imports logging, 3-4 ms more before the runner
        can start."""
        errors: list[BaseException] = []

        def work(worker: Callable[[], None]) -> None:
            try:
                worker()
            except BaseException as exc:  # noqa: BLE001 - raised by the caller
                errors.append(exc)
                if self.scheduler is not None:
                    self.scheduler.stop()

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        except BaseException:
            self.close()  # Ctrl-C: kill the runs now; the workers see their runner end
            for t in threads:
                if t.ident is not None:
                    t.join()
            raise
        if errors:
            self.close()
            raise errors[0]

    def _work(self, sched: Scheduler, done: Callable[[tuple[Hashable, str], Run], None],
              lost: list[tuple[Hashable, str]] | None) -> None:
        """One job slot's loop: release a run, prepare the next while it runs (once safe).

        With ``lost`` (job slots sharing one server), a run whose server ended or was
        killed under it is put there, not voted: the caller runs it again alone."""
        ahead = False  # only after a run showed no project code before its "go"
        task = sched.take()
        prepared: tuple[str, RunRequest, _ForkServer] | None = None
        while task is not None:
            nxt: tuple[Hashable, str] | None = None
            try:
                z = self._live_forkserver()
                if prepared is not None and prepared[2] is not z:
                    prepared = None  # it died with its forkserver
                if prepared is None:
                    req = self.request(task[1])
                    prepared = (z.prepare(req), req, z)
                rid, req, _ = prepared
                prepared = None
                if not ahead and self.ahead:  # no project code before its hold: from now on
                    ahead = z.held(rid, min(PROMPT, self.timeout)) is True
                if ahead and self.ahead and self._waits(task[1]) and self._core_free(z):
                    nxt = sched.take(wait=False)

                def prepare_next(z: _ForkServer = z, nxt: tuple[Hashable, str] | None = nxt
                                 ) -> None:
                    nonlocal prepared
                    if nxt is not None:  # its start-up overlaps this run; no project code yet
                        nreq = self.request(nxt[1])
                        nreq["idle"] = z.idle
                        prepared = (z.prepare(nreq), nreq, z)

                with self.going_lock:
                    self.going += 1
                try:
                    run = z.go(rid, req, self.timeout, alone=lost is None,
                               meanwhile=prepare_next, discard=self.trash.put)
                finally:
                    with self.going_lock:
                        self.going -= 1
            except (EOFError, OSError, ValueError, AssertionError) as exc:
                prepared = None
                if lost is not None and isinstance(exc, (EOFError, OSError)) \
                        and not self.stopped:
                    lost.append(task)  # its server went down under it: run it again alone
                    sched.done(task, 0.0)
                    task = nxt if nxt is not None else sched.take()
                    continue
                run = Run("error", None, 0.0, detail=str(exc) if isinstance(exc, RunnerStopped)
                          else "the runner process ended unexpectedly")
            done(task, run)
            if run.exit is not None:
                ahead = not run.early
            task = nxt if nxt is not None else sched.take()

    def _waits(self, path: str) -> bool:
        """Whether runs of ``path`` mostly wait (on a CPU at most ``WAITS`` of their time
        once released; a quarter, so that a run that computes on a loaded machine,
        waiting for a CPU, still counts as computing): only beside those is the next
        run prepared.  A run that
        computes would share the machine with a preparation (caches, memory, the other
        core's power): what it measures of time would not be what it measures alone.
        Unknown (no run of it yet, in this gate or the last scorecard): it computes."""
        share = self.busy.get(path)
        return share is not None and share <= WAITS

    def _core_free(self, z: _ForkServer) -> bool:
        """Whether preparing a run ahead now takes no CPU from a running one: it waits
        at the idle priority, or (where that cannot be undone, as for most users) a
        core is left over once this slot's run goes."""
        if z.idle:
            return True
        with self.going_lock:
            return self.going + 1 < self.cpus

    def _live_forkserver(self) -> _ForkServer:
        """The shared runner, restarted if it died (its runs came back as errors)."""
        with self.spawn_lock:
            if self.stopped:
                raise EOFError
            z = self.forkserver
            if z is None or not z.alive:
                if z is not None:
                    z.close()
                z = self.forkserver = self._spawn()
            z.handshake()
            return z

    def close(self) -> None:
        self.stopped = True
        if self.scheduler is not None:
            self.scheduler.stop()
        for pid in list(self.fresh):
            _end_run(pid)
        if self.forkserver is not None:
            self.forkserver.close()
        self.forkserver = None
        self.trash.close()
        isolation.restore(self.hidden)
        self.hidden = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
