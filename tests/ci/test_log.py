"""The CI log guard: no line printed under GitHub Actions is a workflow command of the change."""
from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.ci.log import Guarded, command, guard, neutral
from testing.runner_syntax import commands, runner_lines

ATTACKS = ["::stop-commands::x", "  ::add-mask::BLOCKED", "##[error]x", "\t::warning::w",
           "\u3000::error::wide space", "a\n::add-mask::b", "a\r::add-mask::b", "x ##[group]y",
           "\u2028::notice::n", "\x85::debug::d", "::", "::::"]


@pytest.mark.parametrize("text", ATTACKS)
def test_known_injections_are_defused(text: str) -> None:
    out = neutral(text)
    assert commands(out) == [] and len(runner_lines(out)) == 1, out


@given(st.text())
def test_no_text_becomes_a_command_or_a_second_line(text: str) -> None:
    out = neutral(text)
    assert commands(out) == []
    assert len(runner_lines(out)) == 1


@given(st.recursive(st.text() | st.integers() | st.none(),
                    lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids)))
def test_json_through_the_guard_is_the_same_data(data: object) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False)
    guarded = "\n".join(neutral(line) for line in text.split("\n"))
    assert json.loads(guarded) == data
    assert commands(guarded) == []


def test_the_guard_writes_whole_neutral_lines_and_commands_as_they_are() -> None:
    raw = io.StringIO()
    with contextlib.redirect_stdout(raw), guard({"GITHUB_ACTIONS": "true"}):
        assert isinstance(sys.stdout, Guarded)
        print("ok ::not at the start")
        sys.stdout.write("  ::add-")
        sys.stdout.write("mask::BLOCKED\npartial ##[x")
        command("::error file=a%3Ab::message")
        print("after")
        with pytest.raises(ValueError, match="not a one-line workflow command"):
            command("::error::two\nlines")
    assert sys.stdout is not raw
    assert raw.getvalue().split("\n") == [
        "ok ::not at the start", "  \\u003a:add-mask::BLOCKED",
        "partial #\\u0023[x",  # a partial line is ended before a command
        "::error file=a%3Ab::message", "after", ""]
    assert [c.name for c in commands(raw.getvalue())] == ["error"]


def test_no_guard_outside_github() -> None:
    with guard({"GITHUB_ACTIONS": "false"}):
        assert not isinstance(sys.stdout, Guarded)
