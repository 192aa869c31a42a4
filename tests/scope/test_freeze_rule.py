"""Scope rule 4: the freeze file may not lose a name without an unfrozen record, nor history."""
from __future__ import annotations

import json
from typing import Any

import pytest

from ballot_guard.scope.judge import judge_commit
from testing.gate_support import PASS, make_project, project
from testing.helpers import Repo

__all__ = ["project"]

FROZEN = {"event": "frozen", "name": "flaky", "at": "2026-01-01T00:00:00Z"}
ASSIGNED = {"event": "assigned", "name": "flaky", "at": "2026-01-02T00:00:00Z",
            "owner": "Ana", "note": "fake clock"}


def unfrozen(runs: list[str]) -> dict[str, Any]:
    return {"event": "unfrozen", "name": "flaky", "at": "2026-01-03T00:00:00Z", "runs": runs,
            "digest": "sha256-v2:00", "seed": 1, "commit": "abc"}


BASE = {"frozen": ["flaky"], "records": {"flaky": {"owner": None}},
        "history": [FROZEN, ASSIGNED]}


def reasons_after(repo: Repo, new: Any) -> list[tuple[int, str]]:
    if new is None:
        repo.remove("freeze_set.json")
    else:
        repo.write("freeze_set.json", new if isinstance(new, str) else json.dumps(new, indent=2))
    sha = repo.commit_all("edit the freeze file")
    verdict = judge_commit(str(repo.path), sha)
    return [(r.rule, r.message) for r in verdict.reasons]


@pytest.mark.parametrize("new", [
    {**BASE, "frozen": ["flaky", "other"], "history": [*BASE["history"], {
        "event": "frozen", "name": "other", "at": "2026-01-04T00:00:00Z"}]},
    {**BASE, "frozen": [], "history": [*BASE["history"], unfrozen(["pass", "pass"])]},
    {**BASE, "history": [*BASE["history"], ASSIGNED]},
], ids=["a-name-frozen", "unfrozen-with-record", "assigned-again"])
def test_allowed(project: Repo, new: Any) -> None:
    make_project(project, {"flaky": PASS}, freeze=BASE)
    assert [r for r in reasons_after(project, new) if r[0] == 4] == []


@pytest.mark.parametrize("new, words", [
    ({**BASE, "frozen": []}, "drops flaky"),
    (None, "drops flaky"),
    ({"frozen": []}, "drops flaky"),
    ({**BASE, "history": [FROZEN]}, "history"),
    ({**BASE, "history": [ASSIGNED, FROZEN]}, "history"),
    ({**BASE, "frozen": [], "history": [*BASE["history"], unfrozen(["pass", "fail"])]},
     "drops flaky"),
    ({**BASE, "frozen": [], "history": [*BASE["history"], unfrozen(["pass"])]}, "drops flaky"),
    ({**BASE, "frozen": [], "history": [unfrozen(["pass", "pass"]), *BASE["history"]]},
     "history"),
    ("{broken", "corrupt"),
    ('{"frozen": "flaky"}', "corrupt"),
], ids=["dropped", "file-deleted", "rewritten-seed-style", "history-shortened",
        "history-reordered", "unfrozen-after-a-failure", "too-few-runs",
        "unfrozen-inserted-before-frozen", "unparseable", "wrong-type"])
def test_blocked(project: Repo, new: Any, words: str) -> None:
    make_project(project, {"flaky": PASS}, freeze=BASE)
    found = [m for rule, m in reasons_after(project, new) if rule == 4]
    assert found and any(words in m for m in found), found


def test_a_seed_style_file_may_grow_and_the_rule_ignores_other_changes(project: Repo) -> None:
    make_project(project, {"flaky": PASS}, freeze={"frozen": ["flaky"]})
    assert reasons_after(project, {"frozen": ["flaky", "x"]}) == []
    project.write("README.md", "docs\n")
    sha = project.commit_all("docs")
    assert judge_commit(str(project.path), sha).reasons == ()
