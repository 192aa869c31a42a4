"""``ballot-guard ci --base REV`` and its GitHub Actions output."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.ci.annotations import command, error, escape_data, escape_property
from testing.helpers import Repo, init_repo, run_bg, run_cli
from testing.hookutil import BILLING, make_project, write_flaky
from testing.runner_syntax import commands, unescape_property


def _unescape(text: str) -> str:
    for raw, esc in ((",", "%2C"), (":", "%3A"), ("\n", "%0A"), ("\r", "%0D"), ("%", "%25")):
        text = text.replace(esc, raw)
    return text


@given(st.text())
def test_escaping_round_trips_and_leaves_no_separator(text: str) -> None:
    data, prop = escape_data(text), escape_property(text)
    assert "\n" not in data and "\r" not in data
    assert not set(",:\n\r") & set(prop)
    assert _unescape(prop) == text
    assert _unescape(data) == text


def test_command_shapes() -> None:
    assert command("error", "boom") == "::error::boom"
    assert error("50% off\nnow", file="a,b:c.py", title="t: x") == \
        "::error file=a%2Cb%3Ac.py,title=t%3A x::50%25 off%0Anow"


@pytest.fixture
def pr(tmp_path: Path) -> Repo:
    """An adopted project with a feature branch checked out (base: main)."""
    repo = make_project(tmp_path / "project")
    repo.git("checkout", "-q", "-b", "feature")
    return repo


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


def test_a_blocked_pull_request_annotates_its_paths(pr: Repo, github: Path) -> None:
    pr.write("odd,na:me.py", "x = 1\n")
    pr.write("properties/test_bounded_retry.py",
             (pr.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pr.commit_all("mixed")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    lines = [ln for ln in res.out.splitlines() if ln.startswith("::error")]
    assert "::error file=odd%2Cna%3Ame.py,title=ballot-guard%3A rule 1 (exit 1)::" in \
        "\n".join(lines)
    assert any(ln.startswith("::error file=properties/test_bounded_retry.py,") for ln in lines)
    assert all("\n" not in ln for ln in lines)
    text = github.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert "## ballot-guard: blocked (exit 1)" in text
    assert "| commit | verdict | rules | oracle | behaviour |" in text
    assert "| blocked | 1 |" in text
    assert "Ballots" not in text  # the gate did not run


def test_a_clean_pull_request_summarises_ballots_and_seed(pr: Repo, github: Path) -> None:
    pr.write("billing.py", BILLING + "\n# tidy\n")
    pr.commit_all("tidy")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 0, res.out + res.err
    assert "::error" not in res.out
    text = github.read_text()
    assert "## ballot-guard: clean (exit 0)" in text
    assert "| `bounded_retry` | pass | 2 | pass pass |" in text
    assert "(seed " in text and "**Abstainers:** none" in text
    assert ": holds" in text


def test_a_stable_failure_is_annotated_on_its_property(pr: Repo, github: Path) -> None:
    pr.write("billing.py", BILLING.replace("calls >= retries", "calls > retries"))
    pr.commit_all("retry four times")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    assert "::error file=properties/test_bounded_retry.py,title=ballot-guard%3A fail (exit 1)::" \
        in res.out
    assert "| `bounded_retry` | fail |" in github.read_text()


def test_drift_at_head_is_2_and_annotated_on_the_pin(pr: Repo, github: Path) -> None:
    pr.write("fixtures/cards.json", "{}\n")
    pr.commit_all("move a fixture")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 2, res.out + res.err
    assert "::error file=fixture_digest.txt,title=ballot-guard%3A fixture pin (exit 2)::" in res.out
    assert "**drift**" in github.read_text()


def test_no_annotations_outside_github(pr: Repo) -> None:
    pr.write("billing.py", BILLING + "\n# x\n")
    pr.write("properties/test_bounded_retry.py",
             (pr.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pr.commit_all("mixed")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1 and "::error" not in res.out and "rule 1" in res.out


def test_an_unknown_base_is_4_and_says_why(pr: Repo, github: Path) -> None:
    res = run_cli(["ci", "--base", "origin/nowhere"], pr.path)
    assert res.code == 4 and "fetch-depth" in res.err
    assert "could not judge (exit 4)" in github.read_text()
    assert "::error title=ballot-guard%3A could not judge (exit 4)::" in res.out


def test_base_is_required(pr: Repo) -> None:
    res = run_cli(["ci"], pr.path)
    assert res.code == 4 and "--base" in res.err


def test_a_frozen_voter_is_an_abstainer_in_the_summary(pr: Repo, github: Path,
                                                       tmp_path: Path) -> None:
    write_flaky(pr, tmp_path / "counter")
    pr.commit_all("a property with a clock in it")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 3, res.out + res.err
    assert "::error file=properties/test_flaky.py,title=ballot-guard%3A freeze (exit 3)::" in res.out
    text = github.read_text()
    assert "## ballot-guard: abstained (exit 3)" in text
    assert "| `flaky` | freeze | 2 | pass fail |" in text
    assert "**Abstainers:** `flaky` (frozen: a human must repair the oracle)" in text


def test_an_evil_merge_that_mixes_oracle_and_behaviour_is_blocked(pr: Repo) -> None:
    """Each side of the merge is clean; the merge commit itself edits both sides."""
    pr.write("billing.py", (pr.path / "billing.py").read_text() + "# side branch\n")
    pr.commit_all("behaviour on the feature branch")
    pr.git("checkout", "-q", "-b", "other", "main")
    pr.write("notes.txt", "other side\n")
    pr.commit_all("behaviour on another branch")
    pr.git("checkout", "-q", "feature")
    pr.git("merge", "-q", "--no-ff", "--no-commit", "other")
    prop = pr.path / "properties/test_bounded_retry.py"
    prop.write_text(prop.read_text() + "\n# loosened in the merge\n")
    pr.write("notes.txt", "changed in the merge too\n")
    pr.stage()
    pr.git("commit", "-q", "--no-verify", "-m", "merge other")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    assert "merge" in res.out and "properties/test_bounded_retry.py" in res.out
    scope = run_cli(["scope", "--range", "main..HEAD", "--json"], pr.path)
    assert scope.code == 1
    assert scope.json()["verdict"] == "blocked"


def test_a_history_that_adopts_again_over_the_adopted_one_is_blocked_in_ci(
        tmp_path: Path) -> None:
    """A branch forked before adoption pins on its own beside an agent's property edit
    (each of its commits unjudged).  Its base is no ancestor of it, so ci refuses it (4);
    GitHub's merge ref of it into the adopted base is blocked: the merge brings the
    unjudged commits into the adopted line."""
    repo = init_repo(tmp_path / "repo")
    repo.write("properties/test_retry.py", "def test_retry():\n    assert True\n")
    repo.write("pyproject.toml", '[tool.ballot_guard]\nagents = ["*bot*"]\n')
    repo.commit_all("import")
    repo.git("branch", "side")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    adopted = repo.commit_all("adopt")
    repo.git("checkout", "-q", "side")
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 1\n")
    assert run_cli(["digest", "--pin"], repo.path).code == 0
    repo.commit_all("adopt, my way", author="Helper bot <bot@example.com>")
    res = run_cli(["ci", "--base", adopted], repo.path)
    assert res.code == 4 and res.out == "", res.out + res.err
    assert res.err == (f"ballot-guard: error: --base {adopted} is not an ancestor of HEAD: "
                       "test the merge ref (refs/pull/N/merge) or rebase onto the base\n")
    repo.git("checkout", "-q", "--detach", adopted)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge side into main", "side")
    repo.git("update-ref", "refs/pull/7/merge", "HEAD")
    repo.git("checkout", "-q", "refs/pull/7/merge")
    res = run_cli(["ci", "--base", adopted], repo.path)
    assert res.code == 1, res.out + res.err
    assert "rule 2" in res.out and "unjudged commit it brings in" in res.out


# --- nothing from the change reaches the log raw -----------------------------------------

NASTY = ["::stop-commands::x", "  ::add-mask::BLOCKED", "##[error]x",
         "nl\n::add-mask::ballot\r##[warning]y.txt"]


def _only_our_annotations(text: str) -> list[dict[str, str]]:
    """Every workflow command the runner would read in ``text``: each must be ours."""
    found = commands(text)
    assert [c.name for c in found] == ["error"] * len(found), found
    return [c.props for c in found]


def test_path_names_cannot_inject_workflow_commands(pr: Repo, github: Path) -> None:
    for name in NASTY:
        pr.write(name, "x = 1\n")
    pr.write("properties/test_bounded_retry.py",
             (pr.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pr.commit_all("mixed, with names that are workflow commands")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    props = _only_our_annotations(res.out + "\n" + res.err)
    annotated = {unescape_property(p["file"]) for p in props if "file" in p}
    assert annotated >= {*NASTY, "properties/test_bounded_retry.py"}
    assert "\\u003a:stop-commands::x" in res.out  # the path is still shown, defused
    assert "#\\u0023[error]x" in res.out
    assert "\\u003a:add-mask::ballot\\r#\\u0023[warning]y.txt" in res.out.splitlines()
    assert "| blocked | 1 |" in github.read_text()


def test_the_change_s_output_cannot_inject_workflow_commands(pr: Repo, github: Path) -> None:
    talk = ("    print('::stop-commands::tok')\n    print('  ::add-mask::fail')\n"
            "    print('x ##[error]spoofed')\n")
    pr.write("billing.py", BILLING.replace("calls >= retries", "calls > retries")
             .replace("    calls = 0\n", talk + "    calls = 0\n"))
    pr.commit_all("retry four times, and talk to the runner")
    res = run_cli(["ci", "--base", "main"], pr.path)
    assert res.code == 1, res.out + res.err
    assert "\\u003a:stop-commands::tok" in res.out  # the failing run's output, defused
    props = _only_our_annotations(res.out + "\n" + res.err)
    assert {"file": "properties/test_bounded_retry.py",
            "title": "ballot-guard%3A fail (exit 1)"} in props


def _ci_env(summary: Path) -> dict[str, str]:
    return {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}


@pytest.mark.parametrize("reader", [False, True], ids=["no-reader", "reader"])
def test_a_fifo_summary_never_hangs_and_never_changes_the_exit_code(
        pr: Repo, tmp_path: Path, reader: bool) -> None:
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    pr.write("billing.py", BILLING + "\n# tidy\n")
    pr.commit_all("tidy")
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if reader else None
    try:
        res = run_bg(["ci", "--base", "main"], pr.path, env=_ci_env(fifo), timeout=240)
    finally:
        if held is not None:
            os.close(held)
    assert res.code == 0, res.out + res.err
    assert "ballot-guard: clean (exit 0)" in res.out
    assert "warning: the step summary was not written" in res.err
    assert str(fifo) in res.err and "the verdict stands (exit 0)" in res.err
    assert ("is a FIFO" if reader else "No such device or address") in res.err


@pytest.mark.parametrize("blocked", [False, True], ids=["clean", "blocked"])
def test_a_directory_summary_is_a_warning_and_the_verdict_stands(pr: Repo, tmp_path: Path,
                                                                  blocked: bool) -> None:
    where = tmp_path / "summary-dir"
    where.mkdir()
    pr.write("billing.py", BILLING + "\n# tidy\n")
    if blocked:
        pr.write("properties/test_bounded_retry.py",
                 (pr.path / "properties/test_bounded_retry.py").read_text() + "\n")
    pr.commit_all("change")
    res = run_bg(["ci", "--base", "main"], pr.path, env=_ci_env(where), timeout=240)
    assert res.code == (1 if blocked else 0), res.out + res.err
    assert f"(exit {res.code})" in res.out
    assert f"the step summary was not written (cannot open {where}: Is a directory)" in res.err
    assert list(where.iterdir()) == []
