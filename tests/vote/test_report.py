"""Ballots, exit precedence and the terminal report, without running anything."""
from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.run.runner import Run
from ballot_guard.vote.ballot import Ballot, catch_probability, decide, exit_code, repeats_for
from ballot_guard.vote.report import Progress, budget_line, print_report, runs_cell

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


@pytest.mark.parametrize("n, p, expected", [(2, 0.1, 0.18), (5, 0.1, 0.41), (2, 0.5, 0.5),
                                             (7, 0.5, 0.98), (22, 0.1, 0.90), (44, 0.1, 0.99)])
def test_catch_probability(n: int, p: float, expected: float) -> None:
    assert round(catch_probability(n, p), 2) == expected


def test_the_repeats_that_reach_09_and_099() -> None:
    assert (repeats_for(0.9), repeats_for(0.99)) == (22, 44)
    assert catch_probability(21) < 0.9 <= catch_probability(22)
    assert catch_probability(43) < 0.99 <= catch_probability(44)
    assert repeats_for(0.99, 0.5) == 8 and repeats_for(0.5, 0.5) == 2


@given(st.floats(0.05, 0.95), st.floats(0.2, 0.99))
def test_repeats_for_is_the_fewest(p: float, target: float) -> None:
    n = repeats_for(target, p)
    assert n >= 2 and catch_probability(n, p) >= target
    assert n == 2 or catch_probability(n - 1, p) < target


def test_the_budget_line_says_what_the_figure_assumes() -> None:
    assert budget_line([2, 2]) == (
        "if runs are independent, 2 runs catch a property that fails 10% of the time with "
        "probability 0.18 (repeats = 22 for 0.9, repeats = 44 for 0.99).")
    assert budget_line([5, 2, 2]) == (
        "if runs are independent, 2 runs catch a property that fails 10% of the time with "
        "probability 0.18, 5 runs with probability 0.41 (repeats = 22 for 0.9, "
        "repeats = 44 for 0.99).")
    assert budget_line([]) == ""


@pytest.mark.parametrize("outcomes, cell", [
    (["fail", "fail", "pass", "fail", "fail"], "4 of 5 failed"),
    (["pass", "pass"], "0 of 2 failed"),
    (["timeout", "fail"], "2 of 2 failed (1 timed out)"),
    (["pass", "error", "fail"], "1 of 3 failed, 1 error"),
    (["error", "error"], "0 of 2 failed, 2 errors"),
    ([], "not run"),
])
def test_the_runs_column_counts_failures_of_runs(outcomes: list[str], cell: str) -> None:
    assert runs_cell(Ballot("p", "freeze", len(outcomes), tuple(run(o) for o in outcomes))) \
        == cell


def test_the_report_lines() -> None:
    stream = io.StringIO()
    ballots = [Ballot("flaky", "freeze", 5, tuple(run(o) for o in
                                                  ("fail", "fail", "pass", "fail", "fail"))),
               Ballot("ok", "pass", 2, (run("pass"), run("pass"))),
               Ballot("b", "frozen", 2)]
    print_report(ballots, seed=7, header="h", stream=stream, environ={})
    assert stream.getvalue().splitlines()[:8] == [
        "h",
        "property  ballot  runs           seconds",
        "flaky     freeze  4 of 5 failed     0.50",
        "ok        pass    0 of 2 failed     0.20",
        "b         frozen  not run           0.00",
        "repeats: flaky=5, ok=2; seed 7 (replay with --seed 7)",
        ("if runs are independent, 2 runs catch a property that fails 10% of the time with "
         "probability 0.18, 5 runs with probability 0.41 (repeats = 22 for 0.9, "
         "repeats = 44 for 0.99)."),
        "warning: 2 voter(s) abstain and need a human repair: flaky, b",
    ]


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
        assert "seed 7 (replay with --seed 7)" in text
        assert "warning: 1 voter(s) abstain and need a human repair: b" in text


def test_progress_only_on_a_terminal() -> None:
    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        p = Progress(2, stream)
        p.step("a", "pass")
        p.step("a", "fail")
        p.close()
    assert "[2/2] a: fail" in tty.getvalue() and plain.getvalue() == ""
