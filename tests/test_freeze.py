"""The freeze file and its commands: list, assign, review, unfreeze; concurrent writers."""
from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard import freeze
from ballot_guard.errors import CannotJudge
from testing.gate_support import FAIL, PASS, _shared_pycache, flip, make_project, project, read_json
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]

OLD = "2020-01-01T00:00:00Z"


def frozen_file(name: str = "flaky", at: str = OLD, **record: object) -> dict[str, object]:
    rec = {"frozen_at": at, "ballots": ["pass", "fail"], "digest": "d", "commit": "c",
           "seed": 1, "owner": None, "note": None, **record}
    return {"frozen": [name], "records": {name: rec},
            "history": [{"event": "frozen", "name": name, "at": at}]}


def test_the_seed_format_is_read_and_a_corrupt_file_is_4(project: Repo) -> None:
    make_project(project, {"ok": PASS, "flaky": PASS}, freeze={"frozen": ["flaky"]})
    res = run_cli(["gate"], project.path)
    assert res.code == 3 and "flaky" in res.out
    res = run_cli(["freeze", "list", "--json"], project.path)
    assert res.code == 0 and [r["name"] for r in res.json()["frozen"]] == ["flaky"]
    project.write("freeze_set.json", "{not json")
    for args in (["gate"], ["freeze", "list"], ["freeze", "review"], ["unfreeze", "flaky"]):
        res = run_cli(args, project.path)
        assert res.code == 4 and "freeze_set.json" in res.err and "corrupt" in res.err, args
    project.write("freeze_set.json", '{"frozen": "flaky"}')
    assert run_cli(["gate"], project.path).code == 4


def test_assign_records_an_owner_and_appends_history(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze=frozen_file())
    res = run_cli(["freeze", "assign", "flaky", "--owner", "Ana", "--note", "fake clock"],
                  project.path)
    assert res.code == 0, res.err
    ff = read_json(project.path / "freeze_set.json")
    assert ff["records"]["flaky"]["owner"] == "Ana"
    assert ff["records"]["flaky"]["note"] == "fake clock"
    assert [e["event"] for e in ff["history"]] == ["frozen", "assigned"]
    assert ff["history"][1]["owner"] == "Ana"
    text = (project.path / "freeze_set.json").read_text()
    assert text.endswith("}\n") and '\n  "frozen": [' in text
    assert run_cli(["freeze", "assign", "other", "--owner", "A", "--note", "n"],
                   project.path).code == 4
    assert run_cli(["freeze", "assign", "flaky", "--owner", "A"], project.path).code == 4


def test_review_fails_unowned_and_stale_names(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze=frozen_file(at="2099-01-01T00:00:00Z"))
    res = run_cli(["freeze", "review"], project.path)
    assert res.code == 1 and "no owner" in res.out
    assert run_cli(["freeze", "assign", "flaky", "--owner", "Ana", "--note", "n"],
                   project.path).code == 0
    assert run_cli(["freeze", "review"], project.path).code == 0
    project.write("freeze_set.json", json.dumps(frozen_file(owner="Ana", note="n")))
    res = run_cli(["freeze", "review"], project.path)
    assert res.code == 1 and "more than 7 days" in res.out
    project.write("freeze_set.json", json.dumps({"frozen": []}))
    assert run_cli(["freeze", "review"], project.path).code == 0


def test_unfreeze_after_stable_passes_records_the_runs(project: Repo) -> None:
    make_project(project, {"flaky": PASS, "ok": PASS}, freeze=frozen_file())
    res = run_cli(["unfreeze", "flaky", "--repeats", "3"], project.path)
    assert res.code == 0, res.out + res.err
    ff = read_json(project.path / "freeze_set.json")
    assert ff["frozen"] == [] and "flaky" not in ff["records"]
    event = ff["history"][-1]
    assert event["event"] == "unfrozen" and event["name"] == "flaky"
    assert event["runs"] == ["pass", "pass", "pass"]
    assert event["digest"].startswith("sha256-v2:") and event["commit"] == project.head()
    assert isinstance(event["seed"], int)
    assert ff["history"][0] == frozen_file()["history"][0]  # kept, append-only
    assert run_cli(["gate"], project.path).code == 0


def test_unfreeze_runs_at_least_7_times_by_default(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze=frozen_file())
    res = run_cli(["unfreeze", "flaky"], project.path)
    assert res.code == 0, res.out + res.err
    assert "unfroze flaky after 7 stable passing runs; commit freeze_set.json alone in a " \
        "reviewed repair commit" in res.out.splitlines()
    event = read_json(project.path / "freeze_set.json")["history"][-1]
    assert event["event"] == "unfrozen" and event["runs"] == ["pass"] * 7


def test_unfreeze_runs_the_configured_repeats_when_they_are_more(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze=frozen_file(),
                 table="repeats_for = { flaky = 9 }\n")
    assert run_cli(["unfreeze", "flaky"], project.path).code == 0
    assert read_json(project.path / "freeze_set.json")["history"][-1]["runs"] == ["pass"] * 9


def test_unfreeze_repeats_never_below_2_nor_the_configured_repeats(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze=frozen_file(), table="repeats = 3\n")
    res = run_cli(["unfreeze", "flaky", "--repeats", "1"], project.path)
    assert (res.code, res.err) == (4, "ballot-guard: error: --repeats must be at least 2\n")
    res = run_cli(["unfreeze", "flaky", "--repeats", "2"], project.path)
    assert (res.code, res.err) == (4, ("ballot-guard: error: --repeats 2 is fewer than the 3 "
                                       "repeats configured for flaky: the freeze file's "
                                       "`unfrozen` record must carry at least that many "
                                       "passing runs (scope rule 4)\n"))
    assert read_json(project.path / "freeze_set.json") == frozen_file()
    res = run_cli(["unfreeze", "flaky", "--repeats", "3"], project.path)  # fewer than 7: asked
    assert res.code == 0, res.out + res.err
    assert read_json(project.path / "freeze_set.json")["history"][-1]["runs"] == ["pass"] * 3


def test_unfreeze_is_refused_on_failures_flips_and_unknown_names(project: Repo,
                                                                 tmp_path: Path) -> None:
    make_project(project, {"bad": FAIL, "flaky": flip(tmp_path / "c")},
                 freeze={"frozen": ["bad", "flaky"]})
    res = run_cli(["unfreeze", "bad"], project.path)
    assert res.code == 1
    assert "unfreeze refused: bad failed every run; it stays frozen" in res.out.splitlines()
    assert res.out.splitlines()[2].split()[:5] == ["bad", "fail", "7", "of", "7"]
    res = run_cli(["unfreeze", "flaky"], project.path)
    assert res.code == 3
    assert res.out.splitlines()[2].split()[:5] == ["flaky", "freeze", "3", "of", "7"]
    assert read_json(project.path / "freeze_set.json") == {"frozen": ["bad", "flaky"]}
    assert run_cli(["unfreeze", "nobody"], project.path).code == 4
    assert run_cli(["unfreeze", "bad", "--repeats", "1"], project.path).code == 4
    assert run_cli(["unfreeze", "bad", "--force"], project.path).code == 4


def test_unfreeze_checks_the_pin_first(project: Repo, tmp_path: Path) -> None:
    make_project(project, {"flaky": PASS}, freeze={"frozen": ["flaky"]})
    project.write("fixtures/cases.json", "moved\n")
    assert run_cli(["unfreeze", "flaky"], project.path).code == 2
    assert read_json(project.path / "freeze_set.json") == {"frozen": ["flaky"]}


def _add(args: tuple[str, str, str]) -> None:
    path, lock, name = args
    freeze.update(path, lock, lambda ff: freeze.add_frozen(ff, name, {}, "2026-01-01T00:00:00Z"))


def test_concurrent_writers_lose_no_name(tmp_path: Path) -> None:
    path, lock = str(tmp_path / "freeze_set.json"), str(tmp_path / "st" / "freeze.lock")
    names = [f"p{i}" for i in range(16)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_add, [(path, lock, n) for n in names])
    ff = freeze.load(path)
    assert sorted(ff.frozen) == sorted(names)
    assert sorted(e["name"] for e in ff.history) == sorted(names)


def test_two_gates_at_once_both_record_their_freezes(project: Repo, tmp_path: Path) -> None:
    slow_flip = lambda c: flip(c).replace("import pathlib", "import pathlib, time") + \
        "    time.sleep(0.3)\n"  # noqa: E731
    make_project(project, {"a": slow_flip(tmp_path / "a"), "b": slow_flip(tmp_path / "b")})
    procs = [subprocess.Popen([sys.executable, "-m", "ballot_guard", "gate", "--property", n],
                              cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for n in ("a", "b")]
    codes = [p.wait(timeout=120) for p in procs]
    for p in procs:
        p.stdout.close()  # type: ignore[union-attr]
        p.stderr.close()  # type: ignore[union-attr]
    assert codes == [3, 3]
    ff = read_json(project.path / "freeze_set.json")
    assert sorted(ff["frozen"]) == ["a", "b"] and set(ff["records"]) == {"a", "b"}


names = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=5)


@st.composite
def freeze_files(draw: st.DrawFn) -> freeze.FreezeFile:
    ff = freeze.FreezeFile()
    for n in draw(names):
        ff = freeze.add_frozen(ff, n, {"seed": draw(st.integers(0, 9))}, "2026-01-01T00:00:00Z")
    return ff


@settings(max_examples=60, deadline=None)
@given(freeze_files(), freeze_files())
def test_merge_never_drops_and_keeps_history_a_prefix(mine: freeze.FreezeFile,
                                                      theirs: freeze.FreezeFile) -> None:
    merged = freeze.merge(mine, theirs)
    assert merged.frozen[:len(mine.frozen)] == mine.frozen
    assert set(theirs.frozen) <= set(merged.frozen)
    assert merged.history[:len(mine.history)] == mine.history
    assert all(e in merged.history for e in theirs.history)
    assert freeze.merge(merged, theirs) == merged
    assert freeze.parse(freeze.dumps(merged).encode(), "x") == merged


@pytest.mark.parametrize("text", ["[]", '{"frozen": [1]}', '{"records": []}',
                                  '{"history": [{"event": 1}]}', "\xff"])
def test_parse_rejects_what_it_cannot_trust(text: str) -> None:
    with pytest.raises(CannotJudge, match="corrupt"):
        freeze.parse(text.encode("latin-1"), "freeze_set.json")
