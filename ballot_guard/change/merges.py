"""What a merge commit changes of its own: the paths a merge is judged on.

A merge M with first parent P1 and other parents P2..Pn is judged on every
path whose content (mode and blob, or absence) differs from P1's, except a
path whose content the commits it brings in wrote themselves.  The commits
it brings in are ``git rev-list P2 .. Pn ^P1``: each is judged on its own (in
the range, or as part of the base's history).  A path p is excused when, for
some other parent Pi, both hold:

1. M's content at p is Pi's, or the clean three-way merge of P1 and Pi at p
   (``git merge-tree``, so a file both sides edited apart is not the merge's
   own), and
2. Pi's content at p was *introduced* by a commit the merge brings in: one
   whose content at p differs from every one of its own parents (a non-merge
   commit that wrote it; a merge's own resolution, itself judged this way).

So a merge whose other parent is an ancestor of P1 brings nothing in and
answers for everything it changes, and a merge that resolves a path back to
an older version (a reviewed property, the freeze file, the fixtures and
their pin) answers for that path: no commit it brings in wrote that content.
Content a side branch merely carried over (kept its own side in a merge of
the main line, took the main line's version) is not introduced by it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ballot_guard import git
from ballot_guard.change import raw_diff
from ballot_guard.change.raw_diff import Content, FileChange


def _diff(root: str, a: str, b: str, env: dict[str, str] | None = None
          ) -> dict[str, FileChange]:
    return {f.path: f for f in raw_diff.trees(root, a, b, env)}


def brought_in(root: str, parents: Sequence[str]) -> list[str]:
    """The commits a merge of ``parents`` brings into its first parent's line."""
    others = list(parents[1:])
    data = git.out(["rev-list", *others, f"^{parents[0]}", "--"], cwd=root)
    return data.decode().split()


def introductions(root: str, commits: Sequence[str],
                  paths: Iterable[str]) -> set[tuple[str, Content]]:
    """(path, content) of every path among ``paths`` that one of ``commits`` introduced:
    its content there differs from that in each of its parents (``diff-tree -c``: for a
    merge only what it resolved itself; for a root commit, everything)."""
    wanted = set(paths)
    if not commits or not wanted:
        return set()
    return {(f.path, f.new) for _, files in raw_diff.each_commit(root, commits)
            for f in files if f.path in wanted}


def _objects_dir(root: str) -> str:
    rel = git.out(["rev-parse", "--git-path", "objects"], cwd=root).decode().rstrip("\n")
    return os.path.abspath(os.path.join(root, rel))


def three_way(root: str, first: str, other: str,
              scratch: str) -> tuple[dict[str, FileChange], set[str]]:
    """git's own merge of ``first`` and ``other`` (``merge-tree --write-tree``): how its
    tree differs from ``first``, and the paths it could not merge cleanly.  Its objects
    go to ``scratch`` (the repository's own objects read as alternates), so nothing is
    written into the repository.  No merge git can make: nothing differs, nothing clean."""
    env = git.scrubbed_env()
    env["GIT_OBJECT_DIRECTORY"] = scratch
    env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _objects_dir(root)
    res = git.run(["merge-tree", "--write-tree", "--no-messages", "--name-only", "-z",
                   first, other], cwd=root, env=env, check=False)
    names = git.split_z(res.stdout) if res.code in (0, 1) else []
    if not names:
        return {}, set()
    return _diff(root, first, names[0], env), set(names[1:])


def own_changes(root: str, sha: str, parents: Sequence[str]) -> tuple[FileChange, ...]:
    """The merge's own paths (see the module doc), as changes against its first parent."""
    first = parents[0]
    diff = _diff(root, first, sha)
    if not diff:
        return ()
    commits = brought_in(root, parents)
    own = dict(diff)
    if commits:
        made = introductions(root, commits, diff)
        sides: list[dict[str, Content]] = []
        for other in parents[1:]:
            against = _diff(root, sha, other)  # paths where the merge is not this parent's
            side = {p: (against[p].new if p in against else row.new) for p, row in diff.items()}
            sides.append(side)
            for p, content in side.items():
                if p in own and p not in against and (p, content) in made:
                    del own[p]
        if own:
            import tempfile  # noqa: PLC0415 - lazy: rare branch: tempfile (1.5 ms) only for a merge git must merge three-way

            with tempfile.TemporaryDirectory(prefix="ballot-guard-merge-") as scratch:
                for other, side in zip(parents[1:], sides, strict=True):
                    merged, conflicted = three_way(root, first, other, scratch)
                    for p in [p for p in own if p not in conflicted and p in merged]:
                        if merged[p].new == own[p].new and (p, side[p]) in made:
                            del own[p]
                    if not own:
                        break
    return tuple(own.values())
