"""Play the demo: build the example repository, run every step, check every exit code."""
from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ballot_guard.demo import build, scenarios, shell
from ballot_guard.demo.scenarios import Check, Edit, Git, Hooked, Hooks, Say, Step
from ballot_guard.errors import CannotJudge
from ballot_guard.output import paint, say

NEEDS = ("pytest", "hypothesis")
REMOTE = ".git/demo-remote.git"
_REPORTED = re.compile(r"\(exit (\d)\)")


def framework_config(python: str) -> str:
    """``.pre-commit-config.yaml`` with both hooks as local hooks of this interpreter:
    the framework itself, with nothing to download."""
    hooks = []
    for hook_id, stage, verbose in (("ballot-guard", "pre-commit", False),
                                    ("ballot-gate", "pre-push", True)):
        hooks.append(
            f"  - id: {hook_id}\n    name: {hook_id}\n"
            f"    entry: {json.dumps(shlex.join([python, '-m', 'ballot_guard', 'hook', stage]))}\n"
            f"    language: system\n    stages: [{stage}]\n    pass_filenames: false\n"
            f"    always_run: true\n    require_serial: true\n"
            + ("    verbose: true\n" if verbose else ""))
    return "repos:\n- repo: local\n  hooks:\n" + "".join(hooks)


def install_hooks(repo: Path) -> bool:
    """A bare remote ``origin`` inside .git, and both hooks: the framework's where pre-commit
    is importable, else the plain ones.  True when it went as it should."""
    shell.git(repo, ["init", "-q", "--bare", REMOTE])
    shell.git(repo, ["remote", "add", "origin", REMOTE])
    if not shell.missing_modules("pre_commit"):
        (repo / ".pre-commit-config.yaml").write_text(framework_config(sys.executable),
                                                      encoding="utf-8")
        say(paint("# write .pre-commit-config.yaml: ballot-guard and ballot-gate, as local "
                  "hooks of this interpreter", "dim"))
        for args in (["add", "--", ".pre-commit-config.yaml"],
                     ["commit", "-q", "--no-verify", "-m", ("Guard commits and pushes with "
                      "ballot-guard (pre-commit framework)")]):
            say(paint("$ " + shlex.join(["git", *args]), "dim"))
            shell.git(repo, args)
        # the build points core.hooksPath at .git/hooks (no global hooks path applies);
        # pre-commit installs there only with no core.hooksPath set at all
        shell.git(repo, ["config", "--local", "--unset", "core.hooksPath"])
        command = ["pre_commit", "install", "--hook-type", "pre-commit", "--hook-type", "pre-push"]
        say(paint("$ " + shlex.join(["pre-commit", *command[1:]]), "bold"))
        ran = shell.python_module(repo, command)
        if ran.code == 0:
            say(_indent(ran.output))
            return True
        say(_indent(ran.output))
        shell.git(repo, ["config", "--local", "core.hooksPath", ".git/hooks"])
        say(paint("$ ballot-guard install   # the framework refused: the plain hooks", "bold"))
        ran = shell.ballot_guard(repo, ["install"])
    else:
        say(paint("$ ballot-guard install   # pre-commit is not installed: the plain hooks",
                  "bold"))
        ran = shell.ballot_guard(repo, ["install"])
    if ran.output.strip():
        say(_indent(ran.output))
    return ran.code == 0


def _hooked(repo: Path, action: Hooked) -> bool:
    """Run a real commit or push with its hooks; True when its hook reported ``expect``."""
    who = f"   # as {shell.AGENT[0]} <{shell.AGENT[1]}>" if action.agent else ""
    say(paint("$ " + shlex.join(["git", *action.args]), "bold") + who)
    ran = shell.git_hooked(repo, action.args, agent=action.agent)
    if ran.output.strip():
        say(_indent(ran.output))
    found = _REPORTED.findall(ran.output)
    reported = 0 if ran.code == 0 else int(found[-1]) if found else None
    ok = reported == action.expect
    word = "went ahead" if ran.code == 0 else "was refused"
    line = f"hook exit {reported} (expected {action.expect}): git {action.args[0]} {word}"
    say(paint(line, "green") if ok else paint(line + "  <-- not as expected", "red"))
    return ok


@dataclass(frozen=True)
class Miss:
    step: int
    title: str
    what: str


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.rstrip("\n").split("\n"))


def apply_edit(repo: Path, action: Edit) -> None:
    path = repo / action.path
    text = path.read_text(encoding="utf-8")
    if action.old == "":
        text += action.new
    elif action.old in text:
        text = text.replace(action.old, action.new)
    else:
        raise CannotJudge(f"demo: {action.path} does not contain {action.old!r}")
    path.write_text(text, encoding="utf-8")


def _check(repo: Path, action: Check, commands: frozenset[str]) -> bool | None:
    """Run one check and print it; True/False: as expected or not; None: skipped."""
    say(paint("$ " + shlex.join(["ballot-guard", *action.args]), "bold"))
    if action.args[0] not in commands and action.args[0] in scenarios.OPTIONAL_COMMANDS:
        say(_indent(f"(`ballot-guard {action.args[0]}` is not in this build: skipped)"))
        return None
    ran = shell.ballot_guard(repo, action.args)
    if ran.output.strip():
        say(_indent(ran.output))
    ok = ran.code == action.expect
    line = f"exit {ran.code} (expected {action.expect})"
    say(paint(line, "green") if ok else paint(line + "  <-- not as expected", "red"))
    return ok


def play_step(repo: Path, number: int, step: Step, commands: frozenset[str]) -> list[Miss]:
    say()
    say(paint(f"== {number}. {step.title} ==", "bold"))
    misses: list[Miss] = []
    skipping = False
    for action in step.actions:
        if isinstance(action, Say):
            say(action.text)
        elif isinstance(action, Edit):
            say(paint(f"# edit {action.path}: {action.note}", "dim"))
            apply_edit(repo, action)
        elif isinstance(action, Git):
            who = f"   # as {shell.AGENT[0]} <{shell.AGENT[1]}>" if action.agent else ""
            say(paint("$ " + shlex.join(["git", *action.args]) + who, "dim"))
            shell.git(repo, action.args, agent=action.agent)
        elif isinstance(action, Hooks):
            if not install_hooks(repo):
                raise CannotJudge("demo: the hooks could not be installed")
        elif isinstance(action, Hooked):
            if not _hooked(repo, action):
                misses.append(Miss(number, step.title,
                                   f"`{shlex.join(['git', *action.args])}`: its hook did not "
                                   f"report exit {action.expect}"))
        elif skipping:
            say(paint("$ " + shlex.join(["ballot-guard", *action.args]), "bold"))
            say(_indent("(skipped: it follows a skipped command)"))
        else:
            ok = _check(repo, action, commands)
            if ok is None:
                skipping = True
            elif not ok:
                misses.append(Miss(number, step.title,
                                   f"`{shlex.join(['ballot-guard', *action.args])}` "
                                   f"did not exit {action.expect}"))
    return misses


def play(directory: str | None, commands: frozenset[str]) -> int:
    """The whole demo; 0 when every verdict came out as expected, else 1.

    ``commands``: the subcommands this build registers (``cli.COMMANDS``); a step
    of an optional command that is not among them is skipped."""
    missing = shell.missing_modules(*NEEDS)
    if missing:
        raise CannotJudge(
            f"demo: the example's properties need {' and '.join(missing)} in {sys.executable}; "
            f"install them with: pip install 'ballot-guard[demo]' (or pip install "
            f"{' '.join(missing)})")
    repo = build.prepare(directory)
    say(f"ballot-guard demo: building the example repository in {repo}")
    build.build(repo)
    say(_indent(shell.git(repo, ["log", "--format=%h %an: %s%d"])))
    misses: list[Miss] = []
    for number, step in enumerate(scenarios.STEPS, 1):
        try:
            misses += play_step(repo, number, step, commands)
        except CannotJudge as exc:  # a setup action failed: later steps would mislead
            misses.append(Miss(number, step.title, f"could not set up: {exc}"))
            break
    say()
    say("The history the demo left behind:")
    say(_indent(shell.git(repo, ["log", "--graph", "--all", "--format=%h %an: %s%d"])))
    say(f"The example repository stays in {repo}: cd there and try `ballot-guard gate`.")
    if misses:
        for miss in misses:
            say(paint(f"demo: step {miss.step} ({miss.title}): {miss.what}", "red"))
        return 1
    say(paint("demo: every verdict came out as expected", "green"))
    return 0
