"""The pre-push stage: every pushed ref git (or pre-commit) shows, judged by
``pushed.judge`` (scope of every pushed commit, the pin and the gate at each tip).
A ref that cannot be judged is 4, never a pass.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from ballot_guard import exit_codes
from ballot_guard.errors import CannotJudge
from ballot_guard.hooks import framework_hint
from ballot_guard.hooks.push_refs import from_pre_commit, parse_push_lines, targets
from ballot_guard.hooks.pushed import judge
from ballot_guard.output import say


def pre_push(root: str, remote: str | None, url: str | None, stdin: str | None, *,
             environ: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    remote = remote or env.get("PRE_COMMIT_REMOTE_NAME") or None
    refs = from_pre_commit(env)
    if refs is not None:
        say("ballot-guard: note: pre-commit hands a pre-push hook only the first pushed ref; "
            "push one branch at a time, or use `ballot-guard install`, to judge every ref")
    elif env.get("PRE_COMMIT") == "1" and not stdin:
        raise CannotJudge("pre-commit passed no pushed ref to judge (PRE_COMMIT_TO_REF and "
                          "PRE_COMMIT_LOCAL_BRANCH are unset); refusing to pass the push "
                          "unjudged: run `ballot-guard ci --base <remote branch>`")
    elif stdin is None:
        raise CannotJudge("no pre-push lines on stdin (git passes them to the pre-push hook)")
    else:
        refs = parse_push_lines(stdin)
    todo = targets(refs)
    if not todo:
        say("ballot-guard: nothing to judge (only deletions, or nothing pushed)")
        return exit_codes.CLEAN
    code = judge(root, todo, remote=remote, environ=env, skip_empty=True).code
    if code != exit_codes.CLEAN:
        for line in framework_hint.lines(env):
            say(line)
    return code
