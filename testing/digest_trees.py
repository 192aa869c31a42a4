"""Random fixture trees for the digest tests, and the seed article's function verbatim."""
from __future__ import annotations

import hashlib
import os
import pathlib
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st


def article_digest(folder: pathlib.Path) -> str:
    """The seed article's function, as printed (an independent implementation of v1)."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob('*')):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Node:
    parts: tuple[str, ...]
    kind: str  # "file" | "exec" | "link" | "dir"
    content: bytes = b""
    target: str = ""


# Names that exercise the orderings: "-" and "." sort before "/", "{" after letters,
# spaces, non-ASCII (precomposed and decomposed), a leading dot (hidden files).
_CHARS = st.sampled_from([*list("ab-._{ Zé日"), "é", "ß", "\t"])
NAMES = st.lists(_CHARS, min_size=1, max_size=4).map("".join).filter(
    lambda n: n not in (".", ".."))


def _target(parts: tuple[str, ...], others: list[tuple[str, ...]], pick: int, ups: int) -> str:
    """A relative link target from ``parts`` to another generated path (or a missing one)."""
    if not others:
        return "missing"
    dest = others[pick % len(others)]
    up = len(parts) - 1
    return "/".join([".."] * up + list(dest)) if ups % 3 else "/".join([".."] * up + ["nowhere"])


@st.composite
def trees(draw: st.DrawFn, links: bool = True, max_nodes: int = 12) -> list[Node]:
    paths = draw(st.lists(st.lists(NAMES, min_size=1, max_size=3).map(tuple),
                          min_size=0, max_size=max_nodes, unique=True))
    nodes: list[Node] = []
    taken: set[tuple[str, ...]] = set()
    dirs: set[tuple[str, ...]] = set()
    for parts in paths:
        parents = {parts[:i] for i in range(1, len(parts))}
        if parts in taken or parts in dirs or parents & taken:
            continue
        kinds = ["file", "exec", "dir"] + (["link"] if links else [])
        kind = draw(st.sampled_from(kinds))
        taken.add(parts)
        dirs |= parents
        if kind == "dir":
            dirs.add(parts)
            taken.discard(parts)
            nodes.append(Node(parts, "dir"))
        elif kind == "link":
            others = [p for p in paths if p != parts]
            nodes.append(Node(parts, "link", target=_target(
                parts, others, draw(st.integers(0, 20)), draw(st.integers(0, 20)))))
        else:
            nodes.append(Node(parts, kind, draw(st.binary(max_size=40))))
    return nodes


def build(top: Path, nodes: list[Node]) -> None:
    """Write the nodes under ``top`` (created)."""
    top.mkdir(parents=True, exist_ok=True)
    for n in nodes:
        p = top.joinpath(*n.parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        if n.kind == "dir":
            p.mkdir(exist_ok=True)
        elif n.kind == "link":
            os.symlink(n.target, p)
        else:
            p.write_bytes(n.content)
            p.chmod(0o755 if n.kind == "exec" else 0o644)
