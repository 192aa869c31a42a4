"""The scope rules: a change may not rewrite its own judge.

A change (``ballot_guard.change.from_git``) is classified (``ballot_guard.oracle.paths``)
under the config of its BASE, never its own, and only once the base holds the
digest file (adoption); before that it is ``unjudged``.  Then every rule in
``RULES`` sees a ``ScopeContext`` and returns the reasons it blocks:

1. ``mixed``: oracle and behaviour paths in one change;
2. ``agent_oracle``: an agent change touches an oracle path;
3. ``fixtures_repinned`` (``ballot_guard.scope.pin_rule``);
4. ``freeze_history_kept`` (``ballot_guard.scope.freeze_rule``);
5. ``judge_tampering`` (``ballot_guard.scope.tamper_rule``): blocks an agent change only.

The records a rule sees and returns live in ``ballot_guard.scope.verdict``, so the
rules of other modules import that leaf and this module imports them plainly.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Mapping
from typing import NamedTuple

from ballot_guard import git
from ballot_guard.change import from_git, identity, raw_diff
from ballot_guard.change.from_git import Change
from ballot_guard.change.merges import own_changes
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.config import Config
from ballot_guard.git import Snapshot
from ballot_guard.oracle.links import leads_out, reclassify
from ballot_guard.oracle.names import fold
from ballot_guard.oracle.paths import Judge, classify
from ballot_guard.scope import baseline
from ballot_guard.scope.baseline import Base
from ballot_guard.scope.freeze_rule import freeze_history_kept
from ballot_guard.scope.pin_rule import fixtures_repinned
from ballot_guard.scope.tamper_rule import judge_tampering
from ballot_guard.scope.verdict import Reason, Rule, ScopeContext, ScopeRule, Verdict


def mixed(ctx: ScopeContext) -> list[Reason]:
    """Rule 1: oracle and behaviour together."""
    if ctx.oracle and ctx.behavior:
        return [Reason(ScopeRule.MIXED,
                       "the change touches oracle paths and behaviour paths together")]
    return []


def agent_oracle(ctx: ScopeContext) -> list[Reason]:
    """Rule 2: an agent change touches the oracle."""
    if ctx.is_agent and ctx.oracle:
        why = f" ({ctx.agent_why})" if ctx.agent_why else ""
        return [Reason(ScopeRule.AGENT_ORACLE, f"an agent change{why} touches oracle paths")]
    return []


LINKED_FILES = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml",
                          ".pytest.toml", "__init__.py", "pyproject.toml", "setup.cfg",
                          "tox.ini", ".pre-commit-config.yaml", ".gitattributes"})


def links_stay_in_oracle(ctx: ScopeContext) -> list[Reason]:
    """A symlink the change puts at an oracle path (a property, a fixture, a conftest,
    a pytest config or table file, or the properties dir itself) must lead to oracle
    paths: the digest pins a link's target string, not what it leads to, and pytest
    follows links, so a link to ``src/`` would let later behaviour edits rewrite the
    judge unseen.  Fixture links are rule 3 (the pin cannot cover them), others rule 1
    (oracle bound to behaviour)."""

    fixtures = fold(ctx.config.fixtures_dir)
    pack_dirs = (fixtures, fold(ctx.config.properties_dir))
    pack = tuple(d + "/" for d in pack_dirs)
    found: list[Reason] = []
    judge: Judge | None = None
    for f in ctx.change.files:
        if f.new_mode != "120000" or f.status == "D":
            continue
        if judge is None:
            judge = Judge(ctx.root, ctx.config)
        key = fold(f.path)
        if not (key.startswith(pack) or key in pack_dirs
                or posixpath.basename(key) in LINKED_FILES) \
                or judge.kind(f.path) not in (judge.ORACLE, judge.TABLE):
            continue  # a virtualenv's links (.venv/, the runner) are the runner check's job
        raw = ctx.new().read(f.path)
        if raw is None:
            continue

        target = os.fsdecode(raw)
        if leads_out(judge, f.path, target):
            rule = ScopeRule.PIN if key == fixtures or key.startswith(fixtures + "/") \
                else ScopeRule.MIXED
            found.append(Reason(rule, (
                f"{f.path} is a symlink to {target!r}, which is not oracle: a behaviour "
                "edit there would change the judge unseen; copy the file in instead")))
    return found


RULES: list[Rule] = [
    mixed,
    agent_oracle,
    fixtures_repinned,
    freeze_history_kept,
    links_stay_in_oracle,
    judge_tampering,
]


def _content_paths(ctx_config: Config, root: str, paths: tuple[str, ...]) -> bool:
    """Whether a rule will need the changed side's content (fixtures, pin, freeze, tables).

    Those paths are all oracle, so callers pass the oracle paths only."""

    judge = Judge(root, ctx_config)
    keys = [fold(p) for p in (ctx_config.fixtures_dir, ctx_config.digest_file,
                              ctx_config.freeze_file)]
    for path in paths:
        k = fold(path)
        if any(k == d or k.startswith(d + "/") for d in keys) or judge.is_table_file(path):
            return True
    return False


class Judging(NamedTuple):
    """What a judgement of commits knows beyond each commit: the target it goes to (its
    base also judges every commit: ``ci --base``, the remote's tip in pre-push) and the
    identities of the account that proposed it (``ci --actor``)."""
    target: Base | None = None
    actor: tuple[str, ...] = ()


def judge_change(root: str, change: Change, make_new: Callable[[], Snapshot] | None = None,
                 *, base: Base | None = None, patch: bytes | None = None,
                 judging: Judging = Judging()) -> Verdict:
    """Classify and judge one change under its base's config (``base``: already read;
    ``patch``: a patch file's bytes), and, when ``judging`` names a target whose config
    differs, under the target's too: blocked when either blocks, each reason saying which
    config it comes from."""
    if base is None:
        base = baseline.at(root, change.base)
    if judging.actor:
        change = change._replace(identities=(*change.identities, *judging.actor))
    own = _judge_by(root, change, make_new, base, patch)
    target = judging.target
    if target is None or not own.judged or target.config == base.config:
        return own
    theirs = _judge_by(root, change, make_new, base._replace(config=target.config), patch)
    more = [r for r in theirs.reasons if r not in own.reasons]  # the same finding once
    if not more:
        return own
    where = f"by the target's config (at {target.sha[:12] if target.sha else 'no commit'})"
    extra = tuple(Reason(r.rule, f"{where}: {r.message}") for r in more)
    if not own.reasons:  # only the target's config blocks: report its classification
        return theirs._replace(reasons=extra)
    return own._replace(reasons=(*own.reasons, *extra))


def _judge_by(root: str, change: Change, make_new: Callable[[], Snapshot] | None,
              base: Base, patch: bytes | None) -> Verdict:
    config, judged = base.config, base.adopted
    old = Snapshot(root, change.base if change.base is not None else git.empty_tree(root))
    ctx = ScopeContext(root, change, config, (), (), (), False, old, make_new)
    ctx.patch = patch
    cls = classify(root, config, change, old, ctx.new,
                          contents=judged or change.source != "patch")
    if judged:
        cls = reclassify(root, config, change, old, ctx.new, cls)
    if change.source == "patch" and judged and _content_paths(config, root, cls.oracle):
        ctx.new()  # a patch that rules need applied must apply: 4 with git's reason if not
    if not judged:
        return Verdict(change, False, cls.oracle, cls.behavior, cls.neutral, ())
    is_agent = change.agent_flag
    if is_agent:
        ctx.agent_why = "--agent or BALLOT_GUARD_AGENT"
    elif config.agents:
        who = change.identities
        if change.source != "commit" and cls.oracle:  # git var costs two processes: only
            who = who + identity.committing_identities(root)  # when the oracle is touched
        found = identity.agent_match(config.agents, who)
        if found is not None:
            is_agent = True
            ctx.agent_why = (f"identity {found.identity!r} matches agents pattern "
                             f"{found.pattern!r}")
    ctx.oracle, ctx.behavior, ctx.neutral, ctx.is_agent = (
        cls.oracle, cls.behavior, cls.neutral, is_agent)
    reasons = tuple(r for rule in RULES for r in rule(ctx))
    return Verdict(change, True, cls.oracle, cls.behavior, cls.neutral, reasons)


def judge_staged(root: str, *, agent: bool = False,
                 environ: Mapping[str, str] | None = None,
                 against: str | None = "HEAD") -> Verdict:
    """The staged index (honouring GIT_INDEX_FILE) against HEAD, or against the commit
    an amend of HEAD will sit on (``against``: its sha, None for none)."""
    base = baseline.at(root, against)
    change = from_git.staged_at(root, base.sha, agent=agent, environ=environ)
    return judge_change(root, change, base=base)


def _identities(info: from_git.CommitInfo) -> tuple[str, ...]:
    return (info.author, info.committer, *from_git.coauthors(info.message))


def judge_commit(root: str, rev: str, *, judging: Judging = Judging()) -> Verdict:
    """A commit against its first parent (a root commit against the empty tree); a merge
    on its own paths (``judge_merge``), an empty change when it has none."""
    sha = git.resolve(root, rev)
    info = from_git.commit_info(root, sha)
    if len(info.parents) > 1:
        return _merge_verdict(root, info, judging)
    base = info.parents[0] if info.parents else None
    against = base if base is not None else git.empty_tree(root)
    return judge_change(root, Change("commit", f"commit {sha[:12]}", sha, base,
                                     raw_diff.trees(root, against, sha), _identities(info),
                                     False),
                        judging=judging)


def judge_range(root: str, base: str, tip: str, *,
                judging: Judging = Judging()) -> list[Verdict]:
    """Every commit of ``base..tip`` on its own, oldest first; a merge on its own paths
    (``judge_merge``), and none when it has none."""
    verdicts = []
    for sha, is_merge in from_git.range_all(root, base, tip):
        verdict = judge_merge(root, sha, judging=judging) if is_merge \
            else judge_commit(root, sha, judging=judging)
        if verdict is not None:
            verdicts.append(verdict)
    tail = judge_unjudged_tail(root, base, tip, verdicts, judging=judging)
    return verdicts if tail is None else [*verdicts, tail]


def judge_unjudged_tail(root: str, base: str, tip: str, verdicts: list[Verdict], *,
                        judging: Judging = Judging()) -> Verdict | None:
    """When ``base`` holds the pin but commits of ``base..tip`` were unjudged (they sit on
    history the pin never covered: a branch forked before adoption that adds the pin
    again, pushed over the adopted one), the whole move from ``base`` to ``tip`` is
    judged as one change by ``base``'s config, with those commits' authors; else None.
    """
    unjudged = [v for v in verdicts if v.status == "unjudged"]
    if not unjudged:
        return None
    b, t = git.resolve(root, base), git.resolve(root, tip)
    if any(v.judged and v.change.base == b and v.change.commit == t for v in verdicts):
        return None  # a merge at the tip was already judged for this very move
    if not baseline.at(root, b).adopted:
        return None
    who = tuple(i for v in unjudged for i in v.change.identities)
    n = len(unjudged)
    label = (f"range {b[:12]}..{t[:12]} as a whole ({n} commit{'s' if n != 1 else ''} "
             "on history the pin did not cover)")
    return judge_change(root, Change("commit", label, t, b, raw_diff.trees(root, b, t), who,
                                     False), judging=judging)


def judge_merge(root: str, rev: str, *, judging: Judging = Judging()) -> Verdict | None:
    """A merge judged on its own paths: every path whose content differs from its first
    parent's, except content the commits it brings in wrote themselves
    (``ballot_guard.change.merges``); None when it has none.

    Commits forked before adoption were never judged (their base lacks the pin).  A
    merge that brings such commits into an adopted line (whichever parent is first)
    answers for all it changes against the adopted parent, with their authors beside
    its own: an agent's edit of a property cannot ride in on a clean merge."""
    info = from_git.commit_info(root, git.resolve(root, rev))
    verdict = _merge_verdict(root, info, judging)
    return verdict if verdict.change.files or verdict.reasons else None


def _merge_verdict(root: str, info: from_git.CommitInfo, judging: Judging) -> Verdict:
    crossing = _crossing_merge(root, info.sha, info.parents, _identities(info), judging)
    if crossing is not None:
        return crossing
    files = own_changes(root, info.sha, info.parents)
    return judge_change(root, Change("commit", f"merge {info.sha[:12]} (its own changes)",
                                     info.sha, info.parents[0], files, _identities(info),
                                     False), judging=judging)


def _crossing_merge(root: str, sha: str, parents: tuple[str, ...],
                    identities: tuple[str, ...], judging: Judging) -> Verdict | None:
    """A merge that brings never-judged commits into an adopted line, judged on all it
    changes against its adopted parent with their authors beside ``identities``; None
    when it does not (no parent adopted, or the first is and brings nothing unjudged)."""
    judging_parent = next((p for p in parents if baseline.at(root, p).adopted), None)
    unjudged = _unjudged_brought_in(root, sha, judging_parent) \
        if judging_parent is not None else []
    if judging_parent is None or (judging_parent == parents[0] and not unjudged):
        return None
    extra: list[str] = []
    for c in unjudged:
        extra += _identities(from_git.commit_info(root, c))
    n = len(unjudged)
    label = (f"merge {sha[:12]} against {judging_parent[:12]} (with {n} unjudged "
             f"commit{'s' if n != 1 else ''} it brings in)")
    return judge_change(root, Change("commit", label, sha, judging_parent,
                                     raw_diff.trees(root, judging_parent, sha),
                                     (*identities, *extra), False),
                        judging=judging)


def _unjudged_brought_in(root: str, merge: str, first_parent: str | None) -> list[str]:
    """The non-merge commits a merge brings into the line of ``first_parent`` (the parent
    it is judged against) that were never judged because their own base lacks the digest
    file (a branch forked before adoption), when that parent has adopted the pin; else []."""
    if first_parent is None:
        return []
    base = baseline.at(root, first_parent)
    if not base.adopted:
        return []
    data = git.out(["rev-list", "--no-merges", "--parents", merge, f"^{first_parent}"],
                   cwd=root)
    commits = [line.split() for line in data.decode().splitlines() if line.strip()]
    if not commits:
        return []
    roots = [c[0] for c in commits if len(c) == 1]
    with_parent = [c for c in commits if len(c) > 1]
    found = list(roots)
    if with_parent:
        digest = base.config.digest_file
        query = "".join(f"{c[1]}:{digest}\n" for c in with_parent)
        out = git.out(["cat-file", "--batch-check"], cwd=root,
                      input=query.encode("utf-8", "surrogateescape"))
        for c, line in zip(with_parent, out.decode("utf-8", "replace").splitlines(), strict=True):
            if line.endswith(" missing") or line.split(" ")[1:2] == ["tree"]:
                found.append(c[0])
    return found


def judge_patch(root: str, data: bytes, *, label: str, agent: bool = False,
                environ: Mapping[str, str] | None = None) -> Verdict:
    """A unified diff, judged as if applied to HEAD (applied only when a rule needs content)."""
    from ballot_guard.change import from_patch  # noqa: PLC0415 - lazy: code reader: the patch reader (2.7 ms) only when a patch is judged

    p0: list[str] = []
    files = from_patch.files(root, data, p0)
    base = baseline.at(root, "HEAD")
    if p0:
        files += _p0_oracle(root, base.config, files, p0)
    change = Change("patch", label, None, base.sha, files, (),
                    agent or from_git.agent_env(environ))
    applied = from_patch.Applied(root, base.sha, data)
    try:
        return judge_change(root, change, applied.snapshot, base=base, patch=data)
    finally:
        applied.close()


def _p0_oracle(root: str, config: Config, files: tuple[FileChange, ...],
               p0: list[str]) -> tuple[FileChange, ...]:
    """The oracle paths a patch would touch if applied with ``patch -p0``.

    git applies a patch with ``-p1``, dropping each name's first component, and
    so does the change record; but a patch whose names carry no ``a/`` ``b/``
    prefix (``diff -u``, ``git diff --no-prefix``) is often meant for ``-p0``,
    where ``--- properties/test_x.py`` is the property and not ``test_x.py``.
    Both readings are judged: the ``-p0`` paths that are oracle count too
    (an agent touching them is blocked, and with behaviour they are mixed).
    Only oracle ones are kept, so that the ``old/`` and ``new/`` of a
    ``diff -ru old new`` never turn a clean oracle patch into a mixed one; a
    table file read so counts as oracle (its ``-p0`` content is never built).
    """
    judge = Judge(root, config)
    seen = {p for f in files for p in (f.path, f.old_path) if p is not None}
    return tuple(FileChange("M", p) for p in dict.fromkeys(p0)
                 if p not in seen and judge.kind(p) in (judge.ORACLE, judge.TABLE))
