"""The split command: commit the oracle part of a mixed change on its own.

Nothing here writes the working tree or the user's index.  The oracle
commit's tree is built in a temporary index (the base commit plus the oracle
entries of the change), committed with ``commit-tree``, and HEAD moves last,
with ``update-ref``'s old-value check, so a failure at any earlier step leaves
HEAD, the index and the files as they were.  Afterwards ``git diff --cached``
shows exactly the behaviour (and neutral) part, still staged.

``--head`` does the same to an unpushed HEAD commit: the oracle commit on its
parent, then the original tree on top of it, both with the original author.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ballot_guard import git
from ballot_guard.config import Config, load_at
from ballot_guard.errors import CannotJudge


@dataclass(frozen=True)
class Delta:
    """One path's change between two trees (or a tree and the index), renames off."""

    path: str
    status: str  # A M D T
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str

    @property
    def deleted(self) -> bool:
        return self.status == "D"

    @property
    def added(self) -> bool:
        return self.status == "A"


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
class Update:
    """One entry the oracle commit takes: a path with its mode and object, or a deletion."""

    path: str
    mode: str | None  # None: delete
    oid: str | None

    def index_info(self, null_oid: str) -> bytes:
        if self.mode is None:
            return b"0 " + null_oid.encode() + b"\t" + os.fsencode(self.path) + b"\0"
        assert self.oid is not None
        return f"{self.mode} {self.oid}\t".encode() + os.fsencode(self.path) + b"\0"


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
Classifier = Callable[[str, Config, str, Sequence[Delta], git.Snapshot], Sides]
# (path, old bytes or None, new bytes or None) -> the oracle commit's bytes, None: absent.
TableSplit = Callable[[str, "bytes | None", "bytes | None"], "bytes | None"]


# ---- reading the change -------------------------------------------------------------------

def parse_raw(data: bytes) -> tuple[Delta, ...]:
    """Deltas from ``git diff-* --raw -z --no-renames`` output."""
    items = git.split_z(data)
    out: list[Delta] = []
    for meta, path in zip(items[0::2], items[1::2]):
        old_mode, new_mode, old_oid, new_oid, status = meta.lstrip(":").split(" ")
        if status == "U":
            raise CannotJudge(f"cannot split: {path} is unmerged; resolve the conflict first")
        out.append(Delta(path, status[0], old_mode, new_mode, old_oid, new_oid))
    return tuple(out)


_DIFF_OPTS = ("--raw", "-z", "--no-renames", "--full-index", "--ignore-submodules=none",
              "--no-ext-diff", "--no-textconv")


def staged_deltas(root: str, base: str) -> tuple[Delta, ...]:
    """The staged change against ``base``, as git commit would record it."""
    return parse_raw(git.out(["diff-index", "--cached", *_DIFF_OPTS, base, "--"], cwd=root))


def tree_deltas(root: str, old: str, new: str) -> tuple[Delta, ...]:
    return parse_raw(git.out(["diff-tree", "-r", *_DIFF_OPTS, old, new, "--"], cwd=root))


# ---- building the oracle tree -------------------------------------------------------------

def build_tree(root: str, base: str, updates: Sequence[Update]) -> str:
    """The tree of ``base`` with ``updates`` applied, built in a temporary index."""
    null_oid = "0" * len(base)
    with tempfile.TemporaryDirectory(prefix="ballot-guard-split-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        plain = ("-c", "core.splitIndex=false")  # no shared index file left in .git
        git.run([*plain, "read-tree", base], cwd=root, env=env)
        if updates:
            payload = b"".join(u.index_info(null_oid) for u in updates)
            git.run([*plain, "update-index", "-z", "--index-info"], cwd=root, env=env,
                    input=payload)
        tree = git.out([*plain, "write-tree"], cwd=root, env=env).decode().strip()
    _check_tree(root, base, tree, updates)
    return tree


def _check_tree(root: str, base: str, tree: str, updates: Sequence[Update]) -> None:
    """The new tree must differ from ``base`` in exactly the planned entries.

    A file replaced by a directory (or the reverse) across the oracle/behaviour
    boundary cannot be split: the index would drop the other side silently.
    """
    got = {d.path: (None if d.deleted else (d.new_mode, d.new_oid))
           for d in tree_deltas(root, base, tree)}
    want = {u.path: (None if u.mode is None else (u.mode, u.oid)) for u in updates}
    if got != want:
        odd = sorted(p for p in set(got) | set(want) if got.get(p, 0) != want.get(p, 0))
        raise CannotJudge(
            "cannot split: the oracle part cannot be committed without the behaviour part "
            f"(a file and a directory swap places at {describe(odd, 3)})")


def blob(root: str, data: bytes) -> str:
    """Write ``data`` as a blob object (no filters) and return its name."""
    return git.out(["hash-object", "-w", "--no-filters", "--stdin"], cwd=root,
                   input=data).decode().strip()


# ---- committing ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Author:
    name: str
    email: str
    date: str  # git's internal format: "<seconds> <+zone>"

    def env(self) -> dict[str, str]:
        return {"GIT_AUTHOR_NAME": self.name, "GIT_AUTHOR_EMAIL": self.email,
                "GIT_AUTHOR_DATE": self.date}


def read_commit(root: str, sha: str) -> tuple[Author, list[str], bytes, str | None]:
    """A commit's author, parents, raw message bytes and declared encoding."""
    raw = git.out(["cat-file", "commit", sha], cwd=root)
    header, _, message = raw.partition(b"\n\n")
    author: Author | None = None
    parents: list[str] = []
    encoding: str | None = None
    for line in header.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"encoding":
            encoding = value.decode("ascii", "replace")
        elif key == b"parent":
            parents.append(value.decode())
        elif key == b"author":
            who, _, when = value.rpartition(b"> ")
            name, _, email = who.partition(b" <")
            author = Author(os.fsdecode(name), os.fsdecode(email), when.decode())
    if author is None:
        raise CannotJudge(f"commit {sha[:12]} has no author line")
    return author, parents, message, encoding


def commit_tree(root: str, tree: str, parent: str, message: bytes, *,
                author: Author | None = None, encoding: str | None = None) -> str:
    """A commit object; identity and signing as git commit would choose them.

    No hook runs (commit-tree has none).  ``encoding`` keeps a message's
    declared non-UTF-8 encoding header.
    """
    env: dict[str, str] | None = None
    if author is not None:
        env = dict(os.environ, **author.env())
    opts = ["-c", f"i18n.commitEncoding={encoding}"] if encoding else []
    return git.out([*opts, "commit-tree", tree, "-p", parent], cwd=root, env=env,
                   input=message).decode().strip()


def move_head(root: str, new: str, old: str, reason: str) -> None:
    """Point HEAD (or the branch it names) at ``new`` only if it still is ``old``."""
    res = git.run(["update-ref", "-m", f"ballot-guard split: {reason}", "HEAD", new, old],
                  cwd=root, check=False)
    if res.code != 0:
        raise CannotJudge("cannot split: HEAD could not be moved (it moved meanwhile, or its "
                          "ref is locked); nothing was changed "
                          f"({git.describe_failure(['update-ref'], res)})")


# ---- guards -------------------------------------------------------------------------------

_IN_PROGRESS = {"MERGE_HEAD": "a merge", "CHERRY_PICK_HEAD": "a cherry-pick",
                "REVERT_HEAD": "a revert"}


def refuse_in_progress(root: str) -> None:
    args = [a for name in _IN_PROGRESS for a in ("--git-path", name)]
    paths = git.out(["rev-parse", *args], cwd=root).splitlines()
    for what, path in zip(_IN_PROGRESS.values(), paths):
        if os.path.exists(os.path.join(root, os.fsdecode(path))):
            raise CannotJudge(f"cannot split: {what} is in progress; finish or abort it first")


def pushed_to(root: str, sha: str) -> list[str]:
    """Remote-tracking refs that already contain ``sha`` (ref names hold no newline)."""
    data = git.out(["for-each-ref", "--contains", sha, "--format=%(refname)", "refs/remotes/"],
                   cwd=root)
    return [os.fsdecode(r) for r in data.splitlines() if r]


def commit_identities(root: str, sha: str) -> tuple[str, ...]:
    """Author, committer and every Co-authored-by of a commit."""
    from ballot_guard.change import coauthors, commit_info

    info = commit_info(root, sha)
    return (info.author, info.committer, *coauthors(info.message))


def agent_refusal(root: str, config: Config, sides: Sides, identities: Sequence[str], *,
                  staged: bool) -> str | None:
    """Rule 2's refusal when an agent would get an oracle commit out of split.

    split commits without hooks, so it must not carry an agent's oracle change:
    the agent flag (``BALLOT_GUARD_AGENT``), the identity git would commit with,
    or (``--head``) the commit's own identities matching ``agents``.
    """
    from ballot_guard import identity
    from ballot_guard.change import agent_env

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


def plan_updates(root: str, deltas: Sequence[Delta], sides: Sides,
                 table_split: TableSplit) -> list[Update]:
    """The entries the oracle commit takes: oracle paths whole, table-split files rebuilt."""
    updates: list[Update] = []
    for d in deltas:
        if d.path in sides.by_table:
            u = _table_update(root, d, table_split)
            if u is not None:
                updates.append(u)
        elif d.path in sides.oracle:
            updates.append(Update(d.path, None, None) if d.deleted
                           else Update(d.path, d.new_mode, d.new_oid))
    return updates


def _table_update(root: str, d: Delta, table_split: TableSplit) -> Update | None:
    """The file with only its judge-table edits applied (None: no change to the base)."""
    for mode in (d.old_mode, d.new_mode):
        if mode not in ("000000", "100644", "100755"):
            raise CannotJudge(f"cannot split {d.path} by table: it is not a regular file")
    old = None if d.added else _cat(root, d.old_oid)
    new = None if d.deleted else _cat(root, d.new_oid)
    middle = table_split(d.path, old, new)
    if middle == old:
        return None
    if middle is None:
        return Update(d.path, None, None)
    mode = d.new_mode if d.added else d.old_mode  # a mode change rides with the behaviour
    return Update(d.path, mode, blob(root, middle))


def _cat(root: str, oid: str) -> bytes:
    return git.out(["cat-file", "blob", oid], cwd=root)


def default_table_split(path: str, old: bytes | None, new: bytes | None) -> bytes | None:
    from ballot_guard.tablesplit import intermediate

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
    deltas = staged_deltas(root, head)
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
    deltas = tree_deltas(root, parent, head)
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
    data = os.fsencode(text) if isinstance(text, str) else text
    return data.rstrip(b"\n") + b"\n"


# ---- classification -----------------------------------------------------------------------

def default_classifier(root: str, config: Config, base: str, deltas: Sequence[Delta],
                       new: git.Snapshot) -> Sides:
    """Sides of the change by the scope rules' own classification (``ballot_guard.oracle``)."""
    from ballot_guard import oracle
    from ballot_guard.change import Change, FileChange

    files = tuple(FileChange(d.status, d.path, None, None if d.added else d.old_mode,
                             None if d.deleted else d.new_mode) for d in deltas)
    source, label = ("staged", "staged change") if new.rev is None else \
        ("commit", f"commit {new.rev[:12]}")
    change = Change(source, label, new.rev, base, files, (), False)
    cls = oracle.classify(root, config, change, git.Snapshot(root, base), lambda: new)
    o, b, n = frozenset(cls.oracle), frozenset(cls.behavior), frozenset(cls.neutral)
    return Sides(o, b, n, frozenset(cls.table_files) & o & (b | n))
