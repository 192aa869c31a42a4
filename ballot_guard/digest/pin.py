"""The pinned digest: check the fixtures against it (the file itself: ``pin_file``).

A check is a value (``PinCheck``), never an exception: drift, a missing or
invalid pin, or a pack holding what cannot be pinned (a FIFO, a device, a
submodule) is ``ok=False``, which callers turn into exit 2.  Only what stops
any judgement (an unreadable fixture, a broken repository) raises CannotJudge.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ballot_guard import git
from ballot_guard.config import Config, ConfigError
from ballot_guard.digest.compute import digest_pack
from ballot_guard.digest.drift import diagnose
from ballot_guard.digest.framing import V1, V2, Digest, parse
from ballot_guard.digest.pack import Pack, from_snapshot, from_worktree
from ballot_guard.digest.pin_file import read_snapshot_pin, read_worktree_pin

V1_WARNING = (
    "{file} holds a v1 digest (the seed article's format); v1's framing is ambiguous: "
    "a renamed file plus one moved byte keeps the same digest. Re-pin as v2 with "
    "`ballot-guard digest --pin` in a reviewed commit.")
EMPTY_WARNING = "the fixture pack {dir}/ is missing or empty: its digest is the empty pack's"


@dataclass(frozen=True)
class PinCheck:
    ok: bool
    pinned: str | None  # the pin as written, None if missing
    actual: str | None  # the fixtures' digest in the pin's format
    format: str | None  # "v1" | "v2"
    problem: str | None  # one line; None when ok
    details: tuple[str, ...] = ()  # drift diagnosis
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Computed:
    """The digest of the pack, or why it has none (exit 2), with warnings."""

    digest: Digest | None
    problem: str | None
    warnings: tuple[str, ...]


def guard(config: Config) -> None:
    """The digest file must not lie inside the pack it pins."""
    d, f = config.fixtures_dir, config.digest_file
    if f == d or f.startswith(d + "/"):
        raise ConfigError(f"[tool.ballot_guard] digest_file {f!r} lies inside fixtures_dir "
                          f"{d!r}: the pin would change the pack it pins")


def compute(pack: Pack, fmt: str) -> Computed:
    warnings = () if pack.items or pack.unsupported else (EMPTY_WARNING.format(dir=pack.prefix),)
    if pack.unsupported:
        return Computed(None, "the fixture pack holds what cannot be pinned: "
                        + ", ".join(pack.unsupported), warnings)
    return Computed(digest_pack(pack, fmt), None, warnings)


def digest_worktree(root: str, config: Config, fmt: str = V2) -> Computed:
    guard(config)
    return compute(from_worktree(root, config.fixtures_dir, fmt), fmt)


def digest_snapshot(snapshot: git.Snapshot, config: Config, fmt: str = V2) -> Computed:
    guard(config)
    return compute(from_snapshot(snapshot, config.fixtures_dir, fmt), fmt)


# --- checking --------------------------------------------------------------------

def check_pin(root: str, config: Config, *, rev: str | None = None) -> PinCheck:
    """The working tree's pin and fixtures (``rev`` None), or both as committed at ``rev``."""
    if rev is not None:
        return check_snapshot(git.Snapshot(root, git.resolve(root, rev)), config)
    guard(config)
    text, why = read_worktree_pin(root, config.digest_file)
    return _check(root, config, text, why,
                  lambda fmt: from_worktree(root, config.fixtures_dir, fmt), None)


def check_snapshot(snapshot: git.Snapshot, config: Config) -> PinCheck:
    """The pin and fixtures of a commit's tree or of an index (the staged change)."""
    guard(config)
    text, why = read_snapshot_pin(snapshot, config.digest_file)
    return _check(snapshot.root, config, text, why,
                  lambda fmt: from_snapshot(snapshot, config.fixtures_dir, fmt), snapshot)


def _check(root: str, config: Config, text: str | None, why: str | None,
           listing: Callable[[str], Pack], snapshot: git.Snapshot | None) -> PinCheck:
    pin = parse(text) if text is not None else None
    fmt = pin.format if pin is not None else V2
    got = compute(listing(fmt), fmt)
    warnings = got.warnings
    if pin is not None and pin.format == V1:
        warnings += (V1_WARNING.format(file=config.digest_file),)
    pinned = text.strip()[:100] if text is not None else None
    actual = None if got.digest is None else str(got.digest)
    fmt_or_none = None if pin is None else pin.format
    if got.problem is not None:
        return PinCheck(False, pinned, None, fmt_or_none, got.problem, (), warnings)
    if text is None:
        what = "no pinned digest" if str(why).startswith("does not exist") else \
            "no valid pinned digest"
        problem = (f"{what}: {config.digest_file} {why}; pin the fixtures with "
                   "`ballot-guard digest --pin` and commit the pin with them")
        return PinCheck(False, None, actual, None, problem, (), warnings)
    if pin is None:
        problem = (f"no valid pinned digest: {config.digest_file} holds {pinned!r}, not "
                   "`sha256-v2:<64 hex digits>` (or a v1 digest: 64 hex digits); re-pin with "
                   "`ballot-guard digest --pin` in a reviewed commit")
        return PinCheck(False, pinned, actual, None, problem, (), warnings)
    if actual == str(pin):
        return PinCheck(True, str(pin), actual, pin.format, None, (), warnings)

    empty = EMPTY_WARNING.format(dir=config.fixtures_dir) in got.warnings
    missing = empty and (snapshot is not None
                         or not os.path.isdir(os.path.join(root, config.fixtures_dir)))
    if missing:  # not drift of the pack: the pack is not where the config says
        where = "at this revision" if snapshot is not None else "in the working tree"
        problem = (f"the fixtures dir {config.fixtures_dir}/ does not exist {where}, but "
                   f"{config.digest_file} pins {pin}: check `fixtures_dir` in "
                   "[tool.ballot_guard] (or restore the fixtures); nobody votes")
        return PinCheck(False, str(pin), actual, pin.format, problem, (), warnings)
    problem = (f"fixture drift: {config.digest_file} pins {pin}, but the fixtures digest to "
               f"{actual}; nobody votes")
    details = diagnose(root, config, snapshot, text, pin.format)
    return PinCheck(False, str(pin), actual, pin.format, problem, details, warnings)
