"""What a scope rule sees (``ScopeContext``) and returns (``Reason``), and the
verdict on one change (``Verdict``): the leaf every rule and report imports.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ballot_guard.change.from_git import Change
from ballot_guard.config import Config
from ballot_guard.git import Snapshot


class Reason(NamedTuple):
    rule: int  # 1 mixed, 2 agent touches oracle, 3 fixtures not re-pinned, 4 freeze history
    # lost, 5 judge tampering
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
    def status(self) -> str:
        if not self.judged:
            return "unjudged"
        return "blocked" if self.reasons else "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.status,
            "oracle": list(self.oracle),
            "behavior": list(self.behavior),
            "neutral": list(self.neutral),
            "reasons": [{"rule": r.rule, "message": r.message} for r in self.reasons],
        }
