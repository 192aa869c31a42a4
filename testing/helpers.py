"""Throwaway git repositories for tests: real git, pinned identities, no $HOME."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ballot_guard import config
from ballot_guard.digest import pin as pins
from ballot_guard.digest.pin_file import write_pin
from ballot_guard.main import main

AUTHOR = "Test Person <test@example.com>"


def git(cwd: Path | str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
        check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          env=env, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return os.fsdecode(proc.stdout)


@dataclass
class Repo:
    path: Path

    def git(self, *args: str, **kw: Any) -> str:
        return git(self.path, *args, **kw)

    def write(self, rel: str, content: str | bytes = "x\n", mode: int | None = None) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        p.write_bytes(content)
        if mode is not None:
            p.chmod(mode)
        return p

    def symlink(self, rel: str, target: str) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target)

    def remove(self, rel: str) -> None:
        (self.path / rel).unlink()

    def stage(self, *paths: str) -> None:
        self.git("add", "-A", "--", *(paths or (".",)))

    def commit(self, message: str = "change", *, author: str | None = None,
               committer: str | None = None, allow_empty: bool = False) -> str:
        env = dict(os.environ)
        if committer:
            name, _, email = committer.partition(" <")
            env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"] = name, email.rstrip(">")
        args = ["commit", "-q", "--no-verify", "-m", message]
        if author:
            args += ["--author", author]
        if allow_empty:
            args.append("--allow-empty")
        self.git(*args, env=env)
        return self.git("rev-parse", "HEAD").strip()

    def commit_all(self, message: str = "change", **kw: Any) -> str:
        self.stage()
        return self.commit(message, **kw)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()


def init_repo(path: Path) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return Repo(path)


PLACEHOLDER_PIN = "sha256-v2:" + "0" * 64 + "\n"  # a pin file that holds, as a file


def pin(repo: Repo, via: Literal["api", "cli"] = "api") -> None:
    """Pin the fixtures as they are now: through the library, or as a user would
    (``ballot-guard digest --pin``)."""
    if via == "cli":
        res = run_cli(["digest", "--pin"], repo.path)
        assert res.code == 0, res.err
        return

    root = str(repo.path)
    cfg = config.load_worktree(root)
    got = pins.digest_worktree(root, cfg)
    assert got.digest is not None
    write_pin(root, cfg.digest_file, got.digest)


def adopted_repo(repo: Repo | Path, files: Mapping[str, str | bytes], *,
                 pin_with: Literal["api", "cli"] | str | None = "api",
                 message: str | None = "adopt ballot-guard", **commit: Any) -> Repo:
    """The one builder of an adopted repository: ``files`` written, the fixtures pinned
    (``pin_with`` "api" or "cli" computes the real pin; None writes none yet; any other
    string is written as the pin file's content, for tests where the pin's value does
    not matter), and one commit (none when ``message`` is None).  Returns the repository."""
    if isinstance(repo, Path):
        repo = init_repo(repo)
    for rel, content in files.items():
        repo.write(rel, content)
    if pin_with == "api" or pin_with == "cli":
        pin(repo, pin_with)
    elif pin_with is not None:
        repo.write("fixture_digest.txt", pin_with)
    if message is not None:
        repo.commit_all(message, **commit)
    return repo


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@contextlib.contextmanager
def chdir(path: Path | str) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def holds_the_keys(td: Any, obj: Any) -> None:
    """``obj`` holds every key the TypedDict ``td`` requires, and no key it does not declare."""
    assert isinstance(obj, dict), obj
    required, optional = td.__required_keys__, td.__optional_keys__
    assert required <= set(obj) <= required | optional, (td.__name__, sorted(obj))


def unprivileged(args: list[str], cwd: Path) -> CliResult:
    """Run the CLI unable to read files whose mode forbids it (root included)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        caps = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]
    proc = subprocess.run([*prefix, sys.executable, "-m", "ballot_guard", *args], cwd=cwd,
                          capture_output=True, check=False, timeout=120)
    return CliResult(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def run_cli(args: Sequence[str], cwd: Path | str, stdin: str | None = None) -> CliResult:
    """Call ``main(args)`` in-process in ``cwd``; capture its streams."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


def run_bg(args: Sequence[str], cwd: Path | str, *, input: bytes | None = None,
           env: dict[str, str] | None = None, timeout: float = 300) -> CliResult:
    """Run ``python -m ballot_guard args`` as a real subprocess (what a user types)."""
    proc = subprocess.run([sys.executable, "-m", "ballot_guard", *args], cwd=cwd, input=input,
                          capture_output=True, env=env, timeout=timeout, check=False)
    return CliResult(proc.returncode, os.fsdecode(proc.stdout), os.fsdecode(proc.stderr))
