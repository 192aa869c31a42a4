"""For any small history and any merge made of it, the merge answers for every path
whose merged content no commit it brings in wrote (real commits, made with git's
plumbing; the expectation computed from the model of the history, not from git)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.change import merges
from testing.helpers import Repo, init_repo

PATHS = ("properties/test_a.py", "properties/test_b.py", "src/a.py", "src/b.py")
CONTENTS = ("one\n", "two\n", "three\n", "four\n")
PIN = "fixture_digest.txt"

Tree = dict[str, str]  # path -> content (absent: not in the tree)

edits = st.dictionaries(st.sampled_from(PATHS), st.none() | st.sampled_from(CONTENTS),
                        min_size=1, max_size=3)
# how the merge takes each path: from a parent (by index), from any commit, new, or absent
choices = st.one_of(st.tuples(st.just("parent"), st.integers(0, 2)),
                    st.tuples(st.just("commit"), st.integers(0, 30)),
                    st.tuples(st.just("new"), st.sampled_from(CONTENTS)),
                    st.tuples(st.just("absent"), st.none()))


@dataclass
class History:
    repo: Repo
    blobs: dict[str, str] = field(default_factory=dict)
    trees: dict[str, Tree] = field(default_factory=dict)
    parents: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def commit(self, tree: Tree, parents: tuple[str, ...]) -> str:
        index = self.repo.path / ".git" / "random-index"
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        self.repo.git("read-tree", "--empty", env=env)
        for content in set(tree.values()) - self.blobs.keys():
            self.blobs[content] = self.repo.git("hash-object", "-w", "--stdin",
                                                input=content.encode()).strip()
        info = "".join(f"100644 {self.blobs[c]}\t{p}\n" for p, c in sorted(tree.items()))
        self.repo.git("update-index", "--index-info", input=info.encode(), env=env)
        oid = self.repo.git("write-tree", env=env).strip()
        index.unlink()
        args = ["commit-tree", oid, "-m", f"commit {len(self.trees)}"]
        for p in parents:
            args += ["-p", p]
        sha = self.repo.git(*args).strip()
        self.trees[sha], self.parents[sha] = dict(tree), parents
        return sha

    def ancestors(self, sha: str) -> set[str]:
        seen, todo = set(), [sha]
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(self.parents[c])
        return seen

    def wrote(self, sha: str) -> set[tuple[str, str | None]]:
        """(path, content) of every path the commit changed against its first parent."""
        mine = self.trees[sha]
        base = self.trees[self.parents[sha][0]] if self.parents[sha] else {}
        return {(p, mine.get(p)) for p in {*mine, *base} if mine.get(p) != base.get(p)}


def _apply(tree: Tree, change: dict[str, str | None]) -> Tree:
    new = dict(tree)
    for path, content in change.items():
        if content is None:
            new.pop(path, None)
        else:
            new[path] = content
    return new


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(root=st.fixed_dictionaries({p: st.sampled_from(CONTENTS) for p in PATHS}),
       main_edits=st.lists(edits, min_size=1, max_size=3),
       side_edits=st.lists(edits, min_size=1, max_size=3),
       fork=st.integers(0, 3),
       side_merges_main=st.booleans(),
       other=st.sampled_from(["side", "ancestor", "octopus"]),
       take=st.fixed_dictionaries(dict.fromkeys(PATHS, choices)))
def test_a_merge_answers_for_all_content_no_brought_in_commit_wrote(
        tmp_path_factory: pytest.TempPathFactory, root: Tree,
        main_edits: list[dict[str, str | None]], side_edits: list[dict[str, str | None]],
        fork: int, side_merges_main: bool, other: str,
        take: dict[str, tuple[str, object]]) -> None:
    h = History(init_repo(tmp_path_factory.mktemp("history")))
    line = [h.commit({**root, PIN: "pin\n"}, ())]
    for change in main_edits:
        line.append(h.commit(_apply(h.trees[line[-1]], change), (line[-1],)))
    side = line[min(fork, len(line) - 1)]
    for i, change in enumerate(side_edits):
        side = h.commit(_apply(h.trees[side], change), (side,))
        if side_merges_main and i == 0:  # the side takes main's tree but keeps its own edit
            side = h.commit(_apply(h.trees[line[-1]], change), (side, line[-1]))
    first = line[-1]
    others = {"side": [side], "ancestor": [line[0]], "octopus": [side, line[0]]}[other]
    parents = (first, *others)
    history = list(h.trees)
    tree = dict(h.trees[first])
    for path, (how, arg) in take.items():
        if how == "parent":
            source = h.trees[parents[int(arg) % len(parents)]]  # type: ignore[call-overload]
        elif how == "commit":
            source = h.trees[history[int(arg) % len(history)]]  # type: ignore[call-overload]
        else:
            source = {} if how == "absent" else {path: str(arg)}
        tree = _apply(tree, {path: source.get(path)})
    sha = h.commit(tree, parents)

    differs = {p for p in {*tree, *h.trees[first]} if tree.get(p) != h.trees[first].get(p)}
    brought = h.ancestors(sha) - h.ancestors(first) - {sha}
    written = set().union(*(h.wrote(c) for c in brought))
    must = {p for p in differs if (p, tree.get(p)) not in written}
    root_dir = str(h.repo.path)
    own = {f.path for f in merges.own_changes(root_dir, sha, parents)}
    assert must <= own <= differs, (must, own, differs)
    if not brought:
        assert own == differs  # an ancestor brings nothing in: all of it is the merge's
