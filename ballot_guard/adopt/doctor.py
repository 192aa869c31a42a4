"""``ballot-guard doctor``: what ballot-guard sees in a repository, and what would
silently weaken a verdict there.

The report is one record (``Report``): the effective configuration and where each
value came from, the voters, the runner, the identity git would commit with, the hooks
and the pin; then the findings.  Exit 0 with no finding, 1 with one; a repository or
configuration it cannot read at all is CannotJudge (4).
"""
from __future__ import annotations

import ast
import configparser
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from ballot_guard import config as cfg
from ballot_guard import freeze, git
from ballot_guard.adopt.edits import PRE_COMMIT_CONFIG, hooks_present
from ballot_guard.change import identity
from ballot_guard.digest import pin
from ballot_guard.errors import CannotJudge
from ballot_guard.hooks import install
from ballot_guard.oracle.neutral_code import code_name
from ballot_guard.oracle.paths import Judge
from ballot_guard.oracle.patterns import PatternSet
from ballot_guard.run import interpreter, isolation
from ballot_guard.vote.gate import Stage

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PARENT_CONFIGS = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")
# addopts that make pytest read a config, a rootdir or a plugin from elsewhere
_REDIRECTS = ("-c", "--config-file", "--rootdir", "--confcutdir", "-p")


class Setting(TypedDict):
    """One configuration key as it is in force."""

    value: object  # as JSON writes it: a tuple as a list, a mapping as an object
    source: Literal["default", "table"]


class Runner(TypedDict):
    """The interpreter the gate would run the properties with, or why it cannot."""

    python: str | None
    pytest: str | None
    hypothesis: str | None
    pytest_randomly: bool | None
    error: str | None


class Identity(TypedDict):
    """Who git would commit as, and whether that is an agent."""

    identities: list[str]
    agent: bool
    pattern: str | None  # the ``agents`` pattern that matched, if one did


class PinState(TypedDict):
    """Whether the pin holds (``digest --check``)."""

    ok: bool
    file: str
    pinned: str | None
    actual: str | None
    format: str | None
    problem: str | None


class FindingJson(TypedDict):
    kind: str
    message: str


class ReportJson(TypedDict):
    """``doctor --json``: the report, then its exit code."""

    root: str
    config: dict[str, Setting]
    voters: list[str]
    interpreter: Runner
    isolation: str
    identity: Identity
    hooks: dict[str, str | None]
    pin: PinState
    findings: list[FindingJson]
    exit: int


@dataclass(frozen=True)
class Finding:
    kind: str  # a stable name: "agent-pattern", "neutral-code", ...
    message: str


@dataclass(frozen=True)
class Report:
    root: str
    config: dict[str, Setting]  # key -> its value and where it came from
    voters: list[str]
    interpreter: Runner
    isolation: str
    identity: Identity
    hooks: dict[str, str | None]  # stage -> "framework" | "plain" | "foreign" | None
    pin: PinState
    findings: list[Finding] = field(default_factory=list)

    @property
    def exit(self) -> int:
        return 1 if self.findings else 0

    def to_json(self) -> ReportJson:
        return {"root": self.root, "config": self.config, "voters": self.voters,
                "interpreter": self.interpreter, "isolation": self.isolation,
                "identity": self.identity, "hooks": self.hooks, "pin": self.pin,
                "findings": [{"kind": f.kind, "message": f.message} for f in self.findings],
                "exit": self.exit}


def _table(root: str) -> dict[str, Any]:
    path = os.path.join(root, cfg.PYPROJECT)
    try:
        with open(path, "rb") as f:
            doc = tomllib.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise cfg.ConfigError(f"{cfg.PYPROJECT}: cannot read: {exc}") from exc
    tool = doc.get("tool", {})
    table = tool.get("ballot_guard", {}) if isinstance(tool, dict) else {}
    return table if isinstance(table, dict) else {}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def voter_files(root: str, config: cfg.Config) -> dict[str, str]:
    pdir = os.path.join(root, config.properties_dir)
    if config.properties is not None:
        return {n: f"{config.properties_dir}/test_{n}.py" for n in config.properties}
    try:
        files = sorted(os.listdir(pdir))
    except OSError:
        return {}
    return {f[5:-3]: f"{config.properties_dir}/{f}" for f in files
            if f.startswith("test_") and f.endswith(".py") and len(f) > 8
            and os.path.isfile(os.path.join(pdir, f))}


def holds_a_test(source: bytes) -> bool:
    """Whether a property module defines a test pytest would collect (by name)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name.startswith("test"):
            return True
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test") and any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name.startswith("test") for n in node.body):
            return True
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.startswith("test") for t in node.targets):
            return True
    return False


def _hook_kind(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    if install.MARKER in data:
        return "plain"
    if install.PRE_COMMIT_MARKER in data:
        return "framework"
    return "foreign"


def _framework_ids(root: str) -> set[str]:
    try:
        with open(os.path.join(root, PRE_COMMIT_CONFIG), encoding="utf-8") as f:
            return hooks_present(f.read())
    except (FileNotFoundError, UnicodeDecodeError):
        return set()


def _addopts(root: str) -> list[tuple[str, str]]:
    """(file, addopts) of the pytest configs at the root."""
    found = []
    try:
        with open(os.path.join(root, cfg.PYPROJECT), "rb") as f:
            doc = tomllib.loads(f.read().decode("utf-8"))
        opts = doc.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("addopts")
        if isinstance(opts, list):
            opts = " ".join(str(o) for o in opts)
        if isinstance(opts, str):
            found.append((cfg.PYPROJECT, opts))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        pass
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"),
                          ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(os.path.join(root, name), encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_option(section, "addopts"):
            found.append((name, parser.get(section, "addopts")))
    return found


def _redirects(addopts: str) -> list[tuple[str, str]]:
    try:
        words = shlex.split(addopts)
    except ValueError:
        return []
    out = []
    for i, word in enumerate(words):
        for flag in _REDIRECTS:
            if word == flag and i + 1 < len(words):
                out.append((flag, words[i + 1]))
            elif flag.startswith("--") and word.startswith(flag + "="):
                out.append((flag, word[len(flag) + 1:]))
            elif flag in ("-c", "-p") and word.startswith(flag) and len(word) > 2:
                out.append((flag, word[2:]))
    return out


def findings(root: str, config: cfg.Config, voters: Mapping[str, str],
             hooks: Mapping[str, str | None]) -> list[Finding]:
    found = []
    for pattern in config.agents:  # the config refuses these; kept for a table it let through
        suggestion = identity.unmatchable(pattern)
        if suggestion is not None:
            found.append(Finding("agent-pattern", f"agents pattern {pattern!r} can never match a "
                                 f"`Name <email>` identity: write it as {suggestion!r}"))
    judge = Judge(root, config)
    tracked = git.split_z(git.out(["ls-files", "-z"], cwd=root))
    code = [p for p in tracked if code_name(p)]
    for pattern in config.neutral_paths:
        spec = PatternSet([pattern])
        hits = [p for p in (*code, "x.py", "src/x.py", "x.pth") if spec.match(p)]
        if hits:
            found.append(Finding("neutral-code", f"neutral_paths pattern {pattern!r} covers code "
                                 f"(e.g. {hits[0]}): code is judged as behaviour whatever "
                                 "neutral_paths says, so the pattern does not do what it reads "
                                 "as; narrow it"))
    for key in ("properties_dir", "fixtures_dir"):
        rel = getattr(config, key)
        path = os.path.join(root, rel)
        if not os.path.isdir(path):
            found.append(Finding("oracle-dir", f"{key} {rel}/ is missing"))
        elif not any(files for _, _, files in os.walk(path)):
            found.append(Finding("oracle-dir", f"{key} {rel}/ is empty"))
    for rel in voters.values():
        try:
            with open(os.path.join(root, rel), "rb") as f:
                ok = holds_a_test(f.read())
        except FileNotFoundError:
            continue
        except (SyntaxError, ValueError):
            found.append(Finding("property-empty", f"property {rel} does not parse"))
            continue
        if not ok:
            found.append(Finding("property-empty", f"property {rel} holds no test: "
                                 "the gate would find nothing to vote on (exit 4)"))
    frozen = freeze.load(os.path.join(root, config.freeze_file)).frozen
    for name in frozen:
        if name not in voters:
            found.append(Finding("frozen-gone", f"frozen name {name!r} has no property file "
                                 f"{config.properties_dir}/test_{name}.py: it can never be "
                                 "unfrozen; remove it in a reviewed commit with its history"))
    parent = os.path.dirname(os.path.abspath(root))
    while True:
        for name in PARENT_CONFIGS:
            if os.path.isfile(os.path.join(parent, name)):
                found.append(Finding("pytest-config", f"pytest config outside the oracle: "
                                     f"{os.path.join(parent, name)} (above the repository)"))
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    for source, opts in _addopts(root):
        for flag, value in _redirects(opts):
            target = value if flag != "-p" else value.replace(".", "/") + ".py"
            inside = not os.path.isabs(target) and not target.startswith("..")
            if flag == "-p" and not os.path.exists(os.path.join(root, target)):
                continue  # an installed plugin, not a file of the repository
            if not inside or not judge.is_oracle(target):
                found.append(Finding("pytest-config", f"pytest config outside the oracle: "
                                     f"{source} addopts {flag} {value}"))
    pushes = hooks.get("pre-push")
    if pushes is None or pushes == "foreign" or (
            pushes == "framework" and "ballot-gate" not in _framework_ids(root)):
        found.append(Finding("pre-push", "the pre-push hook is not installed: run "
                             "`pre-commit install --hook-type pre-push` (or "
                             "`ballot-guard install`)"))
    return found


def examine(root: str, environ: Mapping[str, str] | None = None) -> Report:
    env = dict(os.environ if environ is None else environ)
    config = cfg.load_worktree(root)
    table = _table(root)
    settings: dict[str, Setting] = {
        key: {"value": _plain(getattr(config, key)),
              "source": "table" if key in table else "default"}
        for key in cfg.Config._fields}
    voters = voter_files(root, config)
    runner: Runner
    isolation = "none"
    try:
        python = interpreter.find_interpreter(root, config, environ=env)
        interpreter.check_not_tracked(root, python)
        info = interpreter.probe(python, cwd=root, env=env)
        runner = {"python": python, "pytest": info.pytest, "hypothesis": info.hypothesis,
                  "pytest_randomly": info.randomly, "error": None}
        isolation = _isolation(root, config, env, info.fork)
    except CannotJudge as exc:
        runner = {"python": None, "pytest": None, "hypothesis": None,
                  "pytest_randomly": None, "error": str(exc)}
    idents = identity.committing_identities(root)
    matched = [(i, p) for i in idents for p in config.agents if identity.matches(p, i)]
    who: Identity = {"identities": list(dict.fromkeys(idents)),
                     "agent": bool(matched) or bool(env.get("BALLOT_GUARD_AGENT")),
                     "pattern": matched[0][1] if matched else None}
    folder = install.hooks_dir(root)
    hooks = {stage: _hook_kind(os.path.join(folder, stage)) for stage in install.HOOKS}
    check = pin.check_pin(root, config)
    state: PinState = {"ok": check.ok, "file": config.digest_file, "pinned": check.pinned,
                       "actual": check.actual, "format": check.format, "problem": check.problem}
    return Report(root, settings, sorted(voters), runner, isolation, who, hooks, state,
                  findings(root, config, voters, hooks))


def _isolation(root: str, config: cfg.Config, env: Mapping[str, str], fork: bool) -> str:
    """The isolation the gate's runs would get, as its header words it: the runner is
    started as the gate starts it (the OS sandbox entered where the kernel allows it)
    and stopped; nothing of the project runs."""

    how = "each run forked from a clean runner process" if fork else "each run a fresh process"
    try:
        with Stage(root, root, config, rev=None, seed=0, jobs=1, environ=env) as stage:
            try:
                stage.start()
            finally:
                record = stage.isolation
    except CannotJudge as exc:
        return f"{how}; the gate cannot start its runs: {exc}"
    return f"{how}; {isolation.describe(record)}"


def lines(report: Report) -> list[str]:
    """The human report."""
    out = [f"ballot-guard doctor: {report.root}", "", "configuration:"]
    for key, item in report.config.items():
        out.append(f"  {key} = {item['value']!r}  ({item['source']})")
    out += ["", f"voters: {', '.join(report.voters) or 'none'}"]
    r = report.interpreter
    if r["error"]:
        out.append(f"interpreter: cannot run the gate: {r['error']}")
    else:
        out.append(f"interpreter: {r['python']} (pytest {r['pytest']}, Hypothesis "
                   f"{r['hypothesis'] or 'not installed'}, pytest-randomly "
                   f"{'installed' if r['pytest_randomly'] else 'not installed'})")
    out.append(f"isolation: {report.isolation}")
    who = report.identity
    ident = ", ".join(who["identities"]) or "unknown"
    agent = (f"an agent (matches {who['pattern']!r})" if who["pattern"]
             else "an agent (BALLOT_GUARD_AGENT is set)" if who["agent"] else "not an agent")
    out.append(f"committing as: {ident}: {agent}")
    out.append("hooks: " + ", ".join(f"{stage} {kind or 'not installed'}"
                                     for stage, kind in report.hooks.items()))
    p = report.pin
    out.append(f"pin: {p['file']}: " + ("holds" if p["ok"] else f"does not hold: {p['problem']}"))
    out.append("")
    if report.findings:
        out.append(f"{len(report.findings)} finding(s) that would silently weaken a verdict:")
        out += [f"  - {f.message}" for f in report.findings]
    else:
        out.append("no findings")
    return out
