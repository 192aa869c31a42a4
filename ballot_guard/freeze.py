"""The freeze file: frozen voters, their records, and an append-only history.

The seed's plain ``{"frozen": [...]}`` stays valid.  ballot-guard adds
``records`` (why and when a name froze, who owns its repair) and ``history``
(events ``frozen``, ``assigned``, ``unfrozen``; never rewritten).  Unknown
top-level keys are kept.  Writes are atomic (temporary file + rename), with
indent 2 and a final newline; a lock file plus re-read-merge-write under the
lock keeps two gates running at once from losing each other's names.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ballot_guard.atomic import json_bytes, write_bytes
from ballot_guard.errors import CannotJudge
from ballot_guard.timestamps import parse_utc

if sys.platform != "win32":
    import fcntl

Event = Mapping[str, Any]
RECORD_KEYS = ("frozen_at", "ballots", "digest", "commit", "seed", "owner", "note")


class FreezeFileError(CannotJudge):
    """The freeze file cannot be read: exit 4, naming it."""


@dataclass(frozen=True)
class FreezeFile:
    frozen: tuple[str, ...] = ()
    records: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    history: tuple[Event, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown top-level keys, kept

    def record(self, name: str) -> Mapping[str, Any]:
        return self.records.get(name, {})


def parse(data: bytes | None, source: str) -> FreezeFile:
    """The freeze file from its bytes (None: no file, nothing frozen)."""
    if data is None:
        return FreezeFile()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FreezeFileError(f"{source}: corrupt freeze file: {exc}") from exc
    except RecursionError:
        raise FreezeFileError(f"{source}: corrupt freeze file: nested too deeply") from None
    if not isinstance(doc, dict):
        raise FreezeFileError(f"{source}: corrupt freeze file: expected a JSON object")
    frozen = doc.get("frozen", [])
    if not isinstance(frozen, list) or not all(isinstance(n, str) and n for n in frozen):
        raise FreezeFileError(f"{source}: corrupt freeze file: \"frozen\" must be a list of names")
    records = doc.get("records", {})
    if not isinstance(records, dict) or not all(isinstance(v, dict) for v in records.values()):
        raise FreezeFileError(f"{source}: corrupt freeze file: \"records\" must map names "
                              "to objects")
    history = doc.get("history", [])
    if not isinstance(history, list) or not all(
            isinstance(e, dict) and isinstance(e.get("event"), str)
            and isinstance(e.get("name"), str) for e in history):
        raise FreezeFileError(f"{source}: corrupt freeze file: \"history\" must be a list of "
                              "events with \"event\" and \"name\"")
    extra = {k: v for k, v in doc.items() if k not in ("frozen", "records", "history")}
    return FreezeFile(tuple(dict.fromkeys(frozen)), records, tuple(history), extra)


def load(path: str) -> FreezeFile:
    try:
        with open(path, "rb") as f:
            data: bytes | None = f.read()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise FreezeFileError(f"{path}: cannot read the freeze file: {exc.strerror}") from exc
    return parse(data, path)


def dumps(ff: FreezeFile) -> str:
    doc: dict[str, Any] = {"frozen": list(ff.frozen)}
    if ff.records or ff.history:
        doc["records"] = {k: dict(v) for k, v in ff.records.items()}
        doc["history"] = [dict(e) for e in ff.history]
    doc.update(ff.extra)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@contextlib.contextmanager
def locked(lock_path: str) -> Iterator[None]:
    """An exclusive lock held across re-read, change and write of the freeze file."""
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if sys.platform == "win32":  # pragma: no cover - not POSIX: no lock
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def update(path: str, lock_path: str, change: Callable[[FreezeFile], FreezeFile]) -> FreezeFile:
    """Apply ``change`` to the file as it is now, under the lock; write only if it changed."""
    with locked(lock_path):
        before = load(path)
        after = change(before)
        if after != before:
            write_bytes(path, json_bytes(dumps(after)))
        return after


# --- transitions (pure) -------------------------------------------------------

def add_frozen(ff: FreezeFile, name: str, record: Mapping[str, Any], at: str) -> FreezeFile:
    """Freeze ``name`` with its record and a ``frozen`` event (no-op if already frozen)."""
    if name in ff.frozen:
        return ff
    rec = {k: record.get(k) for k in RECORD_KEYS}
    rec["frozen_at"] = at
    return replace(ff, frozen=(*ff.frozen, name), records={**ff.records, name: rec},
                   history=(*ff.history, {"event": "frozen", "name": name, "at": at}))


def merge(mine: FreezeFile, theirs: FreezeFile) -> FreezeFile:
    """``mine`` plus what ``theirs`` adds: names, their records, events; never drops anything."""
    frozen = (*mine.frozen, *(n for n in theirs.frozen if n not in mine.frozen))
    records = dict(mine.records)
    for name, rec in theirs.records.items():
        if name in frozen and name not in records:
            records[name] = rec
    history = list(mine.history)
    for event in theirs.history:
        if event not in history:
            history.append(event)
    return replace(mine, frozen=frozen, records=records, history=tuple(history))


def assign(ff: FreezeFile, name: str, owner: str, note: str, at: str) -> FreezeFile:
    if name not in ff.frozen:
        raise CannotJudge(f"{name!r} is not frozen")
    rec = {**dict.fromkeys(RECORD_KEYS), **ff.record(name), "owner": owner, "note": note}
    event = {"event": "assigned", "name": name, "at": at, "owner": owner, "note": note}
    return replace(ff, records={**ff.records, name: rec}, history=(*ff.history, event))


def unfreeze(ff: FreezeFile, name: str, event: Mapping[str, Any]) -> FreezeFile:
    """Remove ``name`` (it passed its runs) and append its ``unfrozen`` event."""
    if name not in ff.frozen:
        return ff
    records = {k: v for k, v in ff.records.items() if k != name}
    return replace(ff, frozen=tuple(n for n in ff.frozen if n != name), records=records,
                   history=(*ff.history, {"event": "unfrozen", "name": name, **event}))


def last_review(ff: FreezeFile, name: str) -> str | None:
    """When a human last looked: the latest ``assigned`` event, else the ``frozen`` one."""
    when: str | None = None
    for e in ff.history:
        if e.get("name") == name and e.get("event") in ("frozen", "assigned"):
            when = str(e.get("at"))
    return when or ff.record(name).get("frozen_at")


def review(ff: FreezeFile, review_days: int, now: float) -> list[tuple[str, str]]:
    """(name, problem) for each frozen name that needs a human."""
    problems = []
    for name in ff.frozen:
        rec = ff.record(name)
        if not rec.get("owner") or not rec.get("note"):
            problems.append((name, ("no owner or repair note (ballot-guard freeze assign "
                                    f"{name} --owner WHO --note TEXT)")))
            continue
        stamp = parse_utc(last_review(ff, name) or "")
        if stamp is None:
            problems.append((name, "no review date on record"))
        elif now - stamp > review_days * 86400:
            problems.append((name, (f"last reviewed {last_review(ff, name)}, more than "
                                    f"{review_days} days ago")))
    return problems
