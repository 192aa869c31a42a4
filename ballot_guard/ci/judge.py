"""``ballot-guard ci --base REV [--actor WHO]``: the pre-push judgement for a pull request.

Scope of every commit in BASE..HEAD (each by its own base's config and by
BASE's), the pin and the gate at HEAD, in the contract's order
(``ballot_guard.hooks.pushed``).  BASE must be an ancestor of HEAD, in a full clone.  Under
GitHub Actions (``GITHUB_ACTIONS=true``) it also prints ``::error``
annotations for what blocked (the only workflow commands it prints: every
other line goes through ``ballot_guard.ci.log``) and appends a Markdown summary to
``$GITHUB_STEP_SUMMARY`` (``step_summary``: a regular file only, never
blocking, never the exit code); the actor defaults to the pull request's author.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

import ballot_guard.ci.annotations as gh
from ballot_guard import exit_codes, git
from ballot_guard.atomic import write_text
from ballot_guard.change.identity import login_identities
from ballot_guard.ci import freeze_patch, limits, log, step_summary
from ballot_guard.ci import markdown as md
from ballot_guard.errors import CannotJudge
from ballot_guard.hooks.push_refs import Target
from ballot_guard.hooks.pushed import Judgement, judge
from ballot_guard.output import say, warn
from ballot_guard.scope.next_steps import verdict_exit
from ballot_guard.scope.verdict import ScopeRule, Verdict
from ballot_guard.scratch import state_dir
from ballot_guard.vote.scorecard import junit
from ballot_guard.vote.shard import ShardSpec

WORDS = {0: "clean", 1: "blocked", 2: "fixture pin", 3: "abstained", 4: "could not judge"}


def default_actor(environ: Mapping[str, str]) -> str | None:
    """Under GitHub Actions, the account that proposed the change: the pull request's
    author (``pull_request.user.login`` in ``$GITHUB_EVENT_PATH``), else ``GITHUB_ACTOR``;
    None elsewhere.  An event file that cannot be read is CannotJudge."""
    if environ.get("GITHUB_ACTIONS") != "true":
        return None
    path = environ.get("GITHUB_EVENT_PATH")
    if path:
        try:
            with open(path, "rb") as f:
                event = json.loads(f.read())
        except OSError as exc:
            raise CannotJudge(f"cannot read the GitHub event file {path}: "
                              f"{exc.strerror or exc}") from exc
        except ValueError as exc:
            raise CannotJudge(f"the GitHub event file {path} is not JSON: {exc}") from exc
        if not isinstance(event, dict):
            raise CannotJudge(f"the GitHub event file {path} holds no JSON object")
        pr = event.get("pull_request")
        if pr is not None:
            user = pr.get("user") if isinstance(pr, dict) else None
            login = user.get("login") if isinstance(user, dict) else None
            if not isinstance(login, str) or not login.strip():
                raise CannotJudge(f"the GitHub event file {path} has a pull_request "
                                  "without user.login: pass --actor")
            return login.strip()
    return environ.get("GITHUB_ACTOR", "").strip() or None


def check_base(root: str, base: str) -> str:
    """``base``'s sha, when it can be judged against: a full clone, an ancestor of HEAD."""
    shallow = git.run(["rev-parse", "--is-shallow-repository"], cwd=root, check=False)
    if shallow.stdout.strip() == b"true":
        raise CannotJudge("shallow clone: fetch-depth 0 (actions/checkout), or "
                          "`git fetch --unshallow`, so that every commit since the base is here")
    base_sha = git.rev_parse(root, base)
    if base_sha is None:
        raise CannotJudge(f"unknown base revision: {base} (in CI, check out with "
                          "fetch-depth: 0 so the base branch is there)")
    res = git.run(["merge-base", "--is-ancestor", base_sha, "HEAD"], cwd=root, check=False)
    if res.code == 1:
        raise CannotJudge(f"--base {base} is not an ancestor of HEAD: test the merge ref "
                          "(refs/pull/N/merge) or rebase onto the base")
    if res.code != 0:
        raise CannotJudge(git.describe_failure(["merge-base", "--is-ancestor", base_sha,
                                                "HEAD"], res))
    return base_sha


def run_ci(root: str, base: str, *, environ: Mapping[str, str] | None = None,
           repeats: int | None = None, actor: str | None = None,
           shard: ShardSpec | None = None, merge: Sequence[str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    github = env.get("GITHUB_ACTIONS") == "true"
    try:
        who = actor if actor is not None else default_actor(env)
        base_sha = check_base(root, base)
        if who:
            say(f"ballot-guard: actor {who} (matched against agents beside each commit's "
                "identities)")
        j = judge(root, [Target(f"{base}..HEAD", "HEAD", base_sha, False)], environ=env,
                  repeats=repeats, actor=login_identities(who) if who else (), shard=shard,
                  merge=merge)
    except CannotJudge as exc:
        if github:
            j = Judgement(code=exit_codes.CANNOT_JUDGE, stage="error", message=str(exc))
            _github(j, env, "")
        raise
    _junit(root, j)
    patch = _freeze_patch(root, j)
    if github:
        _github(j, env, patch)
    return j.code


def _froze(j: Judgement) -> list[str]:
    """The voters this run froze (ballot ``freeze``), at every tip."""
    return [name for card in j.scorecards.values()
            for name, prop in ((card or {}).get("properties") or {}).items()
            if prop.get("ballot") == "freeze"]


def _freeze_patch(root: str, j: Judgement) -> str:
    """Print, and keep in .ballot_guard/freeze.patch, the freeze records this run made."""
    frozen = _froze(j)
    configs = list(j.configs.values())
    patch = freeze_patch.diff(root, configs[-1].freeze_file) if frozen and configs else ""
    path = freeze_patch.write(root, patch)
    if patch:
        freeze_file = configs[-1].freeze_file
        say(f"ballot-guard: froze {', '.join(frozen)}: this checkout is thrown away after CI, "
            f"so here is the freeze record as a patch (also in {os.path.relpath(path, root)}):")
        for line in patch.splitlines():
            say(f"    {line}")
        say(f"ballot-guard: apply it in your clone and commit it alone, in a reviewed commit: "
            f"git apply --index freeze.patch && git commit -m 'Freeze {', '.join(frozen)}' -- "
            f"{freeze_file}")
    return patch


def _junit(root: str, j: Judgement) -> None:
    """.ballot_guard/junit.xml of the (last) gate, for CI's test report."""
    cards = [card for card in j.scorecards.values() if card]
    if cards:
        write_text(os.path.join(state_dir(root), "junit.xml"), junit(cards[-1]))


def _github(j: Judgement, env: Mapping[str, str], patch: str) -> None:
    """The annotations (the only lines printed as workflow commands: GitHub's 10 of each
    type, the rest listed in the summary) and the summary, cut below GitHub's 1 MiB."""
    capped = limits.cap(annotation_lines(j))
    for line in capped.shown:
        log.command(line)
    path = env.get("GITHUB_STEP_SUMMARY")
    if path:
        text = summary(j) + limits.overflow_section(capped.over) + patch_section(patch)
        problem = step_summary.append(path, limits.truncate(text))
        if problem is not None:
            warn(f"ballot-guard: warning: the step summary was not written ({problem}); "
                 f"the verdict stands (exit {j.code})")


def patch_section(patch: str) -> str:
    """The freeze patch in the step summary, fenced so that no line of it can close the fence."""
    if not patch:
        return ""
    fence = "`" * max(3, 1 + max((len(run) for run in patch.split() if set(run) == {"`"}),
                                 default=0))
    return ("### Freeze patch\n\nThis checkout is thrown away: apply this patch in your clone "
            "(`git apply --index freeze.patch`) and commit it alone, in a reviewed commit, or "
            "the next run will vote on the flaky property again.\n\n"
            f"{fence}diff\n{patch}{'' if patch.endswith(chr(10)) else chr(10)}{fence}\n\n")


def _blocked_paths(v: Verdict) -> list[str]:
    rules = {r.rule for r in v.reasons}
    return list(v.oracle) + (list(v.behavior) if ScopeRule.MIXED in rules else [])


def annotation_lines(j: Judgement) -> list[str]:
    """``::error`` lines for every blocked path, drifting pin and failing or frozen voter."""
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
        code = verdict_exit(v)
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


def _paths(paths: Sequence[str]) -> str:
    return ", ".join(md.code(p) for p in paths) if paths else "-"


def summary(j: Judgement) -> str:
    """The Markdown step summary: verdict, commits, pin, ballots, seed, abstainers."""
    out = [f"## ballot-guard: {WORDS.get(j.code, '?')} (exit {j.code})", ""]
    if j.message:
        out += [md.text(j.message), ""]
    if j.next_step:
        out += [f"**Next:** {md.text(j.next_step)}", ""]
    if j.verdicts:
        out += ["### Commits", "", "| commit | verdict | rules | oracle | behaviour |",
                "| --- | --- | --- | --- | --- |"]
        for v in j.verdicts:
            rules = ", ".join(f"{r.rule}" for r in v.reasons) or "-"
            out.append(f"| {md.text(v.change.label)} | {v.status} | {rules} | "
                       f"{_paths(v.oracle)} | {_paths(v.behavior)} |")
        out.append("")
    for tip, check in j.pins.items():
        state = "holds" if check.ok else "**drift**"
        out += [f"### Fixture pin at `{tip[:12]}`: {state}", "",
                f"- pinned: {md.code(check.pinned, table=False)} ({md.text(check.format)})",
                f"- actual: {md.code(check.actual, table=False)}"]
        problems = [check.problem] if check.problem else []
        out += [f"- {md.text(d)}" for d in [*problems, *check.details]]
        out.append("")
    for tip, card in j.scorecards.items():
        if not card:
            continue
        props = card.get("properties") or {}
        out += [f"### Ballots at `{tip[:12]}` (seed {md.text(card.get('seed'))})", "",
                "| property | ballot | repeats | runs |", "| --- | --- | --- | --- |"]
        for name, prop in props.items():
            runs = " ".join(md.text(r.get("outcome")) for r in prop.get("runs") or []) or "-"
            out.append(f"| {md.code(name)} | {md.text(prop.get('ballot'))} | "
                       f"{md.text(prop.get('repeats'))} | {runs} |")
        abstain = [n for n, p in props.items() if p.get("ballot") in ("freeze", "frozen")]
        out += ["", "**Abstainers:** "
                + (", ".join(md.code(n, table=False) for n in abstain) if abstain else "none")
                + (" (frozen: a human must repair the oracle)" if abstain else ""), ""]
    return "\n".join(out) + "\n"
