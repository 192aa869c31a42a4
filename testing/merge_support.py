"""Merge commits made by hand (``git commit-tree``), with any tree and any parents."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from testing.helpers import Repo


def tree_with(repo: Repo, start: str, take: Mapping[str, str | None]) -> str:
    """``start``'s tree with each path of ``take`` as it is at the revision named (its
    blob and mode there; removed when it is absent there or the revision is None)."""
    index = repo.path / ".git" / "merge-support-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        repo.git("read-tree", start, env=env)
        for path, rev in take.items():
            line = repo.git("ls-tree", "-z", rev, "--", path).rstrip("\0") if rev else ""
            if line:
                meta, _, _ = line.partition("\t")
                mode, _, oid = meta.split(" ")
                repo.git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}", env=env)
            else:
                repo.git("update-index", "--force-remove", "--", path, env=env)
        return repo.git("write-tree", env=env).strip()
    finally:
        index.unlink(missing_ok=True)


def commit_tree(repo: Repo, tree: str, parents: Sequence[str], *, message: str = "merge",
                author: str | None = None) -> str:
    """A commit of ``tree`` on ``parents`` (first parent first), by ``author``."""
    env = dict(os.environ)
    if author is not None:
        name, _, email = author.partition(" <")
        env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"] = name, email.rstrip(">")
        env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"] = name, email.rstrip(">")
    args = ["commit-tree", tree, "-m", message]
    for p in parents:
        args += ["-p", p]
    return repo.git(*args, env=env).strip()


def merge_taking(repo: Repo, parents: Sequence[str], take: Mapping[str, str | None], *,
                 author: str | None = None, branch: str | None = "main") -> str:
    """A merge of ``parents`` whose tree is the first parent's with ``take`` applied;
    ``branch`` is moved to it (and checked out clean) when given."""
    sha = commit_tree(repo, tree_with(repo, parents[0], take), parents, author=author)
    if branch is not None:
        repo.git("checkout", "-q", "-B", branch, sha)
    return sha
