"""What a blocked hook tells the user: the rule or ballot, its exit code, the next step.

pre-commit turns every non-zero exit into "Failed" and its own exit 1, so the
hook's text has to carry the verdict itself.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ballot_guard.scope.verdict import Verdict

RULES = {
    1: "oracle and behaviour in one change",
    2: "an agent change touches the oracle",
    3: "fixtures changed without a matching re-pin",
    4: "the freeze file lost a name or history",
    5: "an agent change reaches into the judge at run time",
}

# exit code each rule stands for in the combined commands (hook, ci)
RULE_EXIT = {1: 1, 2: 1, 3: 2, 4: 1, 5: 1}

NEXT: dict[int | str, str] = {
    1: "split it: `ballot-guard split` commits the oracle part alone (review it), "
       "then commit the behaviour part; for a commit: `ballot-guard split --head`",
    2: "an agent may not touch the oracle: unstage the oracle paths "
       "(`git restore --staged PATH`) and land them in a human-reviewed commit",
    3: "re-pin in a reviewed commit: `ballot-guard digest --pin`, then commit the "
       "fixtures together with the digest file (and nothing else)",
    4: "restore the freeze file's names and history; a name leaves it only through "
       "`ballot-guard unfreeze NAME` after stable passing runs",
    5: "take out the added lines named above (behaviour code may not assign to the test "
       "machinery, walk frames or the garbage collector, read /proc, load a Hypothesis "
       "profile or write start-up files); a change the code really needs is made by a "
       "human, in a reviewed commit",
    "drift": "restore the fixtures to the pinned bytes (`ballot-guard digest --check` "
             "names what moved), or re-pin in a reviewed commit with "
             "`ballot-guard digest --pin`",
    "runner": "make pytest importable by the project's interpreter, or set `python` "
              "in [tool.ballot_guard]",
    "gate1": "a property failed on every run: fix the behaviour (the property is the "
             "judge), then push again",
    "gate2": "the pin does not hold at the pushed tip: restore the fixtures or re-pin "
             "in a reviewed commit (`ballot-guard digest --pin`)",
    "gate3": "a voter is frozen (it abstains): repair its property so that its verdict "
             "depends on its inputs only, and `ballot-guard unfreeze NAME` in a reviewed "
             "commit; see `ballot-guard freeze list`",
    "gate4": "the gate could not judge: fix the runner or config it names, then push again",
}


# the same rules for commits already made (pre-push, ci): nothing is staged to unstage
NEXT_COMMIT: dict[int, str] = {
    1: "split the commit into an oracle commit and a behaviour commit (`ballot-guard split "
       "--head` when it is HEAD and unpushed; the report above says how otherwise)",
    2: "an agent's commit may not touch the oracle: a human takes its oracle part out in a "
       "new commit (`git restore --source=COMMIT~1 --staged --worktree -- PATHS`, commit) "
       "and lands any oracle change in a reviewed commit of its own",
}


def rule_name(rule: int) -> str:
    return RULES.get(rule, f"rule {rule}")


def block_lines(v: Verdict) -> list[str]:
    """One line per rule that blocked ``v``: the rule, its exit code, the next step.

    Rules 1 and 2 get their exact split commands from scope.report.print_verdict.
    """
    lines = []
    for rule in sorted({r.rule for r in v.reasons}):
        code = RULE_EXIT.get(rule, 1)
        lines.append(f"  {v.change.label}: rule {rule} ({rule_name(rule)}) -> exit {code}")
        if rule not in (1, 2):
            lines.append(f"    next: {NEXT.get(rule, 'see `ballot-guard scope`')}")
    return lines


def rules_text(v: Verdict) -> str:
    return ", ".join(f"rule {n} ({rule_name(n)})" for n in sorted({r.rule for r in v.reasons}))
