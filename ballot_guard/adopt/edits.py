"""The minimal text edits ``init`` makes to a user's files, each verified by parsing.

A user's ``pyproject.toml`` and ``.pre-commit-config.yaml`` are never re-dumped: the
``[tool.ballot_guard]`` table is appended (or its missing keys inserted under its
header), and the hooks' entry is appended to the ``repos:`` list, in the file's own
indentation and line endings.  Every byte outside the insertion stays as it was.  The
result is parsed again and must hold exactly the old data plus what was added; where
that cannot be had, ``Refusal`` names the file and what to add by hand.
"""
from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from ballot_guard.errors import CannotJudge

try:
    import yaml
except ImportError:  # pragma: no cover - the textual rules of _check_yaml stand alone
    yaml = None  # type: ignore[assignment]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
HOOK_IDS = ("ballot-guard", "ballot-gate")
MANUAL_IDS = ("ballot-split", "ballot-pin", "ballot-unfreeze", "ballot-doctor")

COMMENTS = {
    "properties_dir": "where the properties live: one test_<name>.py per voter",
    "fixtures_dir": "the fixture pack whose bytes are pinned (ballot-guard digest --pin)",
    "agents": "identities (Name <email>, * and ? wildcards) whose changes may not touch the judge",
    "oracle_paths": "more paths that are the judge: the workflow decides whether ci runs",
}


class Refusal(CannotJudge):
    """A file ``init`` cannot edit minimally: what to add to it by hand."""

    def __init__(self, path: str, why: str, snippet: str) -> None:
        super().__init__(f"init: {path}: {why}; nothing was written: add by hand and run "
                         "init again")
        self.path = path
        self.snippet = snippet


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")  # pragma: no cover - keys are ours


def key_lines(keys: Mapping[str, object]) -> list[str]:
    lines = []
    for key, value in keys.items():
        if key in COMMENTS:
            lines.append(f"# {COMMENTS[key]}")
        lines.append(f"{key} = {_toml_value(value)}")
    return lines


def table_text(keys: Mapping[str, object], nl: str = "\n") -> str:
    return nl.join(["[tool.ballot_guard]", *key_lines(keys)]) + nl


def _loads(text: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CannotJudge(f"init: {path}: invalid TOML ({exc}): fix it first") from exc


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CannotJudge(f"init: {path}: not valid UTF-8: fix it first") from exc


_HEADER = re.compile(r"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*ballot_guard[ \t]*\][ \t]*(#.*)?$",
                     re.MULTILINE)


def pyproject_edit(old: bytes | None, keys: Mapping[str, object]) -> bytes | None:
    """The new ``pyproject.toml`` holding ``keys`` in ``[tool.ballot_guard]``; None: no change.

    Keys already set to the same value are kept; a key set to another value, or a table
    that cannot take a key under its header, is a Refusal."""
    if old is None:
        return table_text(keys).encode() if keys else None
    text = _decode(old, PYPROJECT)
    doc = _loads(text, PYPROJECT)
    tool = doc.get("tool", {})
    existing = tool.get("ballot_guard") if isinstance(tool, dict) else None
    nl = _newline(text)
    if existing is None:
        if not keys:
            return None
        sep = "" if not text.strip() else (nl if text.endswith("\n") else nl + nl)
        new = text + sep + table_text(keys, nl)
        want = _with_table(doc, dict(keys))
        return _checked(new, want, table_text(keys), "cannot append the table")
    if not isinstance(existing, dict):
        raise Refusal(PYPROJECT, "tool.ballot_guard is not a table", table_text(keys))
    missing: dict[str, object] = {}
    for key, value in keys.items():
        if key not in existing:
            missing[key] = value
        elif isinstance(value, (list, tuple)):
            absent = [v for v in value if v not in (existing[key] or [])]
            if absent:
                raise Refusal(PYPROJECT, f"[tool.ballot_guard] {key} lacks {absent!r}",
                              f"{key} = {_toml_value([*existing[key], *absent])}\n")
        elif existing[key] != value:
            raise Refusal(PYPROJECT, f"[tool.ballot_guard] already sets {key} = "
                          f"{_toml_value(existing[key])}, not {_toml_value(value)}",
                          f"{key} = {_toml_value(value)}\n")
    if not missing:
        return None
    headers = list(_HEADER.finditer(text))
    lines = nl.join(key_lines(missing)) + nl
    if len(headers) != 1:
        raise Refusal(PYPROJECT, "[tool.ballot_guard] is not written as one [tool.ballot_guard] "
                      "header", lines)
    end = headers[0].end()
    if text.startswith("\r\n", end):
        end += 2
    elif text.startswith("\n", end):
        end += 1
    else:
        lines = nl + lines
    new = text[:end] + lines + text[end:]
    want = _with_table(doc, {**existing, **missing})
    return _checked(new, want, lines, "cannot add keys under [tool.ballot_guard]")


def _with_table(doc: dict[str, Any], table: dict[str, object]) -> dict[str, Any]:
    tool = dict(doc.get("tool", {}))
    tool["ballot_guard"] = {k: list(v) if isinstance(v, tuple) else v for k, v in table.items()}
    return {**doc, "tool": tool}


def _checked(new: str, want: dict[str, Any], snippet: str, why: str) -> bytes:
    try:
        got = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        raise Refusal(PYPROJECT, why, snippet) from None
    if got != want:
        raise Refusal(PYPROJECT, why, snippet)
    return new.encode("utf-8")


# .pre-commit-config.yaml


def hooks_entry(repo: str, rev: str, indent: str = "  ", nl: str = "\n") -> str:
    """The ``repos:`` item of ballot-guard's two hooks, at ``indent``."""
    sub = indent + "  "
    return nl.join([
        f"{indent}- repo: {json.dumps(repo)}",
        f"{sub}rev: {json.dumps(rev)}",
        f"{sub}hooks:",
        f"{sub}  - id: ballot-guard",
        f"{sub}  - id: ballot-gate",
        f"{sub}    verbose: true  # a passing push shows its ballots and seed",
        f"{sub}  # the commands the hints name: pre-commit run ballot-split --hook-stage manual",
        *(f"{sub}  - id: {hook}" for hook in MANUAL_IDS),
    ]) + nl


_ID = re.compile(r"^[ \t-]*id:[ \t]*[\"']?(ballot-guard|ballot-gate)[\"']?[ \t]*(#.*)?$",
                 re.MULTILINE)
_REPOS = re.compile(r"^repos:[ \t]*(#.*)?$")


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def hooks_present(text: str) -> set[str]:
    return {m.group(1) for m in _ID.finditer(text)}


def precommit_edit(old: bytes | None, repo: str, rev: str) -> bytes | None:
    """The new ``.pre-commit-config.yaml`` with both hooks; None: they are there already."""
    if old is None:
        return ("repos:\n" + hooks_entry(repo, rev)).encode()
    text = _decode(old, PRE_COMMIT_CONFIG)
    nl = _newline(text)
    present = hooks_present(text)
    if present == set(HOOK_IDS):
        return None
    snippet = hooks_entry(repo, rev)
    if present:
        missing = next(h for h in HOOK_IDS if h not in present)
        raise Refusal(PRE_COMMIT_CONFIG, f"it has {present.pop()} but not {missing}",
                      f"      - id: {missing}\n")
    lines = text.splitlines(keepends=True)
    heads = [i for i, line in enumerate(lines) if line.startswith("repos:")]
    if len(heads) != 1 or not _REPOS.match(lines[heads[0]].rstrip("\r\n")):
        raise Refusal(PRE_COMMIT_CONFIG, "no block-style top-level `repos:` list to append to",
                      "repos:\n" + snippet)
    if any(line.rstrip("\r\n") in ("---", "...") or line[:_indent(line) + 1].endswith("\t")
           for line in lines):
        raise Refusal(PRE_COMMIT_CONFIG, "several YAML documents or tab indentation",
                      "repos:\n" + snippet)
    head = heads[0]
    body = [i for i in range(head + 1, len(lines)) if _content(lines[i])]
    first = body[0] if body else None
    if first is None or not lines[first].lstrip(" ").startswith("- ") or (
            _indent(lines[first]) == 0 and not lines[first].startswith("- ")):
        items_indent, last = 2, head  # `repos:` with no item yet
    else:
        items_indent, last = _indent(lines[first]), first
        for i in body[1:]:
            ind = _indent(lines[i])
            if ind < items_indent or (ind == items_indent
                                      and not lines[i].lstrip(" ").startswith("-")):
                break
            last = i
    entry = hooks_entry(repo, rev, " " * items_indent, nl)
    before = "".join(lines[:last + 1])
    if not before.endswith(("\n", "\r")):
        before += nl
    new = before + entry + "".join(lines[last + 1:])
    _check_yaml(text, new, repo, rev, snippet)
    return new.encode("utf-8")


def _check_yaml(old: str, new: str, repo: str, rev: str, snippet: str) -> None:
    """Where PyYAML is importable: the new file is the old one with one more repo."""
    if yaml is None:  # pragma: no cover - the textual rules above stand alone
        return
    try:
        before = yaml.safe_load(old)
        after = yaml.safe_load(new)
    except yaml.YAMLError:
        raise Refusal(PRE_COMMIT_CONFIG, "not YAML that can be read", snippet) from None
    repos = before.get("repos") if isinstance(before, dict) else None
    want = dict(before) if isinstance(before, dict) else {}
    entry = {"repo": repo, "rev": rev, "hooks": [
        {"id": "ballot-guard"}, {"id": "ballot-gate", "verbose": True},
        *({"id": hook} for hook in MANUAL_IDS)]}
    want["repos"] = [*(repos if isinstance(repos, list) else []), entry]
    if (repos is not None and not isinstance(repos, list)) or after != want:
        raise Refusal(PRE_COMMIT_CONFIG, "cannot append to its `repos:` list", snippet)

