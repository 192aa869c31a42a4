"""Every scope rule has its name, its exit code and its next step, in every report.

The tables are keyed by ``ScopeRule`` and checked complete at import; the tests below
also take every rule, one by one, through the real report paths a user meets: the
pre-commit stage on a staged change, ``ci --base`` and a real ``git push`` through the
installed pre-push hook.  A rule added to ``ScopeRule`` without a scenario here fails
``test_every_rule_has_a_scenario``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ballot_guard import exit_codes
from ballot_guard.change.from_git import Change
from ballot_guard.scope import next_steps
from ballot_guard.scope.next_steps import (
    NEXT,
    NEXT_COMMIT,
    NEXT_GATE,
    RULE_EXIT,
    RULE_NAMES,
    block_lines,
    every_rule,
    rules_text,
    verdict_exit,
)
from ballot_guard.scope.verdict import Reason, ScopeRule, Verdict
from testing.helpers import Repo, adopted_repo, pin, run_cli
from testing.hookutil import bare_remote, push
from testing.scope_support import BOT

AGENTS = '[tool.ballot_guard]\nagents = ["*[bot]*"]\n'
TAMPER = "import builtins as _b\n\nVALUE = 1\n_b.sorted = lambda xs: list(xs)\n"

# the exit code each rule stands for in the combined commands, as the contract says:
# rule 3 is the digest's 2, every other rule is blocked (1)
CONTRACT_EXIT = {ScopeRule.MIXED: 1, ScopeRule.AGENT_ORACLE: 1, ScopeRule.PIN: 2,
                 ScopeRule.FREEZE: 1, ScopeRule.TAMPER: 1}


def test_the_rules_are_the_contracts_five() -> None:
    assert [(r.name, int(r)) for r in ScopeRule] == [
        ("MIXED", 1), ("AGENT_ORACLE", 2), ("PIN", 3), ("FREEZE", 4), ("TAMPER", 5)]


@pytest.mark.parametrize("table", ["RULE_NAMES", "RULE_EXIT", "NEXT", "NEXT_COMMIT"])
def test_every_table_has_every_rule(table: str) -> None:
    found = getattr(next_steps, table)
    assert list(found) == list(ScopeRule)
    assert all(isinstance(key, ScopeRule) for key in found)
    assert all(found[rule] for rule in ScopeRule)  # no empty entry


def test_the_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        NEXT[ScopeRule.TAMPER] = "x"  # type: ignore[index]


def test_a_table_missing_a_rule_is_refused_at_import() -> None:
    table = {rule: "step" for rule in ScopeRule if rule != ScopeRule.TAMPER}
    with pytest.raises(RuntimeError, match=r"^NEXT: no entry for rule 5; keys that are no "
                                           r"rule: -$"):
        every_rule("NEXT", table)


def test_a_bare_int_key_is_refused() -> None:
    table: dict[object, str] = {rule: "step" for rule in ScopeRule if rule != ScopeRule.PIN}
    table[3] = "step"  # the number, not the rule: the mistake of a table keyed by ints
    with pytest.raises(RuntimeError, match=r"no entry for rule 3; keys that are no rule: 3$"):
        every_rule("NEXT", table)  # type: ignore[arg-type]


def test_exit_codes_are_the_contracts() -> None:
    assert dict(RULE_EXIT) == CONTRACT_EXIT


def test_every_gate_code_but_clean_has_a_next_step() -> None:
    assert sorted(NEXT_GATE) == [exit_codes.BLOCKED, exit_codes.DRIFT, exit_codes.ABSTAIN,
                                 exit_codes.CANNOT_JUDGE]


def _verdict(*rules: ScopeRule) -> Verdict:
    change = Change("commit", "commit 1a2b3c4d5e6f", "1a2b3c4d5e6f" * 3, None, (), (), False)
    return Verdict(change, True, ("properties/test_x.py",), ("src/x.py",), (),
                   tuple(Reason(r, f"why {int(r)}") for r in rules))


@pytest.mark.parametrize("rule", list(ScopeRule), ids=lambda r: f"rule-{int(r)}")
def test_block_lines_of_every_rule(rule: ScopeRule) -> None:
    v = _verdict(rule)
    lines = block_lines(v)
    assert lines[0] == (f"  commit 1a2b3c4d5e6f: rule {int(rule)} ({RULE_NAMES[rule]}) "
                        f"-> exit {CONTRACT_EXIT[rule]}")
    if rule in (ScopeRule.MIXED, ScopeRule.AGENT_ORACLE):  # the split commands say it
        assert lines == lines[:1]
    else:
        assert lines[1:] == [f"    next: {NEXT[rule]}"]
    assert rules_text(v) == f"rule {int(rule)} ({RULE_NAMES[rule]})"
    assert verdict_exit(v) == CONTRACT_EXIT[rule]
    assert json.loads(json.dumps(v.to_json()))["reasons"] == [
        {"rule": int(rule), "message": f"why {int(rule)}"}]


def test_a_rule_3_reason_makes_the_verdict_the_digests_2() -> None:
    assert verdict_exit(_verdict(ScopeRule.MIXED, ScopeRule.PIN, ScopeRule.TAMPER)) == 2
    assert rules_text(_verdict(ScopeRule.TAMPER, ScopeRule.MIXED)) == (
        "rule 1 (oracle and behaviour in one change), "
        "rule 5 (an agent change reaches into the judge at run time)")


# ---- every rule through the real report paths ---------------------------------------------

Edit = Callable[[Repo], None]


def _mixed(repo: Repo) -> None:
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 1\n")
    repo.write("src/app.py", "RETRIES = 4\n")


def _agent_oracle(repo: Repo) -> None:
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 1\n")


def _fixtures(repo: Repo) -> None:
    repo.write("fixtures/cases.json", "[1, 2, 3, 4]\n")


def _freeze(repo: Repo) -> None:
    repo.write("freeze_set.json", '{"frozen": []}\n')


def _tamper(repo: Repo) -> None:
    repo.write("src/app.py", TAMPER)


# rule -> (the edit, by an agent?); each edit breaks that rule alone
SCENARIOS: dict[ScopeRule, tuple[Edit, bool]] = {
    ScopeRule.MIXED: (_mixed, False),
    ScopeRule.AGENT_ORACLE: (_agent_oracle, True),
    ScopeRule.PIN: (_fixtures, False),
    ScopeRule.FREEZE: (_freeze, False),
    ScopeRule.TAMPER: (_tamper, True),
}
RULES = pytest.mark.parametrize("rule", list(ScopeRule), ids=lambda r: f"rule-{int(r)}")


def test_every_rule_has_a_scenario() -> None:
    assert list(SCENARIOS) == list(ScopeRule)


def _project(path: Path) -> Repo:
    return adopted_repo(path, {
        "pyproject.toml": AGENTS, "properties/test_retry.py": "def test_retry():\n    pass\n",
        "fixtures/cases.json": "[1, 2, 3]\n", "src/app.py": "RETRIES = 3\n",
        "freeze_set.json": '{"frozen": ["retry"]}\n'},
        pin_with="cli", author="Human <h@example.com>")


def _commit(repo: Repo, rule: ScopeRule) -> None:
    """The scenario's commit; for rule 3 a re-pin follows, so the pin holds at the tip
    and the commit before it is what blocks."""
    edit, agent = SCENARIOS[rule]
    edit(repo)
    repo.commit_all(f"break rule {int(rule)}", author=BOT if agent else "Human <h@example.com>")
    if rule == ScopeRule.PIN:
        pin(repo, "cli")
        repo.commit_all("re-pin", author="Human <h@example.com>")


def _pushed_report(out: str, rule: ScopeRule) -> None:
    """What ci and pre-push print for a commit blocked by ``rule``."""
    name, code = RULE_NAMES[rule], CONTRACT_EXIT[rule]
    assert "internal error" not in out and "Traceback" not in out
    assert f": rule {int(rule)} ({name}) -> exit {code}\n" in out
    if rule == ScopeRule.PIN:
        assert ("ballot-guard: FIXTURE PIN (exit 2): 1 commit(s) change the fixtures without "
                "a matching re-pin\n") in out
    else:
        assert (f"ballot-guard: BLOCKED (exit 1): 1 commit(s) blocked by rule {int(rule)} "
                f"({name}); the gate did not run\n") in out
    assert f"  next: {NEXT[rule] if rule == ScopeRule.PIN else NEXT_COMMIT[rule]}\n" in out


@RULES
def test_ci_reports_every_rule(rule: ScopeRule, tmp_path: Path) -> None:
    repo = _project(tmp_path / "repo")
    base = repo.head()
    _commit(repo, rule)
    res = run_cli(["ci", "--base", base], repo.path)
    assert res.code == CONTRACT_EXIT[rule], res.out + res.err
    _pushed_report(res.out + res.err, rule)


@RULES
def test_pre_push_reports_every_rule(rule: ScopeRule, tmp_path: Path) -> None:
    repo = _project(tmp_path / "repo")
    assert run_cli(["install"], repo.path).code == 0
    bare_remote(repo, tmp_path)
    # the adopted history goes up unjudged: its frozen voter would make the gate abstain
    assert push(repo, "-q", "--no-verify", "origin", "main").returncode == 0
    _commit(repo, rule)
    proc = push(repo, "origin", "main")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    _pushed_report(proc.stdout + proc.stderr, rule)


@RULES
def test_pre_commit_reports_every_rule(rule: ScopeRule, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _project(tmp_path / "repo")
    edit, agent = SCENARIOS[rule]
    if agent:
        monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    edit(repo)
    repo.stage()
    res = run_cli(["hook", "pre-commit"], repo.path)
    out = res.out + res.err
    assert res.code == CONTRACT_EXIT[rule], out
    assert "internal error" not in out and "Traceback" not in out
    name = RULE_NAMES[rule]
    if rule == ScopeRule.PIN:  # the staged fixtures' digest is checked before the rules
        assert "ballot-guard: FIXTURE PIN (exit 2): staged fixtures: " in out
        assert f"  next: {NEXT[rule]}\n" in out
        return
    assert f"  staged change: rule {int(rule)} ({name}) -> exit 1\n" in out
    assert (f"ballot-guard: BLOCKED (exit 1): rule {int(rule)} ({name}); the commit is "
            "refused\n") in out
    if rule not in (ScopeRule.MIXED, ScopeRule.AGENT_ORACLE):
        assert f"    next: {NEXT[rule]}\n" in out
