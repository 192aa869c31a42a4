"""Every git call goes through here.

Rules: machine-readable output only (``-z``), ``--no-ext-diff`` on diffs, no
pager, no textconv, no fsmonitor hook, and a scrubbed ``GIT_*`` environment
when git runs on a directory other than the user's repository.  Paths cross
this boundary as ``str`` decoded with ``os.fsdecode`` (surrogateescape), so
any byte sequence git gives round-trips exactly through ``os.fsencode``.
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ballot_guard.errors import CannotJudge

if TYPE_CHECKING:
    from hashlib import _Hash
if sys.platform == "linux":
    import fcntl

# Options that make git's behaviour independent of the user's config where it
# matters for judging (no fsmonitor hook process, raw paths, and no replace refs:
# `git replace` is a local view of history that a push does not carry).
_BASE = ("git", "--no-replace-objects", "-c", "core.quotepath=off", "-c", "core.fsmonitor=false")

# Variables that point git at a repository, index or work tree.  They are
# removed when git must run on another directory (a temporary worktree, a
# fixture repo in a test), and kept for the user's own repository: a
# pre-commit hook gets GIT_INDEX_FILE for `git commit -a`, and it must be
# honoured so the staged change judged is the one being committed.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


class GitError(CannotJudge):
    """A git command failed; the message shows the command, code and stderr."""


class Result(NamedTuple):
    code: int
    stdout: bytes
    stderr: bytes


def scrubbed_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment with every repository-locating GIT_* variable removed."""
    env = dict(os.environ if environ is None else environ)
    for name in _LOCATION_VARS:
        env.pop(name, None)
    return env


def run(
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
    timeout: float | None = None,
) -> Result:
    """Run ``git <args>`` in ``cwd``; raise GitError on a non-zero exit if ``check``.

    With ``timeout`` (seconds), git and everything it started are killed once it is
    spent, and the result is ``TIMED_OUT`` (an answer that may be given up on: a
    search on the runner's start path, say)."""
    cmd = [*_BASE, *args]
    try:
        if timeout is None:
            proc = subprocess.run(
                cmd,
                cwd=cwd,
                env=None if env is None else dict(env),
                input=input,
                capture_output=True,
                check=False,
            )
            result = Result(proc.returncode, proc.stdout, proc.stderr)
        else:
            result = _bounded(cmd, cwd, env, input, timeout)
    except FileNotFoundError as exc:
        raise CannotJudge("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise CannotJudge(f"not a directory: {cwd}") from exc
    if check and result.code != 0:
        raise GitError(describe_failure(args, result))
    return result


TIMED_OUT = -9  # a bounded call that ran out of time reads as a git killed by SIGKILL


def _bounded(cmd: list[str], cwd: str, env: Mapping[str, str] | None, input: bytes | None,
             timeout: float) -> Result:
    """``cmd`` in a process group of its own, the group killed once ``timeout`` is
    spent (a helper git started, holding the pipes, would keep ``communicate``
    waiting otherwise)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=None if env is None else dict(env),
                            stdin=subprocess.PIPE if input is not None else None,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        return Result(TIMED_OUT, b"", b"timed out after %g s" % timeout)
    return Result(proc.returncode, out, err)


def _memory_file(data: bytes) -> int:
    """A file descriptor at offset 0 of an unnamed file holding ``data``, which nobody
    else can open or change (``memfd_create`` where there is one, else an unlinked
    temporary file)."""
    try:
        fd = os.memfd_create("ballot-guard-input", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux, or refused by a sandbox
        import tempfile  # noqa: PLC0415 - lazy: rare branch: tempfile (1.5 ms) only where there is no memfd

        fd, name = tempfile.mkstemp(prefix="ballot-guard-input-")
        os.unlink(name)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


# Linux's default most for an unprivileged pipe (/proc/sys/fs/pipe-max-size): git's
# numstat of a 20,000-file patch is 440 KB; through 64 KiB, result() waited 5-15 ms.
_PIPE_SIZE = 1 << 20


class Background:
    """``git <args>`` started now and read later (``result()``), fed ``input`` at once.

    The input waits in an unnamed file that git reads as its stdin (the bytes
    judged here are the bytes git reads: nobody else can reach that file); this
    process works on something else while git runs on another core, and
    ``result()`` collects what git wrote.  On Linux git's stdout pipe is widened
    (``_PIPE_SIZE``) so that git writes all it has and exits meanwhile, instead of
    waiting on a full 64 KiB pipe until ``result()`` reads it.  No thread pumps the
    pipes, so the two share the machine's cores, not one interpreter lock.
    """

    def __init__(self, args: Sequence[str], *, cwd: str, input: bytes) -> None:
        source = _memory_file(input)  # git reads it at its own pace; no pipe to feed
        try:
            self._proc = subprocess.Popen([*_BASE, *args], cwd=cwd, stdin=source,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError as exc:
            raise CannotJudge("git is not installed or not on PATH") from exc
        except NotADirectoryError as exc:
            raise CannotJudge(f"not a directory: {cwd}") from exc
        finally:
            os.close(source)
        if sys.platform == "linux" and self._proc.stdout is not None:
            try:
                fcntl.fcntl(self._proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:
                pass  # over the system's limit or the user's pipe quota: 64 KiB it stays

    def result(self) -> Result:
        """Wait for git; its exit code and everything it wrote."""
        out, err = self._proc.communicate()
        return Result(self._proc.returncode, out, err)

    def close(self) -> None:
        """Stop git when its result is no longer wanted."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def describe_failure(args: Sequence[str], result: Result) -> str:
    err = os.fsdecode(result.stderr).strip().replace("\n", " | ")
    return f"git {' '.join(args)} failed with exit {result.code}: {err or '(no output)'}"


def out(args: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None,
        input: bytes | None = None) -> bytes:
    """stdout of a git command that must succeed."""
    return run(args, cwd=cwd, env=env, input=input).stdout


def split_z(data: bytes) -> list[str]:
    """Split NUL-terminated git output into fsdecoded strings."""
    if not data:
        return []
    parts = data.split(b"\0")
    if parts[-1] == b"":
        parts.pop()
    return [os.fsdecode(p) for p in parts]


def toplevel(cwd: str = ".") -> str:
    """The repository's work-tree root, or CannotJudge when cwd is not in a repo."""
    res = run(["rev-parse", "--show-toplevel"], cwd=cwd, check=False)
    if res.code != 0 or not res.stdout.strip():
        raise CannotJudge(
            f"not a git repository (or not inside a work tree): {os.path.abspath(cwd)}")
    return os.fsdecode(res.stdout.rstrip(b"\n"))


def git_dirs(root: str) -> list[str]:
    """The absolute git directory of the work tree at ``root`` and its common directory
    (they differ in a linked worktree); empty when git cannot say."""
    res = run(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"],
              cwd=root, check=False)
    if res.code != 0:
        return []
    return sorted({os.fsdecode(line) for line in res.stdout.splitlines() if line.strip()})


def rev_parse(root: str, rev: str) -> str | None:
    """The full object name of ``rev`` (peeled to a commit), or None if it does not exist."""
    if rev.startswith("-"):
        raise CannotJudge(f"bad revision: {rev!r}")
    res = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
              cwd=root, check=False)
    if res.code != 0:
        return None
    return res.stdout.decode().strip()


def resolve(root: str, rev: str) -> str:
    """Like rev_parse, but a missing revision is CannotJudge naming it."""
    sha = rev_parse(root, rev)
    if sha is None:
        raise CannotJudge(f"unknown revision: {rev}")
    return sha


def head(root: str) -> str | None:
    """HEAD's commit, or None in a repository with no commit yet."""
    return rev_parse(root, "HEAD")


def empty_tree(root: str) -> str:
    """The empty tree's object name in this repository's hash format."""
    return out(["hash-object", "-t", "tree", "--stdin"], cwd=root, input=b"").decode().strip()


class TreeEntry(NamedTuple):
    mode: str  # "100644", "100755", "120000", "160000", "040000"
    oid: str
    path: str  # repository-relative, fsdecoded


class Snapshot(NamedTuple):
    """One side of a change: a commit's tree, or an index.

    ``rev`` set: the tree of that commit (or tree object).
    ``rev`` None: the index; ``index_file`` names a temporary index, else the
    repository's own index (honouring GIT_INDEX_FILE from a hook).
    """

    root: str
    rev: str | None = None
    index_file: str | None = None

    def env(self) -> dict[str, str] | None:
        if self.index_file is None:
            return None
        env = dict(os.environ)
        env["GIT_INDEX_FILE"] = self.index_file
        return env

    def entries(self, prefix: str = "") -> list[TreeEntry]:
        """Every blob, symlink and gitlink at or under ``prefix`` ("" = all), sorted by git."""
        spec = [prefix] if prefix else []
        if self.rev is not None:
            env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
            data = out(["ls-tree", "-r", "-z", "--full-tree", self.rev, "--", *spec],
                       cwd=self.root, env=env)
            result = []
            for rec in split_z(data):
                meta, _, path = rec.partition("\t")
                mode, _kind, oid = meta.split(" ")
                result.append(TreeEntry(mode, oid, path))
            return result
        pathspec = f":(top,literal){prefix}" if prefix else ":(top)"
        data = out(["ls-files", "-s", "-z", "--full-name", "--", pathspec],
                   cwd=self.root, env=self.env())
        result = []
        for rec in split_z(data):
            meta, _, path = rec.partition("\t")
            mode, oid, stage = meta.split(" ")
            if stage not in ("0", "2"):  # unmerged: take "ours"
                continue
            result.append(TreeEntry(mode, oid, path))
        return result

    def entry(self, path: str) -> TreeEntry | None:
        """The entry at exactly ``path`` (no directory match), or None."""
        for e in self.entries(path):
            if e.path == path:
                return e
        return None

    def read(self, path: str) -> bytes | None:
        """Content of the blob at ``path``, or None when it is absent (or not a blob)."""
        e = self.entry(path)
        if e is None or e.mode == "160000":
            return None
        return out(["cat-file", "blob", e.oid], cwd=self.root)

    def read_many(self, paths: Sequence[str]) -> list[bytes | None]:
        """The blob at each path (None where there is none), through one ``cat-file
        --batch`` for a tree; one ``read`` each for an index."""
        if self.rev is None:
            return [self.read(p) for p in paths]
        plain = [p for p in paths if "\n" not in p and "\r" not in p]
        found = dict(zip(plain, blobs(self.root, [f"{self.rev}:{p}" for p in plain]), strict=True))
        return [found.get(p) for p in paths]

    def entries_at(self, paths: Sequence[str]) -> list[TreeEntry]:
        """The entries at exactly ``paths`` of a tree (a directory as its tree entry, not
        its contents); for an index, those of ``entries()`` at the paths."""
        if not paths:
            return []
        if self.rev is None:
            wanted = set(paths)
            return [e for e in self.entries() if e.path in wanted]
        env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
        data = out(["ls-tree", "-z", "--full-tree", self.rev, "--", *paths], cwd=self.root,
                   env=env)
        result = []
        for rec in split_z(data):
            meta, _, path = rec.partition("\t")
            mode, _kind, oid = meta.split(" ")
            result.append(TreeEntry(mode, oid, path))
        return result


def blobs(root: str, names: Sequence[str]) -> list[bytes | None]:
    """The content of each blob named (an object id or ``rev:path``), through one ``git
    cat-file --batch``; None where git has no blob by that name."""
    if not names:
        return []
    data = out(["cat-file", "--batch"], cwd=root,
               input="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape"))
    found: list[bytes | None] = []
    pos = 0
    for _ in names:
        nl = data.index(b"\n", pos)
        fields = data[pos:nl].rsplit(b" ", 2)
        pos = nl + 1
        if len(fields) != 3 or not fields[2].isdigit():
            found.append(None)  # "<name> missing", "ambiguous"
            continue
        size = int(fields[2])
        found.append(data[pos:pos + size] if fields[1] == b"blob" else None)
        pos += size + 1
    return found



# --- blobs in bulk, history of one path (fixture digests, drift diagnosis) ---

_SMALL_BLOB = 1 << 16
_CHUNK = 1 << 20


class BlobReader:
    """Blobs through one ``git cat-file --batch`` process, streamed in request order.

    ``stream(oids)`` writes every object name from a thread while the caller
    reads, so any number of blobs passes through one process and no blob is
    ever held whole unless it is small.  Use as a context manager.
    ``bulk=True`` lets git buffer its output (``--buffer``: far fewer writes
    for many small blobs); then it answers one ``stream`` call, and no ``read``.
    """

    def __init__(self, root: str, env: Mapping[str, str] | None = None, *,
                 bulk: bool = False) -> None:
        import tempfile  # noqa: PLC0415 - lazy: rare branch: tempfile (1.5 ms) only where blobs are read through cat-file (a digest, a vote's checkout, rule 5)

        self._bulk = bulk
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        try:
            self._proc = subprocess.Popen(
                [*_BASE, "cat-file", "--batch", *(["--buffer"] if bulk else [])], cwd=root,
                env=None if env is None else dict(env),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                bufsize=1 << 18)
        except FileNotFoundError as exc:
            self._err.close()
            raise CannotJudge("git is not installed or not on PATH") from exc
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in = self._proc.stdin
        self._out = self._proc.stdout

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for stream in (self._in, self._out):
            try:
                stream.close()
            except OSError:
                pass
        self._proc.wait()
        self._err.close()

    def _fail(self, why: str) -> GitError:
        self._err.seek(0)
        err = os.fsdecode(self._err.read()).strip().replace("\n", " | ")
        return GitError(f"git cat-file --batch: {why}" + (f": {err}" if err else ""))

    def _header(self, oid: str) -> int:
        line = self._out.readline()
        if not line.endswith(b"\n"):
            raise self._fail(f"stream ended before object {oid}")
        parts = line.split()
        if len(parts) != 3 or parts[1] != b"blob":
            what = line.decode(errors="replace").strip()
            raise self._fail(f"object {oid} is not a blob ({what})")
        return int(parts[2])

    def _chunks(self, oid: str, size: int) -> Iterator[bytes]:
        left = size
        while left:
            data = self._out.read(min(left, _CHUNK))
            if not data:
                raise self._fail(f"stream ended inside object {oid}")
            left -= len(data)
            yield data
        if self._out.read(1) != b"\n":
            raise self._fail(f"bad framing after object {oid}")

    def read(self, oid: str) -> bytes:
        """One blob, whole (for small things: link targets, pins)."""
        if self._bulk:
            raise ValueError("a bulk BlobReader only streams")
        self._in.write(oid.encode() + b"\n")
        self._in.flush()
        return b"".join(self._chunks(oid, self._header(oid)))

    def stream(self, oids: Sequence[str]) -> Iterator[tuple[int, Iterator[bytes]]]:
        """(size, chunks) per object, in order; consume each chunks before the next."""
        failure: list[BaseException] = []

        def feed() -> None:
            try:
                for start in range(0, len(oids), 4096):
                    self._in.write("".join(o + "\n" for o in oids[start:start + 4096]).encode())
                if self._bulk:
                    self._in.close()  # git flushes its buffered output at the end of input
                else:
                    self._in.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                failure.append(exc)
                try:  # end git's input, so a reader waiting on buffered output sees the end
                    self._in.close()
                except (ValueError, OSError):
                    pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        done = False
        try:
            for oid in oids:
                size = self._header(oid)
                if size <= _SMALL_BLOB:
                    data = self._out.read(size + 1)
                    if len(data) != size + 1 or data[-1:] != b"\n":
                        raise self._fail(f"stream ended inside object {oid}")
                    yield size, iter((data[:-1],))
                else:
                    chunks = self._chunks(oid, size)
                    yield size, chunks
                    for _ in chunks:  # drain what the caller left unread
                        pass
            done = True
        finally:
            if not done:  # abandoned or failed: stop git so the writer cannot block
                self._proc.kill()
            writer.join()
        if failure:
            raise self._fail(f"cannot send object names ({failure[0]})")


def object_format(root: str) -> str:
    """The repository's object hash: "sha1" or "sha256"."""
    res = run(["rev-parse", "--show-object-format"], cwd=root, check=False)
    fmt = res.stdout.decode().strip()
    return fmt if res.code == 0 and fmt in ("sha1", "sha256") else "sha1"


def _blob_hash(size: int, algo: str) -> _Hash:
    """The object format's hash (``algo``) of a blob of ``size`` bytes, fed its header
    (``blob <size>\\0``): the content follows."""
    import hashlib  # noqa: PLC0415 - lazy: rare branch: hashlib (3.1 ms) only where a file is hashed as a blob (rule 5's checkout reader, a digest or a vote)
    h = hashlib.new(algo)
    h.update(b"blob %d\0" % size)
    return h


def blob_id(data: bytes, algo: str) -> str:
    """git's id of a blob holding ``data`` (``git hash-object --no-filters``)."""
    h = _blob_hash(len(data), algo)
    h.update(data)
    return h.hexdigest()


def open_regular(path: str | bytes, *, follow_links: bool) -> tuple[int, os.stat_result] | None:
    """A descriptor of the regular file at ``path`` and its status (the caller closes it),
    or None where nothing can be opened there or it is another kind.  Opened without
    blocking, so a FIFO swapped in is not waited on; a link at ``path`` is followed only
    with ``follow_links``."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st


def file_blob_id(path: str, algo: str) -> tuple[str, bool] | None:
    """(git's blob id of the regular file at ``path``, read in chunks of any size, and
    whether it is owner-executable), or None: nothing there, a link (not followed),
    another kind, or written while read."""
    opened = open_regular(path, follow_links=False)
    if opened is None:
        return None
    fd, st = opened
    try:
        h = _blob_hash(st.st_size, algo)
        size = 0
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size != st.st_size:  # written while read
        return None
    return h.hexdigest(), bool(st.st_mode & stat.S_IXUSR)


def last_commit_touching(root: str, rev: str, path: str) -> str | None:
    """The newest commit reachable from ``rev`` that changed ``path``, or None."""
    env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
    res = run(["rev-list", "-1", "--end-of-options", rev, "--", path], cwd=root, env=env,
              check=False)
    sha = res.stdout.decode().strip()
    return sha if res.code == 0 and sha else None
