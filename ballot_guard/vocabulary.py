"""The contract's words, typed: where a change comes from, how a run ended, how a voter
voted, what a scope verdict says, what the freeze file's history records.

Each alias is the set of exact strings the outputs carry (``scope --json``, the
scorecard, the freeze file), so a misspelt word is a type error (mypy strict), never a
comparison that is silently false.  The scope rules' numbers are ``ScopeRule``
(``ballot_guard.scope.verdict``); the exit codes are ``ballot_guard.exit_codes``.
"""
from __future__ import annotations

from typing import Literal

# what a change is read from: the index against HEAD, a commit against its first parent,
# a patch file as if applied to HEAD
Source = Literal["staged", "commit", "patch"]
SOURCES: tuple[Source, ...] = ("staged", "commit", "patch")

# how one run of a property ended (a timeout is a failing run)
Outcome = Literal["pass", "fail", "timeout", "error"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "timeout", "error")
FAILING: tuple[Outcome, ...] = ("fail", "timeout")

# how a voter voted: every run passed, every run failed, the runs disagreed (frozen in this
# run), already frozen (not run), the runner broke
BallotKind = Literal["pass", "fail", "freeze", "frozen", "error"]
BALLOTS: tuple[BallotKind, ...] = ("pass", "fail", "freeze", "frozen", "error")
ABSTAINING: tuple[BallotKind, ...] = ("freeze", "frozen")

# a scope verdict: judged and clean, judged and blocked, or before adoption
Status = Literal["ok", "blocked", "unjudged"]
STATUSES: tuple[Status, ...] = ("ok", "blocked", "unjudged")

# the freeze file's append-only history
FreezeEvent = Literal["frozen", "assigned", "unfrozen"]
FREEZE_EVENTS: tuple[FreezeEvent, ...] = ("frozen", "assigned", "unfrozen")
