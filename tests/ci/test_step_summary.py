"""The step summary read as GitHub reads it (GFM, here through markdown-it-py's CommonMark
parser with GFM tables): names, paths and messages from the change never break a table
row, forge one, or become a link, HTML, code or emphasis of their own."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ballot_guard.ci import judge as ci_judge
from ballot_guard.ci import limits
from ballot_guard.ci import markdown as md
from ballot_guard.ci.annotations import error
from ballot_guard.ci.log import neutral
from ballot_guard.hooks.pushed import Judgement
from testing.helpers import run_cli
from testing.hookutil import make_project

GFM = MarkdownIt("commonmark").enable("table")
HOSTILE = ["a|b", "`x`", "``", "<img src=x onerror=alert(1)>", "[x](https://evil.example)",
           "line\nbreak", "row |\n| forged | pass | 2 | pass pass |", "*em* _u_ ~~s~~",
           "# heading", "\\|", "a\\", "![i](y)", "&lt;", "x\r\n| --- |", "\u2028sep", "@team",
           "1. item", "> quote", "|", " ", ""]


def tables(markdown: str) -> list[list[list[Token]]]:
    """Each table's body rows, each row its cells' inline tokens."""
    out: list[list[list[Token]]] = []
    rows: list[list[Token]] | None = None
    in_body = False
    for tok in GFM.parse(markdown):
        if tok.type == "table_open":
            rows = []
            out.append(rows)
        elif tok.type == "tbody_open":
            in_body = True
        elif tok.type == "tbody_close":
            in_body = False
        elif tok.type == "tr_open" and in_body and rows is not None:
            rows.append([])
        elif tok.type == "inline" and in_body and rows:
            rows[-1].append(tok)
    return out


def literal(cell: Token) -> str:
    """What a cell shows, when it is only text and code spans (else the markup found)."""
    kinds = {c.type for c in cell.children or []}
    assert kinds <= {"text", "code_inline"}, (cell.content, kinds)
    return "".join(c.content for c in cell.children or [])


def card(names: list[str]) -> dict[str, Any]:
    run = {"outcome": "pass", "exit": 0, "seconds": 0.1, "passed": 1, "failed": 0}
    return {"seed": 7, "properties": {n: {"ballot": "pass", "repeats": 2, "runs": [run, run]}
                                      for n in names}}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30) | st.sampled_from(HOSTILE), min_size=1, max_size=8,
                unique=True))
def test_property_names_stay_in_their_cell(names: list[str]) -> None:
    j = Judgement(code=0, scorecards={"a" * 40: card(names)})
    [rows] = tables(ci_judge.summary(j))
    assert len(rows) == len(names)  # no row broken, none forged
    for row, name in zip(rows, names, strict=True):
        assert len(row) == 4
        if name.strip(" "):
            assert literal(row[0]) == neutral(name)
        assert literal(row[1]) == "pass" and literal(row[3]) == "pass pass"


@pytest.mark.parametrize("value", HOSTILE)
def test_running_text_renders_as_its_own_characters(value: str) -> None:
    html = GFM.renderInline(md.text(value))
    assert "<" not in html.replace("&lt;", "") and "\n" not in html
    tokens = GFM.parseInline(md.text(value))[0].children or []
    assert {t.type for t in tokens} <= {"text"}
    assert "".join(t.content for t in tokens) == neutral(value)


def test_a_message_cannot_start_a_block_or_a_table_row() -> None:
    j = Judgement(code=4, stage="error", message="| x | y |\n| --- | --- |\n# forged",
                  next_step="> [click](https://evil.example)")
    text = ci_judge.summary(j)
    assert tables(text) == []
    types = {t.type for t in GFM.parse(text)}
    assert "blockquote_open" not in types and types.isdisjoint({"table_open", "link_open"})
    assert [t.content for t in GFM.parse(text) if t.type == "inline"][:1] == [
        "ballot-guard: could not judge (exit 4)"]


def test_overflowing_annotations_keep_their_paths_literal() -> None:
    lines = [error("rule 1: [x](https://evil.example) <b>", file=f"src/a`{i}`|b.py")
             for i in range(12)]
    section = limits.overflow_section(limits.cap(lines).over)
    items = [t for t in GFM.parse(section) if t.type == "inline"][2:]
    assert len(items) == 2
    for item in items:
        kinds = {c.type for c in item.children or []}
        assert kinds <= {"text", "code_inline"}, kinds
        assert next(c.content for c in item.children or [] if c.type == "code_inline") \
            .startswith("src/a`1")


def test_a_real_ci_run_with_hostile_names_keeps_its_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through real git and a real gate: a property and a behaviour path whose names hold
    table, code, link and HTML syntax (and a newline)."""
    repo = make_project(tmp_path / "project")
    repo.git("checkout", "-q", "-b", "feature")
    weird = "x|y`z`[a](b)<i>"
    repo.write(f"properties/test_{weird}.py", "def test_ok():\n    pass\n")
    repo.commit_all("a property with a hostile name")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    res = run_cli(["ci", "--base", "main"], repo.path)
    text = summary.read_text()
    commits, ballots = tables(text)
    assert len(commits) == 1 and len(ballots) == 2, text
    by_name = {literal(row[0]): literal(row[1]) for row in ballots}
    assert set(by_name) == {"bounded_retry", weird}, text
    assert res.code == 4 and by_name == {"bounded_retry": "pass", weird: "error"}  # pytest
    # cannot import a module of that name: an error ballot, in its own row
    assert literal(commits[0][3]) == f"properties/test_{weird}.py"

    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "mixed")
    newline = "evil\n| forged | pass | 2 | pass pass |"
    (repo.path / newline).write_text("x = 1\n")
    repo.write("properties/test_bounded_retry.py",
               (repo.path / "properties/test_bounded_retry.py").read_text() + "\n")
    repo.commit_all("mixed, with a newline in a path")
    summary.write_text("")
    assert run_cli(["ci", "--base", "main"], repo.path).code == 1
    [commits] = tables(summary.read_text())
    assert len(commits) == 1
    assert literal(commits[0][4]) == neutral(newline)
    assert os.path.exists(repo.path / newline)
