"""``ballot-guard ci --base REV``: the pre-push judgement for a pull request.

Scope of every commit in BASE..HEAD, the pin and the gate at HEAD, in the
contract's order (combined.judge).  Under GitHub Actions
(``GITHUB_ACTIONS=true``) it also prints ``::error`` annotations for what
blocked (the only workflow commands it prints: every other line goes through
``ci_log``) and appends a Markdown summary to ``$GITHUB_STEP_SUMMARY``
(``step_summary``: a regular file only, never blocking, never the exit code).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import ballot_guard.annotations as gh
from ballot_guard import ci_log, exit_codes, git, step_summary
from ballot_guard.combined import Judgement, judge
from ballot_guard.errors import CannotJudge
from ballot_guard.output import warn
from ballot_guard.prepush import Target

WORDS = {0: "clean", 1: "blocked", 2: "fixture pin", 3: "abstained", 4: "could not judge"}


def run_ci(root: str, base: str, *, environ: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    github = env.get("GITHUB_ACTIONS") == "true"
    try:
        base_sha = git.rev_parse(root, base)
        if base_sha is None:
            raise CannotJudge(f"unknown base revision: {base} (in CI, check out with "
                              "fetch-depth: 0 so the base branch is there)")
        j = judge(root, [Target(f"{base}..HEAD", "HEAD", base_sha, False)], environ=env)
    except CannotJudge as exc:
        if github:
            j = Judgement(code=exit_codes.CANNOT_JUDGE, stage="error", message=str(exc))
            _github(j, env)
        raise
    if github:
        _github(j, env)
    return j.code


def _github(j: Judgement, env: Mapping[str, str]) -> None:
    """The annotations (the only lines printed as workflow commands) and the summary."""
    for line in annotation_lines(j):
        ci_log.command(line)
    path = env.get("GITHUB_STEP_SUMMARY")
    if path:
        problem = step_summary.append(path, summary(j))
        if problem is not None:
            warn(f"ballot-guard: warning: the step summary was not written ({problem}); "
                 f"the verdict stands (exit {j.code})")


def _blocked_paths(v: Any) -> list[str]:
    rules = {r.rule for r in v.reasons}
    return list(v.oracle) + (list(v.behavior) if 1 in rules else [])


def annotation_lines(j: Judgement) -> list[str]:
    """``::error`` lines for every blocked path, drifting pin and failing or frozen voter."""
    from ballot_guard.advice import RULE_EXIT

    lines = []
    if j.stage in ("config", "runner", "error"):
        lines.append(gh.error(j.message, title="ballot-guard: could not judge (exit 4)"))
    for tip, check in j.pins.items():
        if not check.ok:
            cfg = j.configs[tip]
            lines.append(gh.error(
                "\n".join([check.problem or "the pin does not hold", *check.details]),
                file=cfg.digest_file, title="ballot-guard: fixture pin (exit 2)"))
    for v in j.verdicts:
        if v.status != "blocked":
            continue
        rules = sorted({r.rule for r in v.reasons})
        code = max(RULE_EXIT.get(r, 1) for r in rules)
        message = "\n".join(f"{v.change.label}: rule {r.rule}: {r.message}" for r in v.reasons)
        title = f"ballot-guard: rule {', '.join(map(str, rules))} (exit {code})"
        for path in _blocked_paths(v):
            lines.append(gh.error(message, file=path, title=title))
    for tip, card in j.scorecards.items():
        props_dir = j.configs[tip].properties_dir
        for name, prop in ((card or {}).get("properties") or {}).items():
            ballot = prop.get("ballot")
            if ballot in ("fail", "freeze", "frozen", "error"):
                code = {"fail": 1, "freeze": 3, "frozen": 3, "error": 4}[ballot]
                lines.append(gh.error(
                    f"property {name}: ballot {ballot} (seed {card.get('seed')})",
                    file=f"{props_dir}/test_{name}.py",
                    title=f"ballot-guard: {ballot} (exit {code})"))
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """A Markdown code span that holds ``text`` whatever backticks it contains."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _paths(paths: Sequence[str]) -> str:
    return _cell(", ".join(_code(ci_log.neutral(p)) for p in paths)) if paths else "-"


def summary(j: Judgement) -> str:
    """The Markdown step summary: verdict, commits, pin, ballots, seed, abstainers."""
    out = [f"## ballot-guard: {WORDS.get(j.code, '?')} (exit {j.code})", ""]
    if j.message:
        out += [_cell(j.message), ""]
    if j.next_step:
        out += [f"**Next:** {_cell(j.next_step)}", ""]
    if j.verdicts:
        out += ["### Commits", "", "| commit | verdict | rules | oracle | behaviour |",
                "| --- | --- | --- | --- | --- |"]
        for v in j.verdicts:
            rules = ", ".join(f"{r.rule}" for r in v.reasons) or "-"
            out.append(f"| {_cell(v.change.label)} | {v.status} | {rules} | "
                       f"{_paths(v.oracle)} | {_paths(v.behavior)} |")
        out.append("")
    for tip, check in j.pins.items():
        state = "holds" if check.ok else "**drift**"
        out += [f"### Fixture pin at `{tip[:12]}`: {state}", "",
                f"- pinned: `{check.pinned}` ({check.format})", f"- actual: `{check.actual}`"]
        out += [f"- {_cell(d)}" for d in ([check.problem] if check.problem else []) + list(check.details)]
        out.append("")
    for tip, card in j.scorecards.items():
        if not card:
            continue
        props = card.get("properties") or {}
        out += [f"### Ballots at `{tip[:12]}` (seed {card.get('seed')})", "",
                "| property | ballot | repeats | runs |", "| --- | --- | --- | --- |"]
        for name, prop in props.items():
            runs = " ".join(str(r.get("outcome")) for r in prop.get("runs") or []) or "-"
            out.append(f"| {_cell(name)} | {prop.get('ballot')} | {prop.get('repeats')} | {runs} |")
        abstain = [n for n, p in props.items() if p.get("ballot") in ("freeze", "frozen")]
        out += ["", f"**Abstainers:** {', '.join(abstain) if abstain else 'none'}"
                + (" (frozen: a human must repair the oracle)" if abstain else ""), ""]
    return "\n".join(out) + "\n"
