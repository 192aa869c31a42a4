"""The split command: commit the oracle part of a mixed change on its own.

Nothing here writes the working tree or the user's index.  The oracle
commit's tree is built in a temporary index (the base commit plus the oracle
entries of the change), committed with ``commit-tree``, and HEAD moves last,
with ``update-ref``'s old-value check, so a failure at any earlier step leaves
HEAD, the index and the files as they were (the plumbing is in ``ballot_guard.split.plumbing``).
Afterwards ``git diff --cached`` shows exactly the behaviour (and neutral)
part, still staged.

``--head`` does the same to an unpushed HEAD commit: the oracle commit on its
parent, then the original tree on top of it, both with the original author.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ballot_guard import git
from ballot_guard.change import identity, raw_diff
from ballot_guard.change.from_git import Change, agent_env, coauthors, commit_info
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.config import Config, load_at
from ballot_guard.errors import CannotJudge
from ballot_guard.oracle import paths as oracle_paths
from ballot_guard.split.plumbing import (
    Update,
    blob,
    build_tree,
    cat_blob,
    commit_tree,
    move_head,
    pushed_to,
    read_commit,
    refuse_in_progress,
    staged_changes,
)
from ballot_guard.split.tables import intermediate
from ballot_guard.vocabulary import Source


@dataclass(frozen=True)
class Sides:
    """How a change's paths are judged; ``by_table`` files are on the oracle side and another."""

    oracle: frozenset[str]
    behavior: frozenset[str]
    neutral: frozenset[str]
    by_table: frozenset[str] = frozenset()

    @property
    def mixed(self) -> bool:
        return bool(self.oracle) and bool(self.behavior)


@dataclass(frozen=True)
class Outcome:
    """What split did: ``oracle_commit`` is None when there was nothing to split."""

    sides: Sides
    oracle_commit: str | None
    behavior_commit: str | None = None  # --head only
    tables: tuple[str, ...] = ()  # files split by table
    blocked: str | None = None  # a policy refusal (exit 1), nothing was changed


# A classifier judges the deltas of a change against ``base`` whose new side is
# ``new`` (the index or a commit's tree), by ``config`` (the config of ``base``).
Classifier = Callable[[str, Config, str, Sequence[FileChange], git.Snapshot], Sides]
# (path, old bytes or None, new bytes or None) -> the oracle commit's bytes, None: absent.
TableSplit = Callable[[str, "bytes | None", "bytes | None"], "bytes | None"]


def commit_identities(root: str, sha: str) -> tuple[str, ...]:
    """Author, committer and every Co-authored-by of a commit."""
    info = commit_info(root, sha)
    return (info.author, info.committer, *coauthors(info.message))


def agent_refusal(root: str, config: Config, sides: Sides, identities: Sequence[str], *,
                  staged: bool) -> str | None:
    """Rule 2's refusal when an agent would get an oracle commit out of split.

    split commits without hooks, so it must not carry an agent's oracle change:
    the agent flag (``BALLOT_GUARD_AGENT``), the identity git would commit with,
    or (``--head``) the commit's own identities matching ``agents``.
    """

    agents = config.agents
    if not agent_env(None) and not (agents and identity.any_agent(
            agents, (*identities, *identity.committing_identities(root)))):
        return None
    oracle = " ".join(sorted(sides.oracle))
    if staged:
        return ("rule 2: an agent change touches oracle paths; split will not commit them. "
                f"Unstage them and leave them to a human: git restore --staged -- {oracle}")
    return ("rule 2: an agent commit touches oracle paths; splitting it would not make it "
            f"pass. Revert its oracle part and leave it to a human: {oracle}")


# ---- planning -----------------------------------------------------------------------------

def describe(paths: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(paths[:limit])
    more = len(paths) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def plan_updates(root: str, deltas: Sequence[FileChange], sides: Sides,
                 table_split: TableSplit) -> list[Update]:
    """The entries the oracle commit takes: oracle paths whole, table-split files rebuilt."""
    updates: list[Update] = []
    for d in deltas:
        if d.path in sides.by_table:
            u = _table_update(root, d, table_split)
            if u is not None:
                updates.append(u)
        elif d.path in sides.oracle:
            updates.append(Update(d.path, d.new_mode, d.new_oid))
    return updates


def _table_update(root: str, d: FileChange, table_split: TableSplit) -> Update | None:
    """The file with only its judge-table edits applied (None: no change to the base)."""
    for mode in (d.old_mode, d.new_mode):
        if mode not in (None, "100644", "100755"):
            raise CannotJudge(f"cannot split {d.path} by table: it is not a regular file")
    old = None if d.old_oid is None else cat_blob(root, d.old_oid)
    new = None if d.new_oid is None else cat_blob(root, d.new_oid)
    middle = table_split(d.path, old, new)
    if middle == old:
        return None
    if middle is None:
        return Update(d.path, None, None)
    mode = d.old_mode or d.new_mode  # a mode change rides with the behaviour
    return Update(d.path, mode, blob(root, middle))


def default_table_split(path: str, old: bytes | None, new: bytes | None) -> bytes | None:
    return intermediate(path, old, new)


# ---- the two commands ---------------------------------------------------------------------

def split_staged(root: str, *, message: str | None = None, classify: Classifier | None = None,
                 table_split: TableSplit = default_table_split) -> Outcome:
    """Commit the oracle part of the staged change; the rest stays staged."""
    head = git.head(root)
    if head is None:
        raise CannotJudge("cannot split: no commit yet (HEAD is unborn); "
                          "commit the oracle part by hand first")
    refuse_in_progress(root)
    deltas = staged_changes(root, head)
    config = load_at(root, head)
    sides = (classify or default_classifier)(root, config, head, deltas, git.Snapshot(root))
    if not sides.mixed:
        return Outcome(sides, None)
    blocked = agent_refusal(root, config, sides, (), staged=True)
    if blocked:
        return Outcome(sides, None, blocked=blocked)
    updates = plan_updates(root, deltas, sides, table_split)
    tree = build_tree(root, head, updates)
    text = message if message is not None else default_message(sides)
    new = commit_tree(root, tree, head, _message_bytes(text))
    move_head(root, new, head, "oracle part")
    return Outcome(sides, new, tables=tuple(sorted(sides.by_table)))


def split_head(root: str, *, message: str | None = None, classify: Classifier | None = None,
               table_split: TableSplit = default_table_split) -> Outcome:
    """Rewrite an unpushed mixed HEAD commit into oracle part, then the rest."""
    head = git.head(root)
    if head is None:
        raise CannotJudge("cannot split --head: no commit yet (HEAD is unborn)")
    refuse_in_progress(root)
    author, parents, original, encoding = read_commit(root, head)
    if not parents:
        raise CannotJudge(f"cannot split --head: {head[:12]} is a root commit (no parent to "
                          "put the oracle part on)")
    if len(parents) > 1:
        raise CannotJudge(f"cannot split --head: {head[:12]} is a merge commit")
    remotes = pushed_to(root, head)
    if remotes:
        raise CannotJudge(f"cannot split --head: {head[:12]} is already pushed "
                          f"({describe([r.removeprefix('refs/remotes/') for r in remotes], 2)}); "
                          "rewriting it would fork the shared history")
    parent = parents[0]
    deltas = raw_diff.trees(root, parent, head)
    config = load_at(root, parent)
    sides = (classify or default_classifier)(root, config, parent, deltas,
                                             git.Snapshot(root, head))
    if not sides.mixed:
        return Outcome(sides, None)
    blocked = agent_refusal(root, config, sides, commit_identities(root, head), staged=False)
    if blocked:
        return Outcome(sides, None, blocked=blocked)
    updates = plan_updates(root, deltas, sides, table_split)
    tree = build_tree(root, parent, updates)
    oracle_msg = head_oracle_message(original, message)
    oracle = commit_tree(root, tree, parent, oracle_msg, author=author, encoding=encoding)
    head_tree = git.out(["rev-parse", f"{head}^{{tree}}"], cwd=root).decode().strip()
    behavior = commit_tree(root, head_tree, oracle, original, author=author, encoding=encoding)
    move_head(root, behavior, head, "oracle part, then behaviour")
    return Outcome(sides, oracle, behavior, tables=tuple(sorted(sides.by_table)))


def default_message(sides: Sides) -> str:
    return f"Oracle part of a split change: {describe(sorted(sides.oracle))}"


ORACLE_PREFIX = b"Oracle part of: "


def head_oracle_message(original: bytes, message: str | None) -> bytes:
    """The oracle commit's message for --head.

    Default: the original message with its subject prefixed "Oracle part of: ".
    With -m: that message.  Either way every ``Co-authored-by:`` line of the
    original is kept, so the split commits name the same identities.
    """
    if message is None:
        return ORACLE_PREFIX + original.lstrip(b"\n")
    text = _message_bytes(message)
    missing = [line for line in original.splitlines()
               if line.strip().lower().startswith(b"co-authored-by:") and line.strip() not in
               {x.strip() for x in text.splitlines()}]
    if missing:
        text = text.rstrip(b"\n") + b"\n\n" + b"\n".join(x.strip() for x in missing) + b"\n"
    return text


def _message_bytes(text: str) -> bytes:
    data = os.fsencode(text)
    return data.rstrip(b"\n") + b"\n"


# ---- classification -----------------------------------------------------------------------

def default_classifier(root: str, config: Config, base: str, deltas: Sequence[FileChange],
                       new: git.Snapshot) -> Sides:
    """Sides of the change by the scope rules' own classification
    (``ballot_guard.oracle.paths``)."""

    files = tuple(deltas)
    source: Source = "staged" if new.rev is None else "commit"
    label = "staged change" if new.rev is None else f"commit {new.rev[:12]}"
    change = Change(source, label, new.rev, base, files, (), False)
    cls = oracle_paths.classify(root, config, change, git.Snapshot(root, base), lambda: new)
    o, b, n = frozenset(cls.oracle), frozenset(cls.behavior), frozenset(cls.neutral)
    return Sides(o, b, n, frozenset(cls.table_files) & o & (b | n))
