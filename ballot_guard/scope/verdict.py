"""What a scope rule sees (``ScopeContext``) and returns (``Reason``), and the
verdict on one change (``Verdict``): the leaf every rule and report imports.
"""
from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any, NamedTuple

from ballot_guard.change.from_git import Change
from ballot_guard.config import Config
from ballot_guard.git import Snapshot
from ballot_guard.vocabulary import Status


class ScopeRule(IntEnum):
    """The contract's scope rules, by their numbers.

    A rule prints as its number wherever a user sees it (``rule 3`` in messages, ``3`` in
    ``--json``, the CI annotations and the step summary) on every Python the package
    supports: 3.10's ``IntEnum`` would print ``ScopeRule.PIN`` through ``str()``.
    """

    MIXED = 1  # oracle and behaviour paths in one change
    AGENT_ORACLE = 2  # an agent change touches the oracle
    PIN = 3  # the fixtures changed without a matching re-pin
    FREEZE = 4  # the freeze file loses a name or history
    TAMPER = 5  # an agent change reaches into the judge at run time

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class Reason(NamedTuple):
    rule: ScopeRule
    message: str


class ScopeContext:
    """What a rule sees.  ``new()`` is the changed side, built on first use.

    A plain class (no dataclass machinery on the commit-time path); the rules
    read its attributes and judge_change fills in the classification.
    """

    __slots__ = (
        "_new",
        "agent_why",
        "behavior",
        "change",
        "config",
        "is_agent",
        "make_new",
        "neutral",
        "old",
        "oracle",
        "patch",
        "root",
    )

    def __init__(self, root: str, change: Change, config: Config, oracle: tuple[str, ...],
                 behavior: tuple[str, ...], neutral: tuple[str, ...], is_agent: bool,
                 old: Snapshot, make_new: Callable[[], Snapshot] | None = None) -> None:
        self.root = root
        self.change = change
        self.config = config  # the BASE's config (never the change's own)
        self.oracle = oracle
        self.behavior = behavior
        self.neutral = neutral
        self.is_agent = is_agent
        self.old = old  # the base side (empty tree when no base)
        self.make_new = make_new  # default: the commit's tree or the index
        self._new: Snapshot | None = None
        self.agent_why = ""  # how the change is known to be an agent's, for rule 2's message
        self.patch: bytes | None = None  # a patch file's bytes (source "patch")

    def new(self) -> Snapshot:
        """A commit's tree, the index, or (patch) a temporary index holding HEAD + patch."""
        if self._new is None:
            if self.make_new is not None:
                self._new = self.make_new()
            elif self.change.source == "commit":
                self._new = Snapshot(self.root, self.change.commit)
            elif self.change.source == "staged":
                self._new = Snapshot(self.root)
            else:
                raise ValueError("a patch's ScopeContext needs make_new")
        return self._new


Rule = Callable[[ScopeContext], "list[Reason]"]


class Verdict(NamedTuple):
    change: Change
    judged: bool  # False before adoption (base lacks the digest file) -> "unjudged"
    oracle: tuple[str, ...]
    behavior: tuple[str, ...]
    neutral: tuple[str, ...]
    reasons: tuple[Reason, ...]

    @property
    def status(self) -> Status:
        if not self.judged:
            return "unjudged"
        return "blocked" if self.reasons else "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.status,
            "oracle": list(self.oracle),
            "behavior": list(self.behavior),
            "neutral": list(self.neutral),
            "reasons": [{"rule": int(r.rule), "message": r.message} for r in self.reasons],
        }
