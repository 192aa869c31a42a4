"""The base a change is judged by: its commit, its config, whether it adopted the pin.

Records here are ``NamedTuple`` (a dataclass costs a millisecond to create at import,
and this runs on every commit).  One ``git cat-file --batch`` reads the base commit, its
``pyproject.toml`` and whether it holds the default digest file, so the commit-time hook pays one
git process for all three (a config naming another digest file costs one more).
"""
from __future__ import annotations

from typing import NamedTuple

from ballot_guard import git
from ballot_guard.config import PYPROJECT, Config, parse_pyproject
from ballot_guard.errors import CannotJudge


class Base(NamedTuple):
    sha: str | None  # None: no commit (unborn HEAD, a root commit's parent)
    config: Config  # the base's config (defaults when there is no base)
    adopted: bool  # the base holds the config's digest file, or held it once (a deleted pin)


def _batch(root: str, names: list[str]) -> list[tuple[str, str, bytes] | None]:
    """(oid, type, content) for each object name, None where git has none."""
    data = git.out(["cat-file", "--batch"], cwd=root,
                   input="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape"))
    result: list[tuple[str, str, bytes] | None] = []
    pos = 0
    for _ in names:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode("utf-8", "surrogateescape")
        pos = nl + 1
        fields = header.rsplit(" ", 2)
        if len(fields) != 3 or not fields[2].isdigit():
            result.append(None)  # "<name> missing" / "ambiguous"
            continue
        size = int(fields[2])
        result.append((fields[0], fields[1], data[pos:pos + size]))
        pos += size + 1
    return result


def _plain(path: str) -> bool:
    return "\n" not in path and "\r" not in path


def at(root: str, rev: str | None) -> Base:
    """The base at ``rev`` ("HEAD", a parent's sha) or None (no commit: defaults, unjudged)."""
    if rev is None:
        return Base(None, Config(), False)
    default = Config().digest_file
    commit, pyproject, digest = _batch(root, [rev, f"{rev}:{PYPROJECT}", f"{rev}:{default}"])
    if commit is None or commit[1] != "commit":
        if rev == "HEAD":
            return Base(None, Config(), False)
        raise CannotJudge(f"unknown revision: {rev}")
    sha = commit[0]
    data = pyproject[2] if pyproject is not None and pyproject[1] == "blob" else None
    config = parse_pyproject(data, f"{PYPROJECT} at {sha[:12]}")
    if config.digest_file != default:
        digest = (_batch(root, [f"{sha}:{config.digest_file}"])[0]
                  if _plain(config.digest_file) else None)
    if digest is None:  # absent, or a gitlink whose object is not here: ask the tree
        held = git.Snapshot(root, sha).entry(config.digest_file) is not None
    else:
        held = digest[1] != "tree"
    return Base(sha, config, held or _once_adopted(root, sha, config.digest_file))


def _once_adopted(root: str, sha: str, digest_file: str) -> bool:
    """Whether history up to ``sha`` ever touched the digest file.

    Adoption is the commit that *first* adds the pin: once a repository has adopted,
    deleting the pin does not take it back to before adoption, or every commit after a
    deletion (and the one that puts a pin back together with property edits) would go
    unjudged.  One path-limited walk, paid only where the base holds no pin."""
    touched = git.out(["rev-list", sha, "--", f":(literal){digest_file}"], cwd=root).split()
    if not touched:
        return False
    # the pathspec also matches a directory of that name: held means a file there once
    held = _batch(root, [f"{c.decode()}:{digest_file}" for c in touched])
    return any(h is not None and h[1] == "blob" for h in held)
