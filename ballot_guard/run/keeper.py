"""A run's keeper: nothing a run starts is left behind (a standalone module, stdlib only).

Loaded by path by ``forkserver.py`` (``_sibling``), under the project's interpreter,
before anything of the project runs; it is one of the judge's modules that a run's
integrity check watches.

Each run has a keeper: a small process between the serving parent (or the
``once`` command) and the run, which the run's code cannot reach.  The keeper
is a "child subreaper" (Linux ``prctl``), so every process the run starts and
leaves orphaned, daemons that ``setsid`` out of its group included, becomes
the keeper's child instead of init's.

At the hermetic level the keeper is what ends them: when the run ends (or is
killed: a SIGTERM to the keeper kills the run), it stops and kills every
process still below it, writes how many to ``req["ended"]``, and exits as the
run did.  In the OS sandbox the run's PID namespace does that job: its init
(``sandbox.py``) counts and ends every process of the namespace, none can
leave it, and it writes the count from inside the run's mount namespace (the
keeper lives in the server's, where every mount is read-only: it writes
nothing there).  A SIGTERM to the keeper is passed on to that init, which
kills the run, then ends and counts the rest as at any other end.  What is
still below the keeper once the namespace is gone (nothing, unless the init
was killed) is killed all the same.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

try:  # a keeper reports the CPU its run used (POSIX)
    import resource
except ImportError:  # pragma: no cover - no fork there either: no keeper
    resource = None  # type: ignore[assignment]

if TYPE_CHECKING:  # runs alone in the project's interpreter: names for the checker
    from ballot_guard.run.protocol import RunRequest

# Exit code of a child whose own machinery (not pytest) failed.
CRASH = 70
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
_LIBC: Any = None


def libc() -> Any:
    global _LIBC  # noqa: PLW0603 - loaded once, on first use
    if _LIBC is None:
        import ctypes
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def subreaper() -> bool:
    try:
        return bool(libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except Exception:  # noqa: BLE001 - not Linux: the run's process group is all we end
        return False


def dumpable(on: bool) -> None:
    """Whether other processes of this user may look into this one through ``/proc``
    (its descriptors, memory, environment): not the serving parent nor a keeper, which
    hold the pipes every run's end is reported through (a run that wrote a forged
    line into one ended another run early); a run, as any process, may (Linux
    ``PR_SET_DUMPABLE``; a process with ``CAP_SYS_PTRACE`` still may look)."""
    try:
        libc().prctl(PR_SET_DUMPABLE, int(on), 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: nothing of this kind to close
        pass


def with_parent(parent: int, stop: Callable[..., None]) -> None:
    """``stop()`` once ``parent`` is gone: the process that waits for this keeper (the
    serving parent, or the gate itself for a fresh process) ended without ending the
    run, killed hard.  Nobody would judge the run then, nor end it at its timeout."""
    import signal
    try:
        libc().prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: the gate's own end of it is all there is
        return
    if os.getppid() != parent:  # it was gone before the request was made
        stop()


def idle() -> None:
    """Prepare at the idle priority: a prepared run takes no CPU a running one wants."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def can_idle() -> bool:
    """Whether a process here may go idle and come back (unprivileged users often cannot:
    leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE of 20)."""
    if not hasattr(os, "SCHED_IDLE") or not hasattr(os, "fork"):
        return False
    pid = os.fork()
    if pid == 0:
        try:
            idle()
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def state(pid: int) -> bytes | None:
    """A process's state letter from /proc (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:].split()[0]
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int] | None:
    """``pid``'s children, from each of its threads' /proc ``children`` list; None where
    the kernel keeps no such list."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                kids += map(int, f.read().split())
        except FileNotFoundError:
            if os.path.exists(f"/proc/{pid}/task/{tid}"):
                return None  # the thread is there, its list is not: none is kept
            continue
        except (OSError, ValueError):
            continue
    return kids


def below(root: int) -> list[int]:
    """Every live (not zombie) process whose ancestry leads to ``root``: walked down
    from ``root`` through /proc's children lists (a few reads for a run's few
    processes), or, where the kernel keeps none, from every process's parent."""
    found: list[int] = []
    seen = {root}
    todo = [root]
    while todo:
        kids = children(todo.pop())
        if kids is None:
            return below_by_parent(root)
        for kid in kids:
            if kid not in seen:
                seen.add(kid)
                todo.append(kid)
                if state(kid) not in (None, b"Z"):
                    found.append(kid)
    return found


def below_by_parent(root: int) -> list[int]:
    """``below`` from every process's parent (all of /proc read)."""
    kids: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            state, ppid = stat[stat.rindex(b")") + 2:].split()[:2]
        except (OSError, ValueError):
            continue
        if state != b"Z":
            kids.setdefault(int(ppid), []).append(int(name))
    found, todo = [], list(kids.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(kids.get(pid, ()))
    return found


def reap(ended: Callable[[int, int, float], None] = lambda pid, status, cpu: None, *,
         block: bool = False) -> None:
    """Collect every child that has ended (with ``block``, every child, waiting for
    each to end): ``ended(pid, status, cpu)`` for each, ``cpu`` the seconds of CPU it
    and every descendant it waited for used."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ended(pid, status, usage.ru_utime + usage.ru_stime)


def end_below(me: int, group: int) -> int:
    """Stop and kill what is left below this keeper (and in the run's group); how many."""
    import signal
    import time

    ended: set[int] = set()
    try:
        os.killpg(group, signal.SIGSTOP)  # its group, wherever its members went
    except OSError:
        pass
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # nothing below the keeper, alive or not: done
            break
        left = below(me)
        if not left:
            reap()
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):  # stopped first: none forks again
            for pid in left:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        ended.update(left)
        time.sleep(0.002)
        reap()
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    return len(ended)


def normal_priority(root: int, runner: int) -> None:
    """Put the run (and, in the sandbox, the namespace's init and the run below it,
    which inherited the idle priority at fork) back to the normal priority; listed
    until no new process turns up, so none forked meanwhile stays idle."""
    done: set[int] = set()
    todo = [runner]
    while todo:
        for pid in todo:
            try:
                os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
            except OSError:
                pass
            done.add(pid)
        todo = [pid for pid in below(root) if pid not in done]


def write_ended(path: str, ended: int, reaper: bool) -> None:
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            json.dump({"ended": ended, "reaper": reaper}, f)
        os.replace(tmp, path)
    except OSError as exc:  # the count is unknown then; the run's status stands
        print(f"ballot-guard keeper: cannot record what it ended: {exc}", file=sys.stderr)


def keep(req: RunRequest, go_fd: int | None, start: Any, *,
          sandboxed: bool = False, ready_fd: int | None = None,
          done_fd: int | None = None) -> int:
    """The keeper: fork the run (``start(go_fd)`` in the new process), relay its "go",
    wait for it, end what it left, exit as it did.  With ``sandboxed`` the run's
    process isolates itself in a PID namespace whose init counts what it ends.  With
    ``done_fd`` it writes the run's wait status and CPU there once nothing of the run
    is left, before its own exit (the exit of a copy of the serving parent takes a few
    milliseconds the next run need not wait for).  Never returns in the keeper; with
    ``start`` None, returns in the run's new process instead, the go descriptor the
    run waits on (a run forked from a session template goes on in its caller)."""
    import signal

    code = CRASH
    parent = os.getppid()
    go_on = -1  # the run's go descriptor, in a run that goes on in the caller
    try:
        reaper = subreaper()
        me = os.getpid()
        r_go, w_go = os.pipe() if go_fd is not None else (-1, -1)
        runner = os.fork()
        if runner == 0:
            if go_fd is not None:
                os.close(w_go)
                os.close(go_fd)
            if done_fd is not None:
                os.close(done_fd)  # the keeper's alone: the run cannot say it ended
            if start is None:
                go_on = r_go
                return go_on
            start(r_go)
            os._exit(CRASH)
        if go_fd is not None:
            os.close(r_go)
        if ready_fd is not None:
            os.close(ready_fd)  # the run's alone: it says when it is held

        def kill(*_: Any) -> None:
            try:
                os.kill(runner, signal.SIGKILL)
            except OSError:
                pass

        def stop(*_: Any) -> None:
            if not sandboxed:
                kill()
                return
            try:  # the namespace's init kills the run and ends (and counts) the rest
                os.kill(runner, signal.SIGTERM)
            except OSError:
                pass
            signal.signal(signal.SIGALRM, kill)  # an init that did not get it in time
            signal.alarm(2)

        signal.signal(signal.SIGTERM, stop)  # a timeout, or the gate stopping
        with_parent(parent, stop)  # or the one waiting for this keeper gone
        if go_fd is not None:
            go = os.read(go_fd, 1)
            os.close(go_fd)
            if go == b"g":
                if req.get("idle"):  # back to the normal priority before it goes on
                    normal_priority(me, runner)
                try:
                    os.write(w_go, b"g")
                except OSError:
                    pass  # it ended already; its status follows
            os.close(w_go)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == runner:
                break
        signal.alarm(0)
        ended = end_below(me, runner)
        if req.get("ended") and not sandboxed:
            write_ended(req["ended"], ended, reaper)
        if done_fd is not None:
            done(done_fd, status)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
            try:
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            except Exception:  # noqa: BLE001
                pass
            os.kill(os.getpid(), sig)
            code = 128 + sig
        else:
            code = os.WEXITSTATUS(status)
    except BaseException:  # noqa: BLE001 - never fall back into the caller's loop
        try:
            import traceback
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        if go_on < 0:
            os._exit(code)
    return go_on


def done(fd: int, status: int) -> None:
    """Tell the serving parent that a run is over: its wait status, and the CPU it and
    all it started used (everything the keeper waited for)."""
    try:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        os.write(fd, b"%d %.4f" % (status, usage.ru_utime + usage.ru_stime))
    except Exception:  # noqa: BLE001 - the parent has the keeper's own exit then
        pass
    try:
        os.close(fd)
    except OSError:
        pass


def becoming_keeper(close: list[int]) -> None:
    """A keeper's own process group, default signals, none of its parent's descriptors."""
    try:
        os.setpgid(0, 0)
        import signal
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in close:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except BaseException:  # noqa: BLE001
        os._exit(CRASH)
