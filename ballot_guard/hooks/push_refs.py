"""What a push hands a pre-push hook, translated into pushed refs.

Pure functions, no git: git's stdin lines (``<local ref> <local sha> <remote
ref> <remote sha>``) or pre-commit's ``PRE_COMMIT_*`` variables become
``PushRef`` records, and each becomes a ``Target``: the tip to judge and what
to leave out (the remote's old tip, or every remote-tracking ref for a new
branch).  ``ballot_guard.hooks.pushed`` turns a Target into commits
with git.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ballot_guard.errors import CannotJudge

_SHA = re.compile(r"\A(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")


def is_zero(sha: str) -> bool:
    """True for git's all-zero object name (a deleted ref, or a ref the remote lacks)."""
    return bool(sha) and set(sha) == {"0"}


@dataclass(frozen=True)
class PushRef:
    local_ref: str
    local_sha: str  # a sha, or (from pre-commit) any revision git can resolve
    remote_ref: str
    remote_sha: str  # all zeros: the remote lacks the ref

    @property
    def deleted(self) -> bool:
        return is_zero(self.local_sha)

    @property
    def new(self) -> bool:
        return is_zero(self.remote_sha)


@dataclass(frozen=True)
class Target:
    """One pushed ref to judge: the commits reachable from ``tip`` minus ``exclude``.

    ``exclude`` is a revision (the remote's old tip) or None; with None and
    ``new`` set, the commits no remote-tracking ref has are judged (a push
    that includes the root commit has no base: every such commit is judged).
    """

    label: str
    tip: str
    exclude: str | None
    new: bool


def parse_push_lines(text: str) -> tuple[PushRef, ...]:
    """git's pre-push stdin: one line per ref; the local ref may hold spaces (split from the
    right)."""
    refs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.rstrip("\r\n").rsplit(" ", 3)  # git separates fields by one space
        if len(parts) != 4 or not _SHA.match(parts[1]) or not _SHA.match(parts[3]):
            raise CannotJudge(f"malformed pre-push line (expected '<local ref> <sha> "
                              f"<remote ref> <sha>'): {line!r}")
        refs.append(PushRef(parts[0], parts[1], parts[2], parts[3]))
    return tuple(refs)


def from_pre_commit(environ: Mapping[str, str]) -> tuple[PushRef, ...] | None:
    """The ref pre-commit passes a pre-push hook, or None when it passed none.

    pre-commit reads git's stdin itself and hands over only the first pushed
    ref that has commits: ``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF``, or,
    for a push that includes the root commit, only ``PRE_COMMIT_LOCAL_BRANCH``.
    """
    to_ref = environ.get("PRE_COMMIT_TO_REF") or environ.get("PRE_COMMIT_SOURCE")
    from_ref = environ.get("PRE_COMMIT_FROM_REF") or environ.get("PRE_COMMIT_ORIGIN")
    local = environ.get("PRE_COMMIT_LOCAL_BRANCH", "")
    remote = environ.get("PRE_COMMIT_REMOTE_BRANCH", "")
    if to_ref and from_ref:
        return (PushRef(local or to_ref, to_ref, remote or "(unknown)", from_ref),)
    if local:  # pre-commit's "all files" push: the ref's history reaches the root commit
        return (PushRef(local, local, remote or "(unknown)", "0" * 40),)
    return None


def targets(refs: tuple[PushRef, ...]) -> tuple[Target, ...]:
    """What to judge for each pushed ref; deletions are skipped."""
    result = []
    for ref in refs:
        if ref.deleted:
            continue
        label = ref.local_ref if ref.local_ref == ref.remote_ref else \
            f"{ref.local_ref} -> {ref.remote_ref}"
        if ref.new:
            result.append(Target(label, ref.local_sha, None, True))
        else:
            result.append(Target(label, ref.local_sha, ref.remote_sha, False))
    return tuple(result)
