"""The repeat gate on real projects: real git, real pytest subprocesses, real property files."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

from ballot_guard.vote.gate import run_gate
from testing.gate_support import (
    EMPTY,
    FAIL,
    KEEPS_STATE,
    PASS,
    _shared_pycache,
    counting,
    flip,
    keys_follow_the_types,
    lines,
    make_project,
    project,
    read_json,
    scorecard,
)
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]


def test_stable_pass_is_0_and_the_scorecard_says_so(project: Repo) -> None:
    make_project(project, {"ok": PASS, "also_ok": PASS})
    res = run_cli(["gate", "--seed", "77"], project.path)
    assert res.code == 0, res.out + res.err
    assert "repeats: also_ok=2, ok=2; seed 77 (replay with --seed 77)" in res.out.splitlines()
    card = scorecard(project)
    assert card["schema"] == "ballot-guard/scorecard/1" and card["exit"] == 0
    assert card["seed"] == 77 and card["commit"] == project.head() and card["dirty"] is False
    assert card["digest"]["ok"] is True and card["digest"]["pinned"].startswith("sha256-v2:")
    assert card["pytest"] and card["python"]
    assert set(card["properties"]) == {"ok", "also_ok"}
    for prop in card["properties"].values():
        assert prop["ballot"] == "pass" and prop["repeats"] == 2
        assert [r["outcome"] for r in prop["runs"]] == ["pass", "pass"]
        assert all(r["exit"] == 0 and r["passed"] == 1 and r["failed"] == 0 for r in prop["runs"])
    assert (project.path / ".ballot_guard" / ".gitignore").read_text() == "*\n"
    assert project.git("status", "--porcelain") == ""


def test_stable_fail_is_1(project: Repo) -> None:
    make_project(project, {"ok": PASS, "bad": FAIL})
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    props = scorecard(project)["properties"]
    assert props["bad"]["ballot"] == "fail" and props["ok"]["ballot"] == "pass"
    assert [r["failed"] for r in props["bad"]["runs"]] == [1, 1]
    assert "assert 1 + 1 == 3" in res.out  # the failing run's output is shown
    assert not (project.path / "freeze_set.json").exists()


def test_a_flip_freezes_then_abstains_without_running(project: Repo, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    make_project(project, {"flaky": flip(counter), "ok": PASS})
    res = run_cli(["gate", "--seed", "5"], project.path)
    assert res.code == 3, res.out + res.err
    assert "flaky" in res.out and "abstain" in res.out and "commit that file alone" in res.out
    ff = read_json(project.path / "freeze_set.json")
    assert ff["frozen"] == ["flaky"]
    rec = ff["records"]["flaky"]
    assert rec["ballots"] == ["pass", "fail"] and rec["seed"] == 5
    assert rec["commit"] == project.head() and rec["digest"].startswith("sha256-v2:")
    assert rec["owner"] is None and rec["note"] is None
    assert [(e["event"], e["name"]) for e in ff["history"]] == [("frozen", "flaky")]
    assert (project.path / "freeze_set.json").read_text().endswith("}\n")
    assert counter.read_text() == "2"
    project.commit_all("freeze flaky")
    res = run_cli(["gate"], project.path)
    assert res.code == 3
    props = scorecard(project)["properties"]
    assert props["flaky"] == {"ballot": "frozen", "repeats": 2, "runs": []}
    assert counter.read_text() == "2"  # a frozen voter is not run


def test_drift_stops_every_vote(project: Repo, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    make_project(project, {"counts": counting(log)})
    project.write("fixtures/cases.json", '{"retries": 4}\n')
    res = run_cli(["gate"], project.path)
    assert res.code == 2, res.out + res.err
    assert "nobody votes" in res.out
    assert not log.exists()
    card = scorecard(project)
    assert card["exit"] == 2 and card["digest"]["ok"] is False and card["properties"] == {}


def test_a_missing_pin_is_2(project: Repo, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    make_project(project, {"counts": counting(log)}, commit=False)
    project.remove("fixture_digest.txt")
    project.commit_all("no pin")
    res = run_cli(["gate"], project.path)
    assert res.code == 2 and not log.exists()
    assert scorecard(project)["digest"]["pinned"] is None


def test_no_tests_collected_is_an_error_ballot_and_4(project: Repo) -> None:
    make_project(project, {"empty": EMPTY, "bad": FAIL})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    card = scorecard(project)
    assert card["exit"] == 4
    assert card["properties"]["empty"]["ballot"] == "error"
    assert card["properties"]["empty"]["runs"][0]["exit"] == 5
    assert "no tests collected" in res.out


def test_a_run_past_its_timeout_is_killed_and_counts_as_failing(project: Repo) -> None:
    slow = ("import subprocess, sys, time\n"
            "def test_slow():\n"
            "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "    time.sleep(60)\n")
    make_project(project, {"slow": slow}, table="timeout = 1\n")
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    runs = scorecard(project)["properties"]["slow"]["runs"]
    assert [r["outcome"] for r in runs] == ["timeout", "timeout"]
    assert all(r["exit"] is None and r["seconds"] >= 1 for r in runs)
    assert res.out.splitlines()[2].split()[:8] == \
        ["slow", "fail", "2", "of", "2", "failed", "(2", "timed"]


def test_repeats_are_counted_exactly(project: Repo, tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    make_project(project, {"a": counting(a), "b": counting(b)},
                 table="repeats = 3\nrepeats_for = { b = 5 }\n")
    assert run_cli(["gate"], project.path).code == 0
    assert (len(lines(a)), len(lines(b))) == (3, 5)
    props = scorecard(project)["properties"]
    assert (props["a"]["repeats"], len(props["b"]["runs"])) == (3, 5)
    assert run_cli(["gate", "--repeats", "2", "--property", "b"], project.path).code == 0
    assert (len(lines(a)), len(lines(b))) == (3, 7)
    assert list(scorecard(project)["properties"]) == ["b"]


def test_every_run_sees_the_same_inputs_and_a_fresh_state(project: Repo, tmp_path: Path,
                                                           monkeypatch) -> None:
    log, values = tmp_path / "seen.log", tmp_path / "values.log"
    hyp = ("from hypothesis import given, settings, strategies as st\n"
           f"VALUES = pathlib.Path({str(values)!r})\n"
           "@settings(max_examples=5)\n"
           "@given(st.integers())\n"
           "def test_generated(x):\n"
           "    with VALUES.open('a') as f:\n"
           "        f.write(f'{os.getpid()} {x}\\n')\n")
    make_project(project, {"counts": counting(log, hyp)}, table="repeats = 3\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing_matches_this")
    res = run_cli(["gate", "--seed", "4242"], project.path)
    assert res.code == 0, res.out + res.err
    seen = lines(log)
    assert len(seen) == 3
    assert {s["hashseed"] for s in seen} == {"4242"}
    assert len({s["hash"] for s in seen}) == 1
    assert {s["addopts"] for s in seen} == {None}
    assert not any(s["leak"] for s in seen)  # no run sees what another left behind
    assert len({s["pid"] for s in seen}) == 3
    by_run: dict[str, list[str]] = {}
    for line in values.read_text().splitlines():
        pid, x = line.split()
        by_run.setdefault(pid, []).append(x)
    sequences = list(by_run.values())
    assert len(sequences) == 3 and sequences[0] == sequences[1] == sequences[2]
    assert not (project.path / ".hypothesis").exists()
    assert not list(project.path.glob("properties/__pycache__"))


def test_no_example_database_carries_between_runs(project: Repo) -> None:
    src = ("from hypothesis import settings\n"
           "def test_db_starts_empty():\n"
           "    db = settings.default.database\n"
           "    assert db is None or list(db.fetch(b'key')) == []\n"
           "    if db is not None:\n"
           "        db.save(b'key', b'value')\n")
    make_project(project, {"db": src}, table="repeats = 3\n")
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


def test_rev_votes_on_the_commit_and_ignores_a_dirty_tree(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    project.write("properties/test_ok.py", FAIL)          # unstaged
    project.write("properties/test_untracked.py", FAIL)   # untracked
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 0, res.out + res.err
    card = scorecard(project)
    assert list(card["properties"]) == ["ok"] and card["commit"] == project.head()
    assert card["dirty"] is False
    assert project.git("worktree", "list", "--porcelain").count("worktree ") == 1
    leftovers = project.path / ".ballot_guard"
    assert not [p for p in leftovers.iterdir() if p.name.startswith("run-")]  # nor its runs
    assert not (leftovers / "pycache").exists()
    assert run_cli(["gate"], project.path).code == 1  # the dirty tree itself fails


def test_rev_merges_new_freeze_records_into_the_working_tree(project: Repo,
                                                             tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    make_project(project, {"flaky": flip(counter), "ok": PASS},
                 freeze={"frozen": ["old"]})
    mine = {"frozen": ["old", "mine"]}
    project.write("freeze_set.json", json.dumps(mine))
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 3, res.out + res.err
    ff = read_json(project.path / "freeze_set.json")
    assert ff["frozen"] == ["old", "mine", "flaky"]
    assert "commit that file alone" in res.out


def test_exit_precedence_error_over_fail_over_freeze(project: Repo, tmp_path: Path) -> None:
    make_project(project, {"bad": FAIL, "flaky": flip(tmp_path / "c"), "ok": PASS})
    assert run_cli(["gate"], project.path).code == 1
    project.write("properties/test_empty.py", EMPTY)
    assert run_cli(["gate"], project.path).code == 4


def test_json_and_junit_reports_parse(project: Repo, tmp_path: Path) -> None:
    make_project(project, {"ok": PASS, "bad": FAIL, "empty": EMPTY})
    xml, card_path = tmp_path / "out" / "junit.xml", tmp_path / "card.json"
    res = run_cli(["gate", "--json", "--junit-xml", str(xml), "--scorecard", str(card_path)],
                  project.path)
    assert res.code == 4
    card = json.loads(res.out)
    assert card == read_json(card_path) and card["exit"] == 4
    suite = ET.parse(xml).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "3"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"ok", "bad", "empty"}
    assert cases["bad"].find("failure") is not None
    assert cases["empty"].find("error") is not None
    assert cases["ok"].find("failure") is None and cases["ok"].find("error") is None
    assert len(cases["ok"].find("properties")) == 2  # the runs inside


def test_bad_arguments_are_4_and_still_write_a_scorecard(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    assert run_cli(["gate", "--repeats", "1"], project.path).code == 4
    res = run_cli(["gate", "--property", "nope"], project.path)
    assert res.code == 4 and "unknown property 'nope'" in res.err
    card = scorecard(project)
    assert card["exit"] == 4 and "nope" in card["error"]
    res = run_cli(["gate", "--json", "--property", "nope"], project.path)
    assert res.code == 4 and res.json()["exit"] == 4 and "nope" in res.json()["error"]
    assert run_cli(["gate", "--jobs", "0"], project.path).code == 4
    assert run_cli(["gate", "--rev", "no-such-rev"], project.path).code == 4


def test_jobs_run_in_parallel_with_the_same_ballots(project: Repo, tmp_path: Path) -> None:
    sleepy = "import time\ndef test_sleep():\n    time.sleep(0.5)\n"
    make_project(project, {"a": sleepy, "b": sleepy, "bad": FAIL})
    res = run_cli(["gate", "--jobs", "2"], project.path)
    assert res.code == 1, res.out + res.err
    props = scorecard(project)["properties"]
    assert [props[n]["ballot"] for n in ("a", "b", "bad")] == ["pass", "pass", "fail"]


def test_rev_removes_its_worktree_when_it_cannot_judge(project: Repo) -> None:
    make_project(project, {"ok": PASS})
    text = (project.path / "pyproject.toml").read_text()
    project.write("pyproject.toml", text + "repeats = 1\n")
    project.commit_all("bad config")
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 4 and "repeats" in res.err
    assert project.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert scorecard(project)["exit"] == 4


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)
    except FileNotFoundError:
        return True


def test_ctrl_c_stops_the_runs_and_removes_the_worktree(project: Repo, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    slow = (KEEPS_STATE + "import os, pathlib, time\n"
            "def test_slow():\n"
            f"    pathlib.Path({str(pids)!r}, str(os.getpid())).touch()\n"
            "    time.sleep(60)\n")
    make_project(project, {"a": slow, "b": slow})
    proc = subprocess.Popen([sys.executable, "-m", "ballot_guard", "gate", "--rev", "HEAD",
                             "--jobs", "2"], cwd=project.path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert project.git("worktree", "list", "--porcelain").count("worktree ") == 1
    time.sleep(0.2)
    assert all(_gone(pid) for pid in started)
    assert os.path.exists(project.path / ".ballot_guard")


def test_the_configured_voter_list_is_the_vote(project: Repo) -> None:
    make_project(project, {"a": PASS, "b": FAIL}, table='properties = ["a"]\n')
    assert run_cli(["gate"], project.path).code == 0
    assert list(scorecard(project)["properties"]) == ["a"]
    text = (project.path / "pyproject.toml").read_text()
    project.write("pyproject.toml", text.replace('["a"]', '["a", "zz"]'))
    res = run_cli(["gate"], project.path)
    assert res.code == 4 and "test_zz.py" in res.err


def test_a_runner_shadow_at_the_repository_root_does_not_replace_pytest(project: Repo) -> None:
    """A patch that adds ``pytest.py`` or ``hypothesis/`` at the root cannot fake the vote,
    nor a module of the standard library the runner imports as it starts (the runner's
    interpreter is started in the checkout)."""
    make_project(project, {"bad": FAIL})
    fake = "import sys\nsys.exit(0)\n"
    project.write("json.py", fake)
    project.write("typing.py", fake)
    project.write("pytest.py", fake)
    project.write("_pytest/__init__.py", fake)
    project.write("hypothesis/__init__.py", fake)
    project.write("pluggy/__init__.py", fake)
    project.commit_all("shadow the runner")
    for env in ({}, {"BALLOT_GUARD_NO_FORK": "1"}):
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            res = run_cli(["gate"], project.path)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        assert res.code == 1, (env, res.out + res.err)
        assert scorecard(project)["properties"]["bad"]["ballot"] == "fail"


def test_the_project_still_imports_its_own_modules_from_the_root(project: Repo) -> None:
    project.write("billing.py", "CAP = 3\n")
    make_project(project, {"cap": "import billing\ndef test_cap():\n    assert billing.CAP == 3\n"})
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


def test_a_fixture_link_out_of_the_oracle_stops_every_vote(project: Repo,
                                                           tmp_path: Path) -> None:
    """A link already in the pack (before adoption, or past a skipped hook): the pin
    covers its target string, not the file it leads to, so nobody votes."""
    log = tmp_path / "runs.log"
    project.write("src/data.json", '{"retries": 3}\n')
    project.symlink("fixtures/live.json", "../src/data.json")
    make_project(project, {"counts": counting(log)})
    res = run_cli(["gate"], project.path)
    assert res.code == 2, res.out + res.err
    assert "fixtures/live.json is a symlink to '../src/data.json'" in res.out
    assert "nobody votes" in res.out and not log.exists()
    assert scorecard(project)["digest"]["ok"] is False
    assert run_cli(["gate", "--rev", "HEAD"], project.path).code == 2


def test_a_property_link_out_of_the_oracle_cannot_be_judged(project: Repo,
                                                           tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    project.write("src/check.py", PASS)
    project.symlink("properties/test_linked.py", "../src/check.py")
    make_project(project, {"counts": counting(log)})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "properties/test_linked.py is a symlink to '../src/check.py'" in res.err
    assert not log.exists()
    project.symlink("conftest.py", "src/check.py")  # above the properties: the judge too
    project.remove("properties/test_linked.py")
    project.commit_all("conftest link")
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 4 and "conftest.py is a symlink to 'src/check.py'" in res.err


def test_links_inside_the_oracle_vote_as_usual(project: Repo) -> None:
    project.write("fixtures/base.json", "{}\n")
    project.symlink("fixtures/alias.json", "base.json")
    project.write("properties/shared.py", PASS)
    project.symlink("properties/test_shared.py", "shared.py")
    make_project(project, {"ok": PASS})
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert set(scorecard(project)["properties"]) == {"ok", "shared"}


def test_run_gate_hands_back_the_scorecard_it_wrote(project: Repo) -> None:
    """pre-push and ci take the gate's verdict as a value, not by reading the file back."""
    make_project(project, {"ok": PASS, "bad": FAIL})
    result = run_gate(str(project.path), seed=5)
    assert result.code == 1
    assert json.loads(json.dumps(result.card)) == scorecard(project)
    assert {n: p["ballot"] for n, p in result.card["properties"].items()} == {
        "ok": "pass", "bad": "fail"}
    keys_follow_the_types(result.card)  # its TypedDicts declare exactly what it writes


def test_a_run_collects_its_own_property_file_and_no_other(project: Repo) -> None:
    """Each run collects only its property: pytest does not even make a node of the
    files beside it (a conftest hook that fails on a sibling does not reach this run),
    while the conftest of its directory still takes part."""
    project.write("properties/conftest.py",
                  "import pytest\n"
                  "def pytest_collect_file(file_path, parent):\n"
                  "    if file_path.name == 'test_other.py':\n"
                  "        raise RuntimeError('a sibling was collected')\n"
                  "@pytest.fixture\n"
                  "def answer():\n"
                  "    return 42\n")
    make_project(project, {"ok": "def test_ok(answer):\n    assert answer == 42\n",
                           "other": PASS})
    res = run_cli(["gate", "--property", "ok"], project.path)
    assert res.code == 0, res.out + res.err
    assert scorecard(project)["properties"]["ok"]["ballot"] == "pass"
