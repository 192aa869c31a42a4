"""The contract's words: each tuple holds exactly its alias's words, in the contract's order."""
from __future__ import annotations

from typing import get_args

from ballot_guard import vocabulary as v


def test_each_tuple_is_its_alias() -> None:
    assert v.SOURCES == get_args(v.Source) == ("staged", "commit", "patch")
    assert v.OUTCOMES == get_args(v.Outcome) == ("pass", "fail", "timeout", "error")
    assert v.BALLOTS == get_args(v.BallotKind) == ("pass", "fail", "freeze", "frozen", "error")
    assert v.STATUSES == get_args(v.Status) == ("ok", "blocked", "unjudged")
    assert v.FREEZE_EVENTS == get_args(v.FreezeEvent) == ("frozen", "assigned", "unfrozen")


def test_the_subsets_are_of_their_words() -> None:
    assert set(v.FAILING) < set(v.OUTCOMES) and v.FAILING == ("fail", "timeout")
    assert set(v.ABSTAINING) < set(v.BALLOTS) and v.ABSTAINING == ("freeze", "frozen")
