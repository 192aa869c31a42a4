"""The ledger: one entry per idempotency key, however often a charge is replayed."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    key: str
    customer: str
    amount_cents: int


class KeyConflict(Exception):
    """The same idempotency key was written with a different charge."""


class Ledger:
    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    def write(self, key: str, customer: str, amount_cents: int) -> Entry:
        """Record a charge once; a replay of the same key returns the first entry."""
        entry = Entry(key, customer, amount_cents)
        existing = self._entries.get(key)
        if existing is None:
            self._entries[key] = entry
            return entry
        if existing != entry:
            raise KeyConflict(f"{key}: already written as {existing}")
        return existing

    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries.values())

    def balance(self, customer: str) -> int:
        return sum(e.amount_cents for e in self._entries.values() if e.customer == customer)
