"""The human report of a scope verdict, and the exact commands that split a change."""
from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from ballot_guard import git
from ballot_guard.errors import CannotJudge
from ballot_guard.output import paint, say
from ballot_guard.scope.verdict import ScopeRule

if TYPE_CHECKING:
    from ballot_guard.scope.verdict import Verdict
    from ballot_guard.vocabulary import Status


def _q(paths: tuple[str, ...]) -> str:
    return " ".join(shlex.quote(p) for p in paths)


def head_split_refusal(sha: str) -> str | None:
    """Why ``split --head`` would refuse the commit ``sha`` (None: it would split it)."""

    try:
        root = git.toplevel(".")
        head = git.head(root)
        full = git.rev_parse(root, sha)
        if full is None or head != full:
            return "it is not HEAD"
        parents = git.out(["rev-list", "--parents", "-n", "1", full], cwd=root).split()
        if len(parents) == 1:
            return "it is the root commit"
        if len(parents) > 2:
            return "it is a merge commit"
        remote = git.out(["for-each-ref", "--contains", full, "--format=%(refname)",
                          "refs/remotes/"], cwd=root).decode().split()
        if remote:
            return f"it is pushed already ({remote[0][len('refs/remotes/'):]})"
    except CannotJudge:
        return "its repository cannot be read here"
    return None


def split_advice(v: Verdict) -> list[str]:
    """The exact commands that split a blocked change (or drop its oracle part)."""
    rules = {r.rule for r in v.reasons}
    other = tuple(sorted(set(v.behavior) - set(v.oracle)))
    lines: list[str] = []
    if v.change.source == "staged":
        if ScopeRule.AGENT_ORACLE in rules:
            lines += [("An agent may not change the oracle. Unstage the oracle part and leave "
                       "it to a human:"), f"  git restore --staged -- {_q(v.oracle)}"]
        elif ScopeRule.MIXED in rules:
            lines += ["Split it: commit the oracle part alone, then the behaviour part:",
                      "  ballot-guard split -m 'Update the oracle'"]
            if other:
                lines += ["or by hand:",
                          f"  git restore --staged -- {_q(other)}",
                          "  git commit -m 'Update the oracle'",
                          f"  git add -- {_q(other)}"]
            both = sorted(set(v.oracle) & set(v.behavior))
            if both:
                lines.append(f"  ({_q(tuple(both))}: judge tables and other tables changed; "
                             "only `ballot-guard split` separates them)")
    elif v.change.source == "commit":
        sha = (v.change.commit or "")[:12]
        if ScopeRule.AGENT_ORACLE in rules:
            lines += [(f"An agent may not change the oracle: {sha} must lose its oracle part, "
                       "by a human, in a new commit:"),
                      f"  git restore --source={sha}~1 --staged --worktree -- {_q(v.oracle)}",
                      f"  git commit -m 'Take the oracle part out of {sha}'",
                      ("and the oracle change, if it is wanted, lands in a reviewed commit of "
                       "its own.")]
        elif ScopeRule.MIXED in rules:
            lines += ["Split it into an oracle commit and a behaviour commit:"]
            why_not = head_split_refusal(sha)
            if why_not is None:
                lines += ["  ballot-guard split --head"]
            else:
                lines += [f"  (`ballot-guard split --head` would refuse: {why_not})",
                          f"  git revert --no-edit {sha}   # then re-land it as two commits:",
                          f"  git restore --source={sha} --staged --worktree -- {_q(v.oracle)}",
                          "  git commit -m 'Update the oracle'",
                          f"  git restore --source={sha} --staged --worktree -- {_q(other)}"
                          if other else "",
                          "  git commit -m 'The behaviour part'" if other else ""]
                lines = [line for line in lines if line]
    else:
        name = v.change.label[len("patch "):] if v.change.label.startswith("patch ") else ""
        target = shlex.quote(name) if name and name != "from stdin" else "PATCH"
        inc = " ".join(f"--include={shlex.quote(p)}" for p in v.oracle)
        exc = " ".join(f"--exclude={shlex.quote(p)}" for p in v.oracle)
        if ScopeRule.AGENT_ORACLE in rules:
            lines += ["An agent may not change the oracle. Apply only the behaviour part:",
                      f"  git apply --index {exc} {target}"]
        elif ScopeRule.MIXED in rules:
            lines += ["Apply it in two commits, the oracle part alone first:",
                      f"  git apply --index {inc} {target} && git commit -m 'Update the oracle'",
                      f"  git apply --index {exc} {target}"]
            both = sorted(set(v.oracle) & set(v.behavior))
            if both:
                lines.append(f"  ({_q(tuple(both))}: judge tables and other tables changed; "
                             f"apply it with `git apply --index {target}`, then "
                             "`ballot-guard split`)")
    return lines


def report(v: Verdict, *, advice: bool = True) -> list[str]:
    """The human report's lines: verdict, rules, oracle and behaviour paths, how to split
    (unless ``advice`` is False)."""
    colour: dict[Status, str] = {"ok": "green", "blocked": "red", "unjudged": "yellow"}
    word = paint(v.status, colour[v.status])
    lines = [f"ballot-guard scope: {v.change.label}: {word}"]
    if v.status == "unjudged":
        lines.append("  not judged: the base does not hold the digest file yet (ballot-guard "
                     "is not adopted there); pin the fixtures with `ballot-guard digest --pin` "
                     "and commit the pin")
    lines += [f"  rule {r.rule}: {r.message}" for r in v.reasons]
    for title, paths in (("oracle paths", v.oracle), ("behaviour paths", v.behavior),
                         ("neutral paths", v.neutral)):
        if paths:
            lines.append(f"  {title}:")
            lines += [f"    {p}" for p in paths]
    if v.status == "blocked" and advice:
        lines += [f"  {line}" for line in split_advice(v)]
    return lines


def print_verdict(v: Verdict, *, advice: bool = True) -> None:
    """Print the human report: the verdict, the rule, the oracle and behaviour paths, and
    the exact commands that split the change (one write, however many paths)."""
    say("\n".join(report(v, advice=advice)))
