"""The gate sharded across machines: real shard gates in separate worktrees, one merge."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.vote.shard import assign
from testing.gate_support import (
    FAIL,
    PASS,
    _shared_pycache,
    flip,
    keys_follow_the_types,
    make_project,
    project,
)
from testing.helpers import CliResult, Repo, run_cli

__all__ = ["_shared_pycache", "project"]

SEED = "4242"


def _worktree(repo: Repo, where: Path) -> Path:
    repo.git("worktree", "add", "-q", "--detach", str(where), "HEAD")
    return where


def shard_gates(repo: Repo, tmp: Path, n: int, *extra: str,
                seed: str | None = SEED) -> list[tuple[int, Path, CliResult]]:
    """N shard gates at once, each a separate process in its own worktree (as N machines)."""
    procs = []
    for k in range(1, n + 1):
        tree = _worktree(repo, tmp / f"machine{k}")
        card = tmp / f"shard{k}.json"
        args = ["gate", "--shard", f"{k}/{n}", "--scorecard", str(card), *extra]
        if seed is not None:
            args += ["--seed", seed]
        procs.append((k, card, subprocess.Popen(
            [sys.executable, "-m", "ballot_guard", *args], cwd=tree,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    done = []
    for k, card, proc in procs:
        out, err = proc.communicate(timeout=300)
        done.append((k, card, CliResult(proc.returncode, os.fsdecode(out), os.fsdecode(err))))
    return done


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def ballots(card: Any) -> dict[str, str]:
    return {name: p["ballot"] for name, p in card["properties"].items()}


def merge(repo: Repo, cards: Sequence[Path], *extra: str) -> CliResult:
    return run_cli(["gate", "--merge", *map(str, cards), *extra], repo.path)


PROPS = {"a": PASS, "b": PASS, "c": FAIL, "d": PASS, "e": PASS}


def test_merged_verdict_equals_one_gate_on_the_same_seed(project: Repo, tmp_path: Path) -> None:
    make_project(project, PROPS)
    shards = shard_gates(project, tmp_path, 3)
    cards = [card for _, card, _ in shards]
    assignment = [load(c)["shard"]["voters"] for c in cards]
    assert sorted(v for s in assignment for v in s) == sorted(PROPS)
    assert all(load(c)["seed"] == int(SEED) for c in cards)
    for c in cards:
        keys_follow_the_types(load(c))  # the shard record its TypedDict declares
    assert not (project.path / "freeze_set.json").exists()

    merged = merge(project, cards, "--scorecard", str(tmp_path / "merged.json"),
                   "--junit-xml", str(tmp_path / "merged.xml"))
    one = run_cli(["gate", "--seed", SEED, "--scorecard", str(tmp_path / "one.json")],
                  project.path)
    assert merged.code == one.code == 1
    card, single = load(tmp_path / "merged.json"), load(tmp_path / "one.json")
    assert ballots(card) == ballots(single) == {
        "a": "pass", "b": "pass", "c": "fail", "d": "pass", "e": "pass"}
    assert list(card["properties"]) == list(single["properties"])  # the voters' own order
    assert card["exit"] == 1 and card["seed"] == int(SEED)
    assert card["commit"] == project.head() and card["digest"]["ok"] is True
    assert [s["k"] for s in card["shards"]] == [1, 2, 3]
    keys_follow_the_types(card)
    assert "c         fail" in merged.out and "seed 4242" in merged.out
    assert 'failures="1"' in (tmp_path / "merged.xml").read_text()


def test_ci_takes_the_merged_verdict_as_a_value(project: Repo, tmp_path: Path) -> None:
    """``ci --merge``: the verdict, the report and CI's JUnit file come from the merge's
    scorecard (which ``merged`` hands back as a value)."""
    make_project(project, PROPS)
    cards = [card for _, card, _ in shard_gates(project, tmp_path, 2)]
    res = run_cli(["ci", "--base", "HEAD", "--merge", *map(str, cards)], project.path)
    assert res.code == 1, res.out + res.err
    assert f"the gate at {project.head()[:12]} exited 1 (fail: c)" in res.out
    merged = load(project.path / ".ballot_guard" / "scorecard.json")
    assert ballots(merged) == {"a": "pass", "b": "pass", "c": "fail", "d": "pass", "e": "pass"}
    keys_follow_the_types(merged)
    junit = (project.path / ".ballot_guard" / "junit.xml").read_text()
    assert 'tests="5" failures="1" errors="0" skipped="0"' in junit


def test_a_flip_on_one_shard_freezes_and_only_the_merge_records_it(project: Repo,
                                                                   tmp_path: Path) -> None:
    make_project(project, {"a": PASS, "flaky": flip(tmp_path / "counter"), "z": PASS})
    shards = shard_gates(project, tmp_path, 2)
    on = [k for k, card, _ in shards if "flaky" in load(card)["shard"]["voters"]]
    assert len(on) == 1
    k, card, res = shards[on[0] - 1]
    assert res.code == 3 and load(card)["properties"]["flaky"]["ballot"] == "freeze"
    assert "the freeze is recorded by `ballot-guard gate --merge`" in res.out
    for _, _, r in shards:  # no shard wrote a freeze record, in its tree or anywhere
        assert "recorded in freeze_set.json" not in r.out
    assert not (tmp_path / f"machine{k}" / "freeze_set.json").exists()

    merged = merge(project, [c for _, c, _ in shards])
    assert merged.code == 3
    frozen = load(project.path / "freeze_set.json")
    assert frozen["frozen"] == ["flaky"]
    assert frozen["records"]["flaky"]["seed"] == int(SEED)
    assert frozen["records"]["flaky"]["commit"] == project.head()


def test_the_seed_is_derived_from_the_commit_when_not_given(project: Repo,
                                                             tmp_path: Path) -> None:
    make_project(project, {"a": PASS, "b": PASS})
    shards = shard_gates(project, tmp_path, 2, seed=None)
    seeds = {load(card)["seed"] for _, card, _ in shards}
    assert seeds == {int(project.head()[:8], 16)}
    assert merge(project, [c for _, c, _ in shards]).code == 0


def test_durations_balance_the_shards(project: Repo, tmp_path: Path) -> None:
    make_project(project, {"a": PASS, "b": PASS, "c": PASS, "d": PASS})
    old = {"schema": "ballot-guard/scorecard/1", "properties": {
        "a": {"runs": [{"seconds": 9.0}]}, "b": {"runs": [{"seconds": 5.0}]},
        "c": {"runs": [{"seconds": 4.0}]}, "d": {"runs": [{"seconds": 1.0}]}}}
    (tmp_path / "last.json").write_text(json.dumps(old))
    shards = shard_gates(project, tmp_path, 2, "--durations", str(tmp_path / "last.json"))
    assert [load(c)["shard"]["voters"] for _, c, _ in shards] == [["a", "d"], ["b", "c"]]
    assert merge(project, [c for _, c, _ in shards]).code == 0


@pytest.fixture
def three(project: Repo, tmp_path: Path) -> tuple[Repo, list[Path]]:
    make_project(project, {"a": PASS, "b": PASS, "c": PASS})
    return project, [card for _, card, _ in shard_gates(project, tmp_path, 3)]


def _edit(path: Path, change: Any) -> Path:
    card = load(path)
    change(card)
    path.write_text(json.dumps(card))
    return path


@pytest.mark.parametrize("what, change, names", [
    ("commit", lambda c: c.update(commit="0" * 40), "its commit differs"),
    ("seed", lambda c: c.update(seed=7), "its seed differs"),
    ("pin", lambda c: c["digest"].update(pinned="sha256-v2:" + "0" * 64), "its pin differs"),
    ("config", lambda c: c["shard"].update(config="sha256:x"), "its configuration differs"),
    ("n", lambda c: c["shard"].update(n=4), "its shard count N differs"),
    ("assignment", lambda c: c["shard"].update(assignment=[["a", "b"], [], ["c"]]),
     "its voter assignment differs"),
])
def test_shards_that_are_not_one_vote_are_refused(three: tuple[Repo, list[Path]], what: str,
                                                  change: Any, names: str) -> None:
    repo, cards = three
    _edit(cards[1], change)
    res = merge(repo, cards)
    assert res.code == 4
    assert f"{cards[1]}: {names}" in res.err
    assert not (repo.path / ".ballot_guard" / "scorecard.json").exists()


def test_missing_duplicated_misplaced_and_unrun_voters_are_refused(
        three: tuple[Repo, list[Path]], tmp_path: Path) -> None:
    repo, cards = three
    res = merge(repo, cards[:2])
    assert res.code == 4 and "shard 3/3 is missing" in res.err
    res = merge(repo, [cards[0], cards[0], cards[1], cards[2]])
    assert res.code == 4 and "shard 1/3 given twice" in res.err

    moved = tmp_path / "moved.json"
    moved.write_text(cards[0].read_text())
    card = load(moved)
    voter = card["shard"]["voters"][0]
    other = load(cards[1])
    other["properties"][voter] = card["properties"][voter]
    (tmp_path / "other.json").write_text(json.dumps(other))
    res = merge(repo, [cards[0], tmp_path / "other.json", cards[2]])
    assert res.code == 4
    assert f"voter {voter!r} was run on shard 2/3, which it is not assigned to" in res.err

    _edit(moved, lambda c: c["properties"].pop(voter))
    res = merge(repo, [moved, cards[1], cards[2]])
    assert res.code == 4
    assert f"voter {voter!r} is assigned to shard 1/3 but was not run there" in res.err


def test_a_ballot_that_does_not_follow_from_its_runs_is_refused(
        three: tuple[Repo, list[Path]]) -> None:
    repo, cards = three
    voter = load(cards[0])["shard"]["voters"][0]

    def forge(card: Any) -> None:
        card["properties"][voter]["runs"][0]["outcome"] = "fail"  # ballot still says pass

    _edit(cards[0], forge)
    res = merge(repo, cards)
    assert res.code == 4
    assert f"voter {voter!r}'s ballot 'pass' does not follow from its 2 of 2 runs" in res.err


@pytest.mark.parametrize("content, says", [
    (b"not json", "not a scorecard"),
    (b'{"schema": "something/else"}', "not a ballot-guard scorecard"),
    (json.dumps({"schema": "ballot-guard/scorecard/1", "exit": 0, "properties": {}}).encode(),
     "not a shard scorecard"),
])
def test_a_file_that_is_not_a_shard_scorecard_is_refused(three: tuple[Repo, list[Path]],
                                                         content: bytes, says: str) -> None:
    repo, cards = three
    cards[2].write_bytes(content)
    res = merge(repo, cards)
    assert res.code == 4 and res.err.count("\n") == 1
    assert f"{cards[2]}: {says}" in res.err


@pytest.mark.parametrize("code", [2, 4])
def test_a_shard_that_could_not_vote_decides_the_merge(three: tuple[Repo, list[Path]],
                                                       code: int) -> None:
    repo, cards = three

    def fail(card: Any) -> None:
        card["exit"] = code
        card["properties"] = {}

    _edit(cards[1], fail)
    res = merge(repo, cards)
    assert res.code == code
    assert f"shard 2/3 ({cards[1]}) exited {code}" in res.out
    assert load(repo.path / ".ballot_guard" / "scorecard.json")["exit"] == code


def test_real_drift_on_a_shard_makes_the_merge_2(project: Repo, tmp_path: Path) -> None:
    make_project(project, {"a": PASS, "b": PASS})
    shards = shard_gates(project, tmp_path, 2)
    drifted = tmp_path / "machine1"
    (drifted / "fixtures" / "cases.json").write_text('{"retries": 4}\n')
    res = run_cli(["gate", "--shard", "1/2", "--seed", SEED, "--scorecard",
                   str(tmp_path / "shard1.json")], drifted)
    assert res.code == 2
    assert merge(project, [c for _, c, _ in shards]).code == 2


@pytest.mark.parametrize("args, says", [
    (["gate", "--shard", "3/2"], "K must be between 1 and N"),
    (["gate", "--shard", "x"], "--shard must be K/N"),
    (["gate", "--shard", "0/2"], "K must be between 1 and N"),
    (["gate", "--durations", "x.json"], "--durations goes with --shard"),
    (["gate", "--merge", "a.json", "--seed", "3"], "--merge takes no --seed"),
])
def test_bad_shard_arguments_are_usage_errors(project: Repo, args: list[str],
                                              says: str) -> None:
    make_project(project, {"a": PASS})
    res = run_cli(args, project.path)
    assert res.code == 4 and says in res.err


voter_lists = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1,
                       max_size=40, unique=True)


@settings(max_examples=300, deadline=None)
@given(voter_lists, st.integers(1, 12), st.data())
def test_assignment_puts_every_voter_on_exactly_one_shard_and_balances(
        voters: list[str], n: int, data: st.DataObject) -> None:
    weights = data.draw(st.none() | st.fixed_dictionaries(
        {v: st.floats(0.0, 1000.0, allow_nan=False) for v in voters}))
    plan = assign(voters, n, weights)
    assert len(plan) == n
    placed = [v for shard in plan for v in shard]
    assert sorted(placed) == sorted(voters)  # every voter exactly once
    assert plan == assign(list(voters), n, dict(weights) if weights else None)  # same everywhere
    for shard in plan:  # each shard keeps the voters' own order
        assert shard == [v for v in voters if v in set(shard)]
    w = weights or dict.fromkeys(voters, 1.0)
    loads = [sum(w[v] for v in shard) for shard in plan]
    assert max(loads) - min(loads) <= max(w.values()) + 1e-6


def test_the_merge_refuses_shards_of_another_commit_or_config_than_its_checkout(
        three: tuple[Repo, list[Path]]) -> None:
    """The freeze records go into the merging checkout: it must be the one the shards
    voted on."""
    repo, cards = three
    voted = repo.head()
    repo.write("notes.txt", "later\n")
    repo.commit_all("a later commit")
    res = merge(repo, cards)
    assert res.code == 4 and res.err.count("\n") == 1
    assert f"{cards[0]}: the shards voted on commit {voted[:12]}, but this checkout is at " \
        f"{repo.head()[:12]}" in res.err
    repo.git("reset", "-q", "--hard", voted)
    repo.write("pyproject.toml", (repo.path / "pyproject.toml").read_text() + "repeats = 3\n")
    res = merge(repo, cards)
    assert res.code == 4
    assert f"{cards[0]}: the shards voted with another configuration than this checkout's" \
        in res.err
    assert not (repo.path / ".ballot_guard" / "scorecard.json").exists()
