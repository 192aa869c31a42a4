"""What a blocked hook tells the user: the rule or ballot, its exit code, the next step.

pre-commit turns every non-zero exit into "Failed" and its own exit 1, so the
hook's text has to carry the verdict itself.  Every table keyed by ``ScopeRule`` is
checked complete when this module is imported: a rule added without its name, exit
code or next step stops every command at once, never one report in the field.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from ballot_guard.exit_codes import ABSTAIN, BLOCKED, CANNOT_JUDGE, DRIFT, worst
from ballot_guard.scope.verdict import ScopeRule

if TYPE_CHECKING:
    from ballot_guard.scope.verdict import Verdict

T = TypeVar("T")


def every_rule(what: str, table: Mapping[ScopeRule, T]) -> Mapping[ScopeRule, T]:
    """``table``, read-only, once it holds exactly one entry for every rule."""
    rules = {key for key in table if isinstance(key, ScopeRule)}
    missing = [str(rule) for rule in ScopeRule if rule not in rules]
    extra = [repr(key) for key in table if not isinstance(key, ScopeRule)]  # a bare 3
    if missing or extra:
        raise RuntimeError(f"{what}: no entry for rule {', '.join(missing) or '-'}; "
                           f"keys that are no rule: {', '.join(extra) or '-'}")
    return MappingProxyType(dict(table))


RULE_NAMES = every_rule("RULE_NAMES", {
    ScopeRule.MIXED: "oracle and behaviour in one change",
    ScopeRule.AGENT_ORACLE: "an agent change touches the oracle",
    ScopeRule.PIN: "fixtures changed without a matching re-pin",
    ScopeRule.FREEZE: "the freeze file lost a name or history",
    ScopeRule.TAMPER: "an agent change reaches into the judge at run time",
})

# exit code each rule stands for in the combined commands (hook, ci)
RULE_EXIT = every_rule("RULE_EXIT", {
    ScopeRule.MIXED: BLOCKED,
    ScopeRule.AGENT_ORACLE: BLOCKED,
    ScopeRule.PIN: DRIFT,
    ScopeRule.FREEZE: BLOCKED,
    ScopeRule.TAMPER: BLOCKED,
})

# the next step for a staged change (pre-commit, scope)
NEXT = every_rule("NEXT", {
    ScopeRule.MIXED:
        "split it: `ballot-guard split` commits the oracle part alone (review it), "
        "then commit the behaviour part; for a commit: `ballot-guard split --head`",
    ScopeRule.AGENT_ORACLE:
        "an agent may not touch the oracle: unstage the oracle paths "
        "(`git restore --staged PATH`) and land them in a human-reviewed commit",
    ScopeRule.PIN:
        "re-pin in a reviewed commit: `ballot-guard digest --pin`, then commit the "
        "fixtures together with the digest file (and nothing else)",
    ScopeRule.FREEZE:
        "restore the freeze file's names and history; a name leaves it only through "
        "`ballot-guard unfreeze NAME` after stable passing runs",
    ScopeRule.TAMPER:
        "take out the added lines named above (behaviour code may not assign to the test "
        "machinery, walk frames or the garbage collector, read /proc, load a Hypothesis "
        "profile or write start-up files); a change the code really needs is made by a "
        "human, in a reviewed commit",
})

# the same rules for commits already made (pre-push, ci): nothing is staged to unstage
NEXT_COMMIT = every_rule("NEXT_COMMIT", {
    **NEXT,
    ScopeRule.MIXED:
        "split the commit into an oracle commit and a behaviour commit (`ballot-guard split "
        "--head` when it is HEAD and unpushed; the report above says how otherwise)",
    ScopeRule.AGENT_ORACLE:
        "an agent's commit may not touch the oracle: a human takes its oracle part out in a "
        "new commit (`git restore --source=COMMIT~1 --staged --worktree -- PATHS`, commit) "
        "and lands any oracle change in a reviewed commit of its own",
})

NEXT_DRIFT = ("restore the fixtures to the pinned bytes (`ballot-guard digest --check` "
              "names what moved), or re-pin in a reviewed commit with "
              "`ballot-guard digest --pin`")
NEXT_RUNNER = ("make pytest importable by the project's interpreter, or set `python` "
               "in [tool.ballot_guard]")

# the next step after the gate at a pushed tip, by its exit code (every code but clean)
NEXT_GATE: Mapping[int, str] = MappingProxyType({
    BLOCKED: "a property failed on every run: fix the behaviour (the property is the "
             "judge), then push again",
    DRIFT: "the pin does not hold at the pushed tip: restore the fixtures or re-pin "
           "in a reviewed commit (`ballot-guard digest --pin`)",
    ABSTAIN: "a voter is frozen (it abstains): repair its property so that its verdict "
             "depends on its inputs only, and `ballot-guard unfreeze NAME` in a reviewed "
             "commit; see `ballot-guard freeze list`",
    CANNOT_JUDGE: "the gate could not judge: fix the runner or config it names, then "
                  "push again",
})


def rule_name(rule: ScopeRule) -> str:
    return RULE_NAMES[rule]


def verdict_exit(v: Verdict) -> int:
    """The exit code ``v``'s reasons stand for in the combined commands, in the contract's
    order: 2 when a rule-3 reason is among them (the digest comes first), else 1."""
    return worst(*(RULE_EXIT[r.rule] for r in v.reasons))


def block_lines(v: Verdict) -> list[str]:
    """One line per rule that blocked ``v``: the rule, its exit code, the next step.

    Rules 1 and 2 get their exact split commands from scope.report.print_verdict.
    """
    lines = []
    for rule in sorted({r.rule for r in v.reasons}):
        lines.append(f"  {v.change.label}: rule {rule} ({rule_name(rule)}) "
                     f"-> exit {RULE_EXIT[rule]}")
        if rule not in (ScopeRule.MIXED, ScopeRule.AGENT_ORACLE):
            lines.append(f"    next: {NEXT[rule]}")
    return lines


def rules_text(v: Verdict) -> str:
    return ", ".join(f"rule {n} ({rule_name(n)})" for n in sorted({r.rule for r in v.reasons}))
