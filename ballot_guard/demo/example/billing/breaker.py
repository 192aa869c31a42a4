"""A circuit breaker: after a retry storm, stop calling the gateway for a while."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from billing.clock import Clock

COOLDOWN_SECONDS = 300.0


class Store(Protocol):
    def load(self) -> float | None: ...

    def save(self, opened_at: float) -> None: ...


class MemoryStore:
    """Breaker state for one process."""

    def __init__(self) -> None:
        self.opened_at: float | None = None

    def load(self) -> float | None:
        return self.opened_at

    def save(self, opened_at: float) -> None:
        self.opened_at = opened_at


class FileStore:
    """Breaker state in a file, shared by every process that opens it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> float | None:
        try:
            return float(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def save(self, opened_at: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(repr(opened_at))
        os.replace(tmp, self.path)


class Breaker:
    """Open for ``cooldown`` seconds (on ``clock``) after ``trip``."""

    def __init__(self, store: Store, clock: Clock, cooldown: float = COOLDOWN_SECONDS) -> None:
        self.store = store
        self.clock = clock
        self.cooldown = cooldown

    def is_open(self) -> bool:
        opened_at = self.store.load()
        return opened_at is not None and self.clock.now() - opened_at < self.cooldown

    def trip(self) -> None:
        self.store.save(self.clock.now())
