"""Ballots, exit precedence and the terminal report, without running anything."""
from __future__ import annotations

import io

import pytest
from hypothesis import given, strategies as st

from ballot_guard.ballot import Ballot, catch_probability, decide, exit_code
from ballot_guard.report import Progress, budget_line, print_report
from ballot_guard.runner import Run

OUTCOMES = ("pass", "fail", "timeout", "error")


def run(outcome: str) -> Run:
    return Run(outcome, {"pass": 0, "fail": 1, "timeout": None, "error": 5}[outcome], 0.1)


@given(st.lists(st.sampled_from(OUTCOMES), min_size=2, max_size=6))
def test_decide(outcomes: list[str]) -> None:
    got = decide([run(o) for o in outcomes])
    if "error" in outcomes:
        assert got == "error"
    elif set(outcomes) == {"pass"}:
        assert got == "pass"
    elif "pass" not in outcomes:
        assert got == "fail"  # a timeout is a failing run
    else:
        assert got == "freeze"


@given(st.lists(st.sampled_from(("pass", "fail", "freeze", "frozen", "error")), max_size=6))
def test_exit_precedence(kinds: list[str]) -> None:
    code = exit_code([Ballot(f"p{i}", k, 2) for i, k in enumerate(kinds)])
    expected = 4 if "error" in kinds else 1 if "fail" in kinds else \
        3 if {"freeze", "frozen"} & set(kinds) else 0
    assert code == expected


@pytest.mark.parametrize("n, p, expected", [(2, 0.1, 0.18), (5, 0.1, 0.41), (2, 0.5, 0.5)])
def test_catch_probability(n: int, p: float, expected: float) -> None:
    assert round(catch_probability(n, p), 2) == expected
    assert "2 runs catch an oracle that fails 10% of the time with probability 0.18" in \
        budget_line([2, 2, 5])


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    ballots = [Ballot("a", "pass", 2, (run("pass"), run("pass"))),
               Ballot("b", "frozen", 2)]
    for stream, env, coloured in ((Tty(), {}, True), (Tty(), {"NO_COLOR": "1"}, False),
                                  (io.StringIO(), {}, False)):
        print_report(ballots, seed=7, header="h", stream=stream, environ=env)
        text = stream.getvalue()
        assert ("\033[" in text) is coloured
        assert "seed 7" in text and "abstain" in text and "b" in text


def test_progress_only_on_a_terminal() -> None:
    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        p = Progress(2, stream)
        p.step("a", "pass")
        p.step("a", "fail")
        p.close()
    assert "[2/2] a: fail" in tty.getvalue() and plain.getvalue() == ""
