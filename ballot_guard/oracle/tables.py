"""Files judged by table: ``pyproject.toml``, ``setup.cfg``, ``tox.ini``.

Only their judge tables (``[tool.ballot_guard]``, ``[tool.pytest]``,
``[tool.pytest.ini_options]``, ``[tool:pytest]``, ``[pytest]``) are oracle; a
change to any other table is behaviour.  Both sides are parsed and their data
compared, not their lines: an edit that changes no data (comments, blank
lines, layout) is neutral.  A missing side is an empty document.  If either
side does not parse, the whole file is oracle (fail closed).
"""
from __future__ import annotations

import math
import posixpath
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TABLE_FILES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
JUDGE_TOOL_KEYS = frozenset({"ballot_guard", "pytest"})  # [tool.X] in TOML (incl. ini_options)
JUDGE_SECTIONS = frozenset({"tool:pytest", "pytest", "tool.ballot_guard", "tool.pytest",
                            "tool.pytest.ini_options"})

ORACLE, BEHAVIOR, NEUTRAL, BOTH = "oracle", "behavior", "neutral", "both"


class Unparseable(ValueError):
    pass


def _split_toml(data: bytes) -> tuple[Any, Any]:
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise Unparseable(str(exc)) from exc
    except RecursionError:
        raise Unparseable("nested too deeply") from None
    judge: dict[str, Any] = {}
    tool = doc.get("tool")
    if isinstance(tool, dict):
        for key in list(tool):
            if key in JUDGE_TOOL_KEYS:  # TOML keys are case-sensitive, and so are readers
                judge[key] = tool.pop(key)
        if not tool:  # only judge tables under [tool]: nothing else is there
            del doc["tool"]
    return judge, doc


def _split_ini(data: bytes) -> tuple[Any, Any]:
    import configparser  # noqa: PLC0415 - lazy: rare branch: configparser (1.1 ms) only for a changed setup.cfg or tox.ini

    parser = configparser.RawConfigParser(interpolation=None, strict=True,
                                          default_section="\0no default section",
                                          comment_prefixes=("#", ";"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        text = data.decode("utf-8")
        # Read the lines pytest's ini reader (iniconfig) reads: it drops a BOM and splits
        # with str.splitlines, so a lone CR, a form feed or U+2028 ends a line there; left
        # to configparser (which splits on "\n" only) they would hide a [tool:pytest]
        # section inside another section's value.
        parser.read_string("\n".join(text.removeprefix("\ufeff").splitlines()))
    except (UnicodeDecodeError, configparser.Error) as exc:
        raise Unparseable(str(exc)) from exc
    judge: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for section in parser.sections():
        body = dict(parser.items(section, raw=True))
        (judge if _ini_section_name(section) in JUDGE_SECTIONS  # as iniconfig: exact case
         else other)[section] = body
    return judge, other


def _ini_section_name(header: str) -> str:
    """The section name pytest's reader (iniconfig) gives the header configparser read as
    ``header`` (the text between the line's first ``[`` and its last ``]``): iniconfig cuts
    the line at ``#`` and ``;`` first, so ``[tool:pytest] # [x]`` is ``tool:pytest`` there
    while configparser names it ``tool:pytest] # [x``."""
    line = f"[{header}]"
    for c in "#;":
        line = line.split(c, maxsplit=1)[0].rstrip()
    name = line[1:-1] if line.endswith("]") else header
    return name.strip()


def split(name: str, data: bytes | None) -> tuple[Any, Any]:
    """(judge tables, everything else) of one side; None (missing) is an empty document."""
    if data is None:
        return {}, {}
    base = posixpath.basename(name).casefold()
    if base == "pyproject.toml":
        return _split_toml(data)
    return _split_ini(data)


def _canon(value: Any) -> Any:
    """Parsed data made comparable: NaN equals NaN (TOML allows ``nan``)."""
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canon(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return value


def is_table_file(path: str) -> bool:
    return posixpath.basename(path).casefold() in TABLE_FILES


def judge(name: str, old: bytes | None, new: bytes | None) -> str:
    """ORACLE, BEHAVIOR, BOTH or NEUTRAL for one table file's change."""
    try:
        old_judge, old_other = split(name, old)
        new_judge, new_other = split(name, new)
    except Unparseable:
        return ORACLE
    judge_changed = _canon(old_judge) != _canon(new_judge)
    other_changed = _canon(old_other) != _canon(new_other)
    if judge_changed and other_changed:
        return BOTH
    if judge_changed:
        return ORACLE
    if other_changed:
        return BEHAVIOR
    return NEUTRAL
