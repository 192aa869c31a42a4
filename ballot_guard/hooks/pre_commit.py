"""The pre-commit stage: translation of what git hands the hook into calls.

``pre_commit``: scope of the staged change (all four rules, the freeze-file
rule included) and, when the fixtures or the pin are staged, the digest of the
staged fixtures.  Order: config (4) -> digest / rule 3 (2) -> scope (1).
The commit-time path imports no GitPython.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ballot_guard import exit_codes, git
from ballot_guard.config import PYPROJECT, load_at, parse_pyproject
from ballot_guard.hooks import framework_hint
from ballot_guard.hooks.amend import amending
from ballot_guard.output import say, warn
from ballot_guard.scope.judge import judge_staged
from ballot_guard.scope.next_steps import NEXT, block_lines, rules_text, verdict_exit
from ballot_guard.scope.report import print_verdict
from ballot_guard.scope.verdict import ScopeRule

if TYPE_CHECKING:
    from ballot_guard.scope.verdict import Verdict


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def pre_commit(root: str, *, environ: Mapping[str, str] | None = None) -> int:

    env = dict(os.environ if environ is None else environ)
    against = _amended_base(root) if amending() else "HEAD"
    verdict = judge_staged(root, environ=env, against=against)
    # The fixtures and the pin are oracle paths (under HEAD's config, and a staged config
    # that moves them is itself oracle), so a change with no oracle path needs no digest.
    if verdict.oracle:
        code = _staged_pin(root, verdict)
        if code != exit_codes.CLEAN:
            return code
    if verdict.status == "blocked" and git.rev_parse(root, "MERGE_HEAD") is not None:
        # Committing a merge: the staged change is everything the other side brought, whose
        # commits are judged one by one (pre-push, ci); scope judges non-merge commits only.
        say("ballot-guard: committing a merge: its scope is not judged here (the merged "
            "commits are judged one by one at push time and in CI); the pin was checked")
        return exit_codes.CLEAN
    if verdict.status == "blocked":
        print_verdict(verdict, advice=against == "HEAD")
        if against != "HEAD":
            say("ballot-guard: this is an amend, so the paths above include HEAD's own: "
                "do not fold one side into a commit of the other; commit the new part on "
                "its own (`git commit`, without --amend)")
        else:
            for line in block_lines(verdict):
                say(line)
        code = verdict_exit(verdict)
        word = "FIXTURE PIN" if code == exit_codes.DRIFT else "BLOCKED"
        say(f"ballot-guard: {word} (exit {code}): {rules_text(verdict)}; the commit is refused")
        for line in framework_hint.lines(env):
            say(line)
        return code
    if verdict.status == "unjudged":
        say("ballot-guard: staged change not judged: HEAD holds no digest file yet "
            "(pin the fixtures with `ballot-guard digest --pin` to adopt)")
    elif not verdict.change.files:
        say("ballot-guard: nothing is staged, so this stage judged nothing (it judges the "
            "staged change); the pushed commits are judged by the pre-push stage "
            "(ballot-gate) and, in CI, by `ballot-guard ci`")
    return exit_codes.CLEAN


def _amended_base(root: str) -> str | None:
    """What an amend of HEAD will sit on: HEAD's parent (None for a root commit).  A merge
    being amended keeps HEAD: its merged commits are judged at push time."""
    info = git.out(["rev-list", "--parents", "-n", "1", "HEAD"], cwd=root).split()
    if len(info) > 2:
        return "HEAD"
    if len(info) == 2:
        say("ballot-guard: amending HEAD: the staged change is judged against HEAD's parent, "
            "as the amended commit will be")
        return info[1].decode()
    return None


def _staged_pin(root: str, verdict: Verdict) -> int:
    """The digest of the staged fixtures when the fixtures or the pin are staged: 0 or 2."""
    from ballot_guard.digest.pin import check_snapshot  # noqa: PLC0415 - lazy: judge content: the pin check (11.7 ms) only when the fixtures or the pin are staged

    index = git.Snapshot(root)
    base_config = load_at(root, verdict.change.base)  # what the scope rules judge by
    config = parse_pyproject(index.read(PYPROJECT), f"{PYPROJECT} (staged)")  # what is pinned
    pinned = {c.digest_file for c in (base_config, config)}
    fixtures = {c.fixtures_dir for c in (base_config, config)}
    if not any(p in pinned or any(_under(p, f) for f in fixtures)
               for p in verdict.change.paths()):
        return exit_codes.CLEAN
    if not verdict.judged and index.entry(config.digest_file) is None:
        return exit_codes.CLEAN  # before adoption, with no pin staged: nothing to check
    if verdict.judged and not verdict.reasons and index.entry(config.digest_file) is None \
            and any(f.status == "D" and f.path == base_config.digest_file
                    for f in verdict.change.files):
        warn(f"ballot-guard: warning: this change deletes {base_config.digest_file}: the gate "
             "and `ci` will refuse to vote (exit 2) until a pin is committed again")
        return exit_codes.CLEAN
    check = check_snapshot(index, config)
    for line in check.warnings:
        warn(f"ballot-guard: warning: {line}")
    if check.ok:
        return exit_codes.CLEAN
    say(f"ballot-guard: FIXTURE PIN (exit 2): staged fixtures: "
        f"{check.problem or 'the pin does not match'}")
    for line in check.details:
        say(f"  {line}")
    say(f"  next: {NEXT[ScopeRule.PIN]}")
    for line in framework_hint.lines(os.environ):
        say(line)
    return exit_codes.DRIFT


def hook_root() -> str:
    """The work tree git runs the hook in."""
    return git.toplevel(".")

