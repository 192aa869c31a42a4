"""The OS sandbox of the runs: Linux namespaces through libc (stdlib only).

The fork server (``forkserver.py``) loads this file by path, under the project's
interpreter, and calls two functions:

- ``enter(policy)`` once, first thing: a trial in a throw-away child, then
  the server itself moves into a new user and mount namespace (its own uid and
  gid mapped to themselves), makes every mount it inherited read-only, and
  puts a minimal ``/dev`` in place.  Nothing changes when the trial fails:
  the server runs at the hermetic level and says why.
- ``isolate(policy, keep, ended)`` in each run's child, before anything of the
  run executes: new mount, PID, IPC (and, without ``network``, network)
  namespaces; the child becomes the PID 1 of its namespace, a tiny init that
  mounts the run's view, forks the run, waits for it, counts and ends what the
  run left behind (every process of the namespace), and writes that count to
  ``ended``.  The run itself gets every capability dropped, so it cannot undo
  its view, and every descriptor closed but ``keep``.

The run's view: a private tmpfs on ``/tmp``, ``/dev/shm`` and ``/var/tmp``;
each ``overlay`` path (the checkout, the main checkout) as a copy-on-write
overlay whose upper layer lives in a tmpfs of the run (what a run writes there
vanishes with it); each ``readonly`` path (the git directories, the
interpreter's environment) read-only; each ``writable`` path (the run
directory of the gate, where logs and results go) as it is; everything else
read-only; a fresh ``/proc`` showing the namespace's processes only.

``policy`` is a plain dict (it travels as JSON; ``protocol.Policy``): ``mode``
(auto, required, off), ``network`` (bool), ``overlay``, ``readonly``, ``hidden``,
``writable`` (paths).  The record is ``protocol.Isolation``.  This file runs alone in
the project's interpreter: it names those types for the type checker only.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # this file runs alone in the project's interpreter: names for the checker
    from ballot_guard.run.protocol import Isolation, Policy

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
STAGE = "/tmp/.ballot-guard-stage"

_libc: Any = None


class Refused(OSError):
    """The kernel (or a container) refused a step of the sandbox."""


def _lib() -> Any:
    global _libc  # noqa: PLW0603 - loaded once, on first use
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.c_ulong, ctypes.c_char_p]
        libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        libc.unshare.argtypes = [ctypes.c_int]
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                               ctypes.c_ulong]
        _libc = libc
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise Refused(err, f"{what}: {os.strerror(err)}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    _check(_lib().mount(_b(source), _b(target), _b(fstype), flags, _b(data)),
           f"mount {fstype or 'bind'} on {target}")


def _unshare(flags: int, what: str) -> None:
    _check(_lib().unshare(flags), f"unshare({what})")


def namespaces(policy: Policy) -> list[str]:
    """The namespaces a run gets under ``policy``."""
    return ["user", "mount", "pid", "ipc"] + ([] if policy.get("network") else ["net"])


def record(policy: Policy, reason: str | None) -> Isolation:
    """The isolation in force: ``reason`` None means the sandbox holds."""
    if reason is None:
        return {"level": "sandbox", "namespaces": namespaces(policy),
                "network": bool(policy.get("network")), "reason": None}
    return {"level": "hermetic", "namespaces": [], "network": True, "reason": reason}


# --- the server's namespace (once) -------------------------------------------

def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _own_user_namespace() -> None:
    uid, gid = os.getuid(), os.getgid()
    _unshare(CLONE_NEWUSER | CLONE_NEWNS, "user, mount")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        raise Refused(exc.errno or 0, f"user namespace id map: {exc.strerror}") from exc
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def _unescape(field: str) -> str:
    """A mountinfo path: octal escapes (``\\040`` for a space) undone."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as f:
        points = [_unescape(line.split()[4]) for line in f if line.strip()]
    return sorted(set(points), key=lambda p: (p.count("/"), p))


def _flags(path: str) -> int:
    """The mount flags of ``path``'s mount that a bind remount must keep."""
    st = os.statvfs(path).f_flag
    flags = st & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | 16 | 64 | 1024 | 2048)
    if st & getattr(os, "ST_RELATIME", 4096):
        flags |= MS_RELATIME
    return flags


def _remount(path: str, *, readonly: bool) -> None:
    flags = _flags(path) & ~MS_RDONLY | (MS_RDONLY if readonly else 0)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | flags)


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _all_read_only() -> None:
    for point in _mount_points():
        if _under(point, "/proc") or _under(point, "/dev"):
            continue
        try:
            _remount(point, readonly=True)
        except FileNotFoundError:
            continue  # hidden under another mount
        except Refused as exc:
            raise Refused(exc.errno or 0, f"cannot make {point} read-only: "
                          f"{os.strerror(exc.errno or 0)}") from exc


def _minimal_dev() -> None:
    """A read-only tmpfs ``/dev`` holding the harmless character devices only."""
    fds = {}
    for name in DEVICES:
        try:
            fds[name] = os.open(f"/dev/{name}", os.O_PATH)
        except OSError:
            pass
    try:
        _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
        for name, fd in fds.items():
            with open(f"/dev/{name}", "w"):
                pass
            _mount(f"/proc/self/fd/{fd}", f"/dev/{name}", None, MS_BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"),
                             ("ptmx", "pts/ptmx")):
            os.symlink(target, f"/dev/{name}")
        os.mkdir("/dev/shm")
        os.mkdir("/dev/pts")
        try:
            _mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                   "newinstance,ptmxmode=0666,mode=620")
        except Refused:
            pass  # no pseudo-terminals in the runs
        _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    finally:
        for fd in fds.values():
            os.close(fd)


def _hide_sockets(policy: Policy) -> None:
    """Without network, an empty ``/run``: the host's services listen there (unix
    sockets stay connectable on a read-only mount)."""
    if policy.get("network") or not os.path.isdir("/run"):
        return
    _mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
           "mode=755,size=4k")


def _enter_here(policy: Policy) -> None:
    _own_user_namespace()
    _all_read_only()
    _minimal_dev()
    _hide_sockets(policy)


def _trial(policy: Policy) -> str | None:
    """Run every step in a throw-away child; None when all held, else why not."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            _enter_here(policy)
            code = _trial_run(policy, w)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            try:
                os.write(w, text.encode(errors="replace")[:500])
            except BaseException:  # noqa: BLE001
                pass
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    text = b"".join(chunks).decode(errors="replace").strip()
    return text or f"the trial run ended with status {status}"


def _trial_run(policy: Policy, report: int) -> int:
    """In the trial child: one whole run's isolation around a run that does nothing."""
    isolate(policy, keep=(0, 1, 2, report), ended=None, report=report)
    # here in the run, PID 2 of its namespace, without capabilities
    if sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) != [1, 2]:
        raise Refused(0, "the PID namespace does not hide the other processes")
    return 0


def with_environment(policy: Policy) -> Policy:
    """``policy`` plus this interpreter's environment, read-only: its prefixes (the
    virtual environment, the base Python) and the directories on ``sys.path``
    outside the overlaid checkouts."""
    trees = [os.path.realpath(p) for p in policy.get("overlay") or ()]
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    paths = [os.path.realpath(p) for p in sorted(prefixes)]
    for entry in sys.path:
        real = os.path.realpath(entry or ".")
        if os.path.isdir(real) and not any(_under(real, t) for t in trees):
            paths.append(real)
    out = policy.copy()
    out["readonly"] = list(policy.get("readonly") or ()) + paths
    return out


def enter(policy: Policy) -> Isolation:
    """Move this process (the fork server) into the sandbox, or say why not.

    Must be called while the process has a single thread.  Returns the
    isolation record; with mode ``required`` a refusal is still a record (the
    gate turns it into exit 4)."""
    mode = policy.get("mode", "auto")
    if mode == "off":
        return record(policy, 'sandbox = "off"')
    if not sys.platform.startswith("linux"):
        return record(policy, f"no Linux namespaces on {sys.platform}")
    try:
        why = _trial(policy)
    except OSError as exc:
        why = f"cannot start the sandbox trial: {exc}"
    if why is not None:
        return record(policy, f"the OS refused the sandbox ({why})")
    _enter_here(policy)
    return record(policy, None)


# --- one run -----------------------------------------------------------------

def _close_all_but(keep: Sequence[int]) -> None:
    fds = [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit()]
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the directory's own descriptor, already gone


def _mkdirs(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        pass  # it exists in a read-only place, or the mount below says why


def _exposures(policy: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, real path) of what a run sees of the real filesystem, parents first."""
    seen: dict[str, str] = {}
    for kind in ("overlay", "readonly", "hidden", "writable"):
        for path in policy.get(kind) or ():
            real = os.path.realpath(path)
            if os.path.isdir(real) and real != "/" and real not in seen:
                seen[real] = kind
    return sorted(((k, p) for p, k in seen.items()), key=lambda kp: (kp[1].count("/"), kp[1]))


def _view(policy: Policy) -> None:
    """Mount the run's view (in the run's own mount namespace, as its PID 1)."""
    shown = _exposures(policy)
    fds = [(kind, path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for kind, path in shown]
    try:
        private = MS_NOSUID | MS_NODEV
        _mount("tmpfs", "/tmp", "tmpfs", private, "mode=1777")
        for extra in ("/dev/shm", "/var/tmp"):
            if os.path.isdir(extra):
                _mount("tmpfs", extra, "tmpfs", private, "mode=1777")
        os.mkdir(STAGE, 0o700)
        _mount("tmpfs", STAGE, "tmpfs", private, "mode=700")
        for i, (kind, path, fd) in enumerate(fds):
            _mkdirs(path)
            source = f"/proc/self/fd/{fd}"
            if kind == "hidden":  # an empty place of the run's own, where others' runs are
                _mount("tmpfs", path, "tmpfs", private, "mode=700")
            elif kind == "overlay":
                upper, work = f"{STAGE}/{i}/u", f"{STAGE}/{i}/w"
                os.makedirs(upper)
                os.makedirs(work)
                _mount("overlay", path, "overlay", MS_NOSUID,
                       f"lowerdir={source},upperdir={upper},workdir={work}")
            else:
                _mount(source, path, None, MS_BIND | MS_REC)
                _remount(path, readonly=kind == "readonly")
        _check(_lib().umount2(_b(STAGE), MNT_DETACH), f"umount {STAGE}")
        os.rmdir(STAGE)
        # read-only: no sysctl written from a run (as the user, where that is root)
        _mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    finally:
        for _, _, fd in fds:
            os.close(fd)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """No capability left, none to regain through exec: the view cannot be undone."""
    libc = _lib()
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass  # it ended already


def _mirror(status: int) -> None:
    """End this process as the one it waited for ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # these cannot be caught anyway
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def _others() -> list[int]:
    """The live processes of the namespace but its init (a zombie is already ended)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        if stat[stat.rindex(b")") + 2:][:1] != b"Z":
            found.append(int(name))
    return found


def _init(run: int, ended: str | None, status_w: int) -> None:
    """PID 1 of the run's namespace: wait for the run, then end what it left behind.

    A SIGTERM (the gate's timeout, passed on by the run's keeper and the waiting
    parent) kills the run; what it left is then ended and counted as at any other
    end.  The run may send it too: it can end only itself that way."""
    signal.signal(signal.SIGTERM, lambda *_: _kill(run))
    status = 0
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == run:
            status = st
            break
    left = len(_others())
    if left:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    if ended is not None:
        try:
            tmp = ended + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"ended": left}, f)
            os.replace(tmp, ended)
        except OSError:
            pass
    os.write(status_w, str(status).encode())
    os._exit(0)


def scratch(path: str = "/dev/shm") -> str:
    """An empty, writable folder of this process's own (a session template's: its
    pytest makes its capture files before any run) in the serving parent's read-only
    view, in a mount namespace of its own; ``path``.  Each run forked from it is then
    isolated as any other, with a fresh ``/tmp`` and ``/dev/shm`` of its own."""
    _unshare(CLONE_NEWNS, "mount")
    _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=700")
    return path


def isolate(policy: Policy, *, keep: Sequence[int], ended: str | None,
            writable: str | None = None, report: int = 2) -> None:
    """Put this process (a run's child, single-threaded) into the run's sandbox.

    Returns in the run, as PID 2 of a new PID namespace, with no capability
    and only the descriptors ``keep``; the calling process itself becomes the
    waiting parent and never returns: it ends as the run ended (the run's
    status comes through a pipe from the namespace's init, which cannot end
    itself by a signal).  Raises Refused when a step before the fork fails; a
    later failure is written to ``report`` and ends the run with status 70."""
    _close_all_but(keep)
    _unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
             | (0 if policy.get("network") else CLONE_NEWNET), "mount, pid, ipc, net")
    status_r, status_w = os.pipe()
    first = os.fork()
    if first:  # outside the namespace: wait for its init and end as the run ended
        os.close(status_w)
        signal.signal(signal.SIGTERM, lambda *_: _kill(first, signal.SIGTERM))
        got = os.read(status_r, 16)
        _, status = os.waitpid(first, 0)
        _mirror(int(got) if got.strip().isdigit() else status)
    os.close(status_r)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)  # PID 1 ignores these (but SIGTERM: _init)
    _lib().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    try:
        _view({**policy, "writable": list(policy.get("writable") or ())
               + ([writable] if writable else [])})
    except BaseException as exc:  # noqa: BLE001 - the run must not start half isolated
        os.write(report, f"ballot-guard sandbox: {exc}\n".encode(errors="replace"))
        os._exit(70)
    run = os.fork()
    if run:
        for fd in keep:
            if fd > 2:
                os.close(fd)
        _init(run, ended, status_w)
    os.close(status_w)
    _lib().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    _drop_capabilities()
