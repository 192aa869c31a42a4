"""Split one table file's change (``pyproject.toml``, ``setup.cfg``, ``tox.ini``) by table.

The oracle commit gets the old file with only its judge-table edits applied:
the file is cut into chunks (the text before the first header, then each
header with the lines under it), the old file's judge chunks are swapped for
the new file's, new judge chunks are placed after their neighbour, and every
other chunk keeps its old text.  Which chunk is a judge table, and whether
the result is right, is decided by parsing (``ballot_guard.oracle.tables``), never
by the text: the result must carry the new file's judge data and the old
file's other data exactly, or the split is refused (exit 4) naming the file.
"""
from __future__ import annotations

import posixpath
import re
import sys
from dataclasses import dataclass

from ballot_guard.errors import CannotJudge
from ballot_guard.oracle import tables

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

JUDGE, OTHER, MIXED = "judge", "other", "mixed"

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_INI_HEADER = re.compile(r"\[(?P<header>.+)\]")  # configparser's SECTCRE


@dataclass(frozen=True)
class Chunk:
    key: tuple[str, int]  # (header line's identity, occurrence); ("", 0) for the preamble
    text: str


class CannotSplit(CannotJudge):
    pass


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _toml_header(line: str) -> str | None:
    """The identity of a TOML table header line, or None if the line is not one."""
    stripped = line.strip()
    if not stripped.startswith("["):
        return None
    try:
        doc = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    node: object = doc
    while isinstance(node, (dict, list)) and node:
        if isinstance(node, list):
            path.append("[]")
            node = node[-1]
            continue
        (key, node), = node.items()
        path.append(key)
    return repr(tuple(path))


def _toml_scan(line: str, state: list[object]) -> None:
    """Advance [open multi-line string delimiter or "", bracket depth] over one line."""
    ml, depth = str(state[0]), int(str(state[1]))
    i, n = 0, len(line)
    while i < n:
        if ml:
            if line[i] == "\\" and ml == '"""':
                i += 2
                continue
            if line.startswith(ml, i):
                i += 3
                while i < n and line[i] == ml[0]:
                    i += 1
                ml = ""
                continue
            i += 1
            continue
        ch = line[i]
        if ch == "#":
            break
        if line.startswith('"""', i) or line.startswith("'''", i):
            ml = line[i:i + 3]
            i += 3
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and line[j] != ch:
                j += 2 if (ch == '"' and line[j] == "\\") else 1
            i = j + 1
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        i += 1
    state[0], state[1] = ml, depth


def chunks(name: str, text: str) -> list[Chunk]:
    """The preamble, then one chunk per table header, with their exact text."""
    toml = posixpath.basename(name).casefold() == "pyproject.toml"
    keys: list[str] = [""]
    bodies: list[list[str]] = [[]]
    state: list[object] = ["", 0]
    for line in _lines(text):
        header = None
        if not state[0] and state[1] == 0:
            if toml:
                header = _toml_header(line)
            elif line.startswith("["):
                m = _INI_HEADER.match(line.strip())
                header = m.group("header") if m else None
        if header is not None:
            keys.append(header)
            bodies.append([line])
            continue
        bodies[-1].append(line)
        if toml:
            _toml_scan(line, state)
    seen: dict[str, int] = {}
    out = []
    for key, body in zip(keys, bodies, strict=True):
        seen[key] = seen.get(key, -1) + 1
        out.append(Chunk((key, seen[key]), "".join(body)))
    return out


def kind(name: str, chunk: Chunk) -> str:
    """JUDGE, OTHER or MIXED, by parsing the chunk on its own."""
    try:
        judge, other = tables.split(name, chunk.text.encode("utf-8"))
    except tables.Unparseable:
        return MIXED
    if judge and other:
        return MIXED
    return JUDGE if judge else OTHER


def _join(parts: list[str]) -> str:
    out = ""
    for text in parts:
        if out and not out.endswith("\n"):
            out += "\n"
        out += text
    return out


def assemble(name: str, old: str, new: str) -> str:
    """Old text with the new judge chunks in place of the old ones."""
    old_chunks, new_chunks = chunks(name, old), chunks(name, new)
    new_by_key = {c.key: c for c in new_chunks}
    old_by_key = {c.key: c for c in old_chunks}
    result: list[Chunk] = []
    for c in old_chunks:
        k = kind(name, c)
        twin = new_by_key.get(c.key)
        if k == OTHER or (twin is not None and twin.text == c.text):
            result.append(c)
        elif k == JUDGE and (twin is None or kind(name, twin) == JUDGE):
            if twin is not None:
                result.append(twin)
        else:
            raise CannotSplit(f"cannot split {name} by table: judge and other settings share "
                              f"one table ({c.key[0] or 'top level'})")
    placed = {c.key for c in result}
    for i, c in enumerate(new_chunks):
        if c.key in placed or c.key in old_by_key:
            continue
        k = kind(name, c)
        if k == OTHER:
            continue
        if k == MIXED:
            raise CannotSplit(f"cannot split {name} by table: judge and other settings share "
                              f"one table ({c.key[0] or 'top level'})")
        anchor = next((p.key for p in reversed(new_chunks[:i]) if p.key in placed), None)
        at = next((j + 1 for j, r in enumerate(result) if r.key == anchor), len(result)) \
            if anchor is not None else len(result)
        result.insert(at, c)
        placed.add(c.key)
    return _join([c.text for c in result])


def intermediate(name: str, old: bytes | None, new: bytes | None) -> bytes | None:
    """The file for the oracle commit: judge tables as in ``new``, the rest as in ``old``."""
    try:
        old_text = "" if old is None else old.decode("utf-8")
        new_text = "" if new is None else new.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CannotSplit(f"cannot split {name} by table: not UTF-8") from exc
    result = assemble(name, old_text, new_text)
    data = result.encode("utf-8")
    try:
        got_judge, got_other = tables.split(name, data)
        want_judge, _ = tables.split(name, new)
        _, want_other = tables.split(name, old)
    except tables.Unparseable as exc:
        raise CannotSplit(f"cannot split {name} by table: {exc}") from exc
    if got_judge != want_judge or got_other != want_other:
        raise CannotSplit(f"cannot split {name} by table exactly: its judge and other settings "
                          "are interleaved; commit the judge-table edit on its own by hand")
    if old is None and not result.strip():
        return None
    return data
