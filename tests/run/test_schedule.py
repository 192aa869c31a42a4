"""Repeats spread in time: the order of a gate's runs, read from the scorecard's start times."""
from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.run.schedule import History, Scheduler, history_from, rounds
from testing.gate_support import PASS, _shared_pycache, make_project, project, scorecard
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]

SLEEPY = "import time\ndef test_sleeps():\n    time.sleep({secs})\n"


def by_start(card: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every run of the scorecard as (property, run), in the order they started."""
    runs = [(name, r) for name, p in card["properties"].items() for r in p["runs"]]
    assert all(isinstance(r["started"], float) for _, r in runs)
    return sorted(runs, key=lambda nr: nr[1]["started"])


def assert_spread(card: dict[str, Any]) -> None:
    """No voter's runs overlap, and between two runs of one voter another voter's run
    started (the voters here all have the same repeats, so none is ever alone)."""
    order = by_start(card)
    names = [n for n, _ in order]
    assert all(a != b for a, b in itertools.pairwise(names)), names
    for name in card["properties"]:
        mine = [r for n, r in order if n == name]
        for a, b in itertools.pairwise(mine):
            assert b["started"] >= a["started"] + a["seconds"] - 0.002, (name, a, b)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_repeats_of_several_voters_interleave(project: Repo, jobs: str) -> None:
    make_project(project, {n: SLEEPY.format(secs=0.05) for n in ("a", "b", "c")},
                 table="repeats = 3\n")
    res = run_cli(["gate", "--seed", "3", "--jobs", jobs], project.path)
    assert res.code == 0, res.out + res.err
    card = scorecard(project)
    assert_spread(card)
    if jobs == "1":  # serially, the rounds are exactly run 1 of a, b, c, then run 2, ...
        assert [n for n, _ in by_start(card)] == ["a", "b", "c"] * 3


def test_the_longest_voters_of_the_last_scorecard_go_first(project: Repo) -> None:
    make_project(project, {"quick": PASS, "slow": SLEEPY.format(secs=0.3)})
    assert run_cli(["gate"], project.path).code == 0
    first = [n for n, _ in by_start(scorecard(project))]
    assert first == ["quick", "slow", "quick", "slow"]  # no durations yet: the voter order
    assert run_cli(["gate"], project.path).code == 0
    assert [n for n, _ in by_start(scorecard(project))] == ["slow", "quick", "slow", "quick"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_single_voter_waits_about_a_run_between_its_runs(project: Repo, jobs: str) -> None:
    make_project(project, {"alone": SLEEPY.format(secs=0.2)}, table="repeats = 3\n")
    res = run_cli(["gate", "--jobs", jobs], project.path)
    assert res.code == 0, res.out + res.err
    runs = [r for _, r in by_start(scorecard(project))]
    assert len(runs) == 3
    for a, b in itertools.pairwise(runs):
        gap = b["started"] - (a["started"] + a["seconds"])
        assert gap >= 0.5 * a["seconds"], runs


def test_the_gate_prints_the_honest_odds_and_the_runs_column(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    res = run_cli(["gate", "--seed", "9"], project.path)
    assert res.code == 0, res.out + res.err
    lines = res.out.splitlines()
    assert lines[1].split() == ["property", "ballot", "runs", "seconds"]
    assert lines[2].split()[:6] == ["ok", "pass", "0", "of", "2", "failed"]
    assert lines[3:5] == [
        "repeats: ok=2; seed 9 (replay with --seed 9)",
        ("if runs are independent, 2 runs catch a property that fails 10% of the time with "
         "probability 0.18 (repeats = 22 for 0.9, repeats = 44 for 0.99)."),
    ]


# --- the scheduler itself, without running anything ---------------------------------

voter_lists = st.lists(st.integers(1, 5), min_size=1, max_size=5)


@given(voter_lists, st.dictionaries(st.sampled_from("abcde"), st.floats(0, 9), max_size=5))
def test_rounds_keep_every_run_and_never_put_a_voter_beside_itself(
        repeats: list[int], durations: dict[str, float]) -> None:
    voters = [(name, f"test_{name}.py", n) for name, n in zip("abcde", repeats, strict=False)]
    tasks = rounds(voters, durations)
    assert sorted(k for k, _ in tasks) == sorted((v, i) for v, _, n in voters for i in range(n))
    names = [v for (v, _), _ in tasks]
    for i in range(len(names) - 1):  # side by side only once it is the last voter left
        assert names[i] != names[i + 1] or set(names[i:]) == {names[i]}
    for name, _, n in voters:  # each voter's own runs stay in order
        assert [i for (v, i), _ in tasks if v == name] == list(range(n))


def test_rounds_put_the_longest_known_first_and_the_unknown_before_them() -> None:
    voters = [("a", "pa", 2), ("b", "pb", 2), ("c", "pc", 1), ("d", "pd", 2)]
    tasks = [k for k, _ in rounds(voters, {"b": 0.1, "c": 3.0, "d": 1.0})]
    assert tasks == [("a", 0), ("c", 0), ("d", 0), ("b", 0), ("a", 1), ("d", 1), ("b", 1)]


def test_history_comes_from_a_scorecard_and_a_bad_one_gives_none(tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"properties": {
        "a": {"runs": [{"seconds": 1.0, "cpu": 0.1}, {"seconds": 3.0, "cpu": 0.9}]},
        "b": {"runs": [{"seconds": 2.0}]}, "f": {"runs": []}}}))
    assert history_from(str(card)) == History({"a": 2.0, "b": 2.0}, {"a": 0.2})
    for text in ("{", "[]", '{"properties": {"a": {"runs": [{"seconds": "x"}]}}}',
                 '{"properties": {"a": {"runs": [{"seconds": 1, "cpu": "x"}]}}}'):
        card.write_text(text)
        assert history_from(str(card)) == History({}, {})
    assert history_from(str(tmp_path / "missing.json")) == History({}, {})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(1, 3))
def test_slots_never_run_one_voter_twice_at_once(repeats: list[int], jobs: int) -> None:
    tasks = rounds([(n, n, r) for n, r in zip("abcd", repeats, strict=False)])
    sched = Scheduler(tasks, cap=0.0)
    lock = threading.Lock()
    going: set[str] = set()
    events: list[tuple[str, str]] = []

    def slot() -> None:
        while (task := sched.take()) is not None:
            with lock:
                assert task[1] not in going
                going.add(task[1])
                events.append(("start", task[1]))
            time.sleep(0.001)  # let the other slots ask while this one is going
            with lock:
                going.discard(task[1])
            sched.done(task, 0.0)

    threads = [threading.Thread(target=slot) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(v for _, v in events) == sorted(n for n, r in zip("abcd", repeats, strict=False)
                                                 for _ in range(r))  # every run once
