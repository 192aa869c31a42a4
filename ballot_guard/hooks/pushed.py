"""The combined judgement of pushed commits: what pre-push and ``ci`` run.

Order (the contract's precedence, stopping at the first blocking verdict):
config of every judged tip (4) -> digest at every tip (2) -> scope of every
commit, where a rule-3 reason (fixtures not re-pinned) is the digest's 2 ->
runner (4) -> scope blocks (1; the gate does not run) -> the gate at every
tip.  The digest and gate parts use the config of the tip they judge.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

from ballot_guard import exit_codes, git
from ballot_guard.config import load_at
from ballot_guard.digest.pin import check_pin
from ballot_guard.errors import CannotJudge
from ballot_guard.hooks.push_refs import Target
from ballot_guard.output import say, warn
from ballot_guard.run.runner import resolve_runner
from ballot_guard.scope import baseline
from ballot_guard.scope.judge import Judging, judge_commit, judge_merge, judge_unjudged_tail
from ballot_guard.scope.next_steps import (
    NEXT,
    NEXT_COMMIT,
    NEXT_DRIFT,
    NEXT_GATE,
    NEXT_RUNNER,
    block_lines,
    rule_name,
)
from ballot_guard.scope.report import print_verdict
from ballot_guard.scope.verdict import ScopeRule
from ballot_guard.scratch import state_dir
from ballot_guard.vote import freeze_hint
from ballot_guard.vote.gate import SCORECARD, GateResult, run_gate
from ballot_guard.vote.shard_merge import merged

if TYPE_CHECKING:
    from ballot_guard.config import Config
    from ballot_guard.digest.pin import PinCheck
    from ballot_guard.scope.verdict import Verdict
    from ballot_guard.vote.scorecard import Scorecard
    from ballot_guard.vote.shard import ShardSpec


# where the combined judgement stopped ("error": ci could not start judging)
Stage = Literal["config", "digest", "runner", "scope", "gate", "clean", "error"]


@dataclass
class Judgement:
    """Everything the combined judgement found, for the report and CI summary."""

    code: int = exit_codes.CLEAN
    stage: Stage = "clean"
    message: str = ""
    next_step: str = ""
    tips: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    pins: dict[str, PinCheck] = field(default_factory=dict)
    configs: dict[str, Config] = field(default_factory=dict)
    scorecards: dict[str, Scorecard] = field(default_factory=dict)
    gate_codes: dict[str, int] = field(default_factory=dict)


class Pushed(NamedTuple):
    tip: str
    commits: tuple[str, ...]  # the non-merge commits the push adds, oldest first
    merges: tuple[str, ...]  # the merge commits it adds (judged on their own changes)
    new: int  # every commit the push adds, merges included (0: nothing new)


def commits_of(root: str, target: Target, remote: str | None) -> Pushed:
    """The tip and the commits a pushed ref adds (scope judges the non-merge ones)."""
    tip = git.rev_parse(root, target.tip)
    if tip is None:
        raise CannotJudge(f"cannot judge pushed ref {target.label}: "
                          f"{target.tip!r} is not a commit here")
    args = ["rev-list", "--reverse", "--topo-order", "--parents", tip, "--not"]
    old = git.rev_parse(root, target.exclude) if target.exclude is not None else None
    # a new branch, or a remote tip unknown here: the commits no remote-tracking ref has
    args.append(old if old is not None else remotes_option(root, remote))
    lines = [ln.split() for ln in git.out(args, cwd=root).decode().splitlines()]
    return Pushed(tip, tuple(ln[0] for ln in lines if len(ln) <= 2),
                  tuple(ln[0] for ln in lines if len(ln) > 2), len(lines))


def remotes_option(root: str, remote: str | None) -> str:
    """``--remotes=<name>`` for a remote with tracking refs, else every remote-tracking ref."""
    if remote and "/" not in remote and ":" not in remote and not remote.startswith("-"):
        refs = git.out(["for-each-ref", "--count=1", "--format=%(refname)",
                        f"refs/remotes/{remote}/"], cwd=root)
        if refs.strip():
            return f"--remotes={remote}"
    return "--remotes"


def judge(root: str, targets: Sequence[Target], *, remote: str | None = None,
          environ: Mapping[str, str] | None = None, scorecard: str | None = None,
          skip_empty: bool = False, repeats: int | None = None,
          actor: tuple[str, ...] = (), shard: ShardSpec | None = None,
          merge: Sequence[str] | None = None) -> Judgement:
    """Judge pushed targets in the contract's order; print the report; return what was found.

    ``skip_empty``: a pushed ref that adds no commit (a tag or branch on a commit a remote
    already has, a rewind) is not judged again, as pre-commit does; ``ci`` judges HEAD always.
    Each commit is judged by its base's config and by the config of the target it goes to
    (the remote's old tip, ``ci``'s base), when there is one; ``actor``: the identities of
    the account that proposed the change (``ci --actor``), beside each commit's own.
    ``shard``: the gate runs only that shard's voters (``gate --shard``); ``merge``: the
    gate does not run here, its verdict is the merge of these shard scorecards
    (``gate --merge``), which also checked the runner, each on its own machine.
    """

    env = dict(os.environ if environ is None else environ)
    j = Judgement()
    commits: list[str] = []
    merges: list[str] = []
    seen: set[str] = set()
    # (remote's old tip, pushed tip, the commits between) of every updated ref
    moves: list[tuple[str, str, set[str]]] = []
    judging: dict[str, Judging] = {}  # commit -> the target it is judged for
    for target in targets:
        tip, added, merged, new = commits_of(root, target, remote)
        if skip_empty and not new:
            say(f"ballot-guard: {target.label}: no new commit (a remote already has "
                f"{tip[:12]}); not judged again")
            continue
        if tip not in j.tips:
            j.tips.append(tip)
        commits += [c for c in added if c not in seen]
        merges += [c for c in merged if c not in seen]
        old = git.rev_parse(root, target.exclude) if target.exclude is not None else None
        how = Judging(baseline.at(root, old) if old is not None else None, actor)
        judging.update((c, how) for c in (*added, *merged) if c not in seen)
        seen.update(added, merged)
        if old is not None:
            moves.append((old, tip, {*added, *merged}))
        say(f"ballot-guard: judging {target.label}: {len(added)} commit(s) up to {tip[:12]}")
    if not j.tips:
        j.message = "nothing new to judge"
        say(f"ballot-guard: clean (exit 0): {j.message}")
        return j
    # 1. config of every tip (4)
    for tip in j.tips:
        try:
            j.configs[tip] = load_at(root, tip)
        except CannotJudge as exc:
            return _stop(j, "config", exit_codes.CANNOT_JUDGE, f"config at {tip[:12]}: {exc}",
                         "fix [tool.ballot_guard] in pyproject.toml in a reviewed commit")
    # 2. digest at every tip (2)
    for tip in j.tips:
        check = check_pin(root, j.configs[tip], rev=tip)
        j.pins[tip] = check
        for line in check.warnings:
            warn(f"ballot-guard: warning: {line}")
        if not check.ok:
            return _stop(j, "digest", exit_codes.DRIFT,
                         f"{check.problem or 'fixture pin does not hold'} (at {tip[:12]})",
                         NEXT_DRIFT, check.details)
    # 3. scope of every commit; a rule-3 reason is the digest's 2
    for sha in commits:
        j.verdicts.append(judge_commit(root, sha, judging=judging[sha]))
    for sha in merges:  # a merge on its own paths (ballot_guard.change.merges)
        verdict = judge_merge(root, sha, judging=judging[sha])
        if verdict is not None:
            j.verdicts.append(verdict)
    for old, tip, shas in moves:  # history the pin never covered, pushed over the adopted one
        mine = [v for v in j.verdicts if v.change.commit in shas]
        verdict = judge_unjudged_tail(root, old, tip, mine,
                                      judging=Judging(baseline.at(root, old), actor))
        if verdict is not None:
            j.verdicts.append(verdict)
    repin = [v for v in j.verdicts if any(r.rule == ScopeRule.PIN for r in v.reasons)]
    if repin:
        _print_blocks(repin)
        return _stop(j, "digest", exit_codes.DRIFT,
                     f"{len(repin)} commit(s) change the fixtures without a matching re-pin",
                     NEXT[ScopeRule.PIN])
    # 4. runner of every tip (4)

    for tip in j.tips if merge is None else ():
        try:
            resolve_runner(root, j.configs[tip], environ=env, rev=tip)
        except CannotJudge as exc:
            return _stop(j, "runner", exit_codes.CANNOT_JUDGE, f"runner for {tip[:12]}: {exc}",
                         NEXT_RUNNER)
    # 5. scope blocks (1): the gate does not run
    blocked = [v for v in j.verdicts if v.status == "blocked"]
    for v in j.verdicts:
        if v.status != "blocked":
            say(f"  {v.status:<8} {v.change.label}")
    if blocked:
        _print_blocks(blocked)
        rules = sorted({r.rule for v in blocked for r in v.reasons})
        return _stop(j, "scope", exit_codes.BLOCKED,
                     f"{len(blocked)} commit(s) blocked by " +
                     ", ".join(f"rule {n} ({rule_name(n)})" for n in rules) +
                     "; the gate did not run",
                     " / ".join(NEXT_COMMIT[n] for n in rules))
    # 6. the gate on a clean worktree of every tip

    for tip in j.tips:
        path = scorecard or os.path.join(state_dir(root), SCORECARD)  # the gate's own default
        if merge is None:
            result = run_gate(root, rev=tip, scorecard=path, environ=env, repeats=repeats,
                              pin=j.pins[tip], shard=shard)  # pin checked at step 2
            j.gate_codes[tip] = result.code
            j.scorecards[tip] = result.card
        else:
            result = _merge(root, tip, merge, path)
            j.gate_codes[tip] = result.code
            j.scorecards[tip] = result.card
    code = exit_codes.worst(*j.gate_codes.values()) if j.gate_codes else exit_codes.CLEAN
    if code != exit_codes.CLEAN:
        return _stop(j, "gate", code, "; ".join(_gate_text(tip, c, j.scorecards.get(tip))
                                               for tip, c in j.gate_codes.items() if c),
                     freeze_hint.next_step(j.scorecards.values()) if code == exit_codes.ABSTAIN
                     else NEXT_GATE[code])
    j.stage = "clean"
    j.message = f"{len(commits)} commit(s) judged, the pin holds, every voter passed"
    say(f"ballot-guard: clean (exit 0): {j.message}")
    return j


def _merge(root: str, tip: str, paths: Sequence[str], scorecard: str) -> GateResult:
    """The gate's verdict at ``tip`` from the shards' scorecards (``gate --merge``)."""
    if not paths:
        raise CannotJudge("no shard scorecard to merge: no shard job left one (did the "
                          "shard jobs run, and upload their scorecards?)")
    if git.head(root) != tip:
        raise CannotJudge(f"the shards are merged in the checkout of {tip[:12]}, "
                          "which is not checked out here")
    return merged(root, paths, scorecard=scorecard)


def _print_blocks(verdicts: Sequence[Verdict]) -> None:
    for v in verdicts:
        print_verdict(v)
        for line in block_lines(v):
            say(line)


def _stop(j: Judgement, stage: Stage, code: int, what: str, next_step: str,
          details: Sequence[str] = ()) -> Judgement:
    """Record the blocking verdict and print it: headline (with its exit code), details, next."""
    j.code, j.stage, j.message, j.next_step = code, stage, what, next_step
    word = {1: "BLOCKED", 2: "FIXTURE PIN", 3: "ABSTAINED", 4: "CANNOT JUDGE"}.get(code, "?")
    say(f"ballot-guard: {word} (exit {code}): {what}")
    for line in details:
        say(f"  {line}")
    say(f"  next: {next_step}")
    return j


def _gate_text(tip: str, code: int, card: Scorecard | None) -> str:
    """``the gate at TIP exited 1: fail: bounded_retry`` (names by ballot, from the scorecard)."""
    by_ballot: dict[str, list[str]] = {}
    props = card.get("properties") if isinstance(card, dict) else None
    for name, prop in (props or {}).items():
        ballot = prop.get("ballot") if isinstance(prop, dict) else None
        if ballot not in (None, "pass"):
            by_ballot.setdefault(str(ballot), []).append(name)
    names = "; ".join(f"{b}: {', '.join(n)}" for b, n in sorted(by_ballot.items()))
    return f"the gate at {tip[:12]} exited {code}" + (f" ({names})" if names else "")
