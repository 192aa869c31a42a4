"""``[tool.ballot_guard]`` in ``pyproject.toml``: defaults and validation.

Config is validated where it is loaded, so a bad key is one line naming it.
A change is judged by the config of its base (HEAD's, or the first parent's),
never its own: ``load_at`` reads the file from a revision.
"""
from __future__ import annotations

import posixpath
import sys
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from ballot_guard.errors import CannotJudge

PYPROJECT = "pyproject.toml"
DEFAULT_NEUTRAL = ("*.md", "*.rst", "docs/**", "LICENSE*", "CHANGELOG*")


class ConfigError(CannotJudge):
    """The configuration is unreadable or invalid."""


class Config(NamedTuple):
    properties_dir: str = "properties"
    fixtures_dir: str = "fixtures"
    digest_file: str = "fixture_digest.txt"
    freeze_file: str = "freeze_set.json"
    properties: tuple[str, ...] | None = None  # None: every test_*.py in properties_dir
    repeats: int = 2
    repeats_for: Mapping[str, int] = MappingProxyType({})
    timeout: float = 300.0
    python: str | None = None
    oracle_paths: tuple[str, ...] = ()
    neutral_paths: tuple[str, ...] = DEFAULT_NEUTRAL
    agents: tuple[str, ...] = ()
    review_days: int = 7

    def repeats_of(self, name: str) -> int:
        return self.repeats_for.get(name, self.repeats)


KEYS = frozenset(Config._fields)


def _fail(key: str, why: str, source: str) -> ConfigError:
    return ConfigError(f"{source}: [tool.ballot_guard] {key}: {why}")


def _repo_path(key: str, value: Any, source: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, "must be a non-empty string path", source)
    if "\0" in value or "\\" in value:
        raise _fail(key, f"invalid path {value!r}", source)
    if value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        raise _fail(key, f"must be relative to the repository root, got {value!r}", source)
    norm = posixpath.normpath(value)
    if norm == ".." or norm.startswith("../"):
        raise _fail(key, f"escapes the repository: {value!r}", source)
    if norm == "." or norm == ".git" or norm.startswith(".git/"):
        raise _fail(key, f"cannot be the repository root or .git: {value!r}", source)
    return norm


def _int(key: str, value: Any, source: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(key, f"must be an integer, got {value!r}", source)
    if value < minimum:
        raise _fail(key, f"must be at least {minimum}, got {value}", source)
    return value


def _str_list(key: str, value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(key, "must be a list of non-empty strings", source)
    return tuple(value)


def _name(key: str, value: Any, source: str) -> str:
    if not isinstance(value, str) or not value or not value.replace("_", "a").isalnum() \
            or not value.isascii():
        raise _fail(key, f"not a property name (letters, digits, underscore): {value!r}", source)
    return value


def parse_table(table: Any, source: str = PYPROJECT) -> Config:
    """Validate a ``[tool.ballot_guard]`` table (already parsed) into a Config."""
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.ballot_guard] must be a table")
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise _fail(unknown[0], "unknown key", source)
    kw: dict[str, Any] = {}
    for key in ("properties_dir", "fixtures_dir", "digest_file", "freeze_file"):
        if key in table:
            kw[key] = _repo_path(key, table[key], source)
    if "properties" in table:
        names = _str_list("properties", table["properties"], source)
        kw["properties"] = tuple(_name("properties", n, source) for n in names)
        if len(set(kw["properties"])) != len(kw["properties"]):
            raise _fail("properties", "lists a name twice", source)
    if "repeats" in table:
        kw["repeats"] = _int("repeats", table["repeats"], source, 2)
    if "repeats_for" in table:
        rf = table["repeats_for"]
        if not isinstance(rf, dict):
            raise _fail("repeats_for", "must be a table of name = integer", source)
        kw["repeats_for"] = {
            _name("repeats_for", k, source): _int(f"repeats_for.{k}", v, source, 2)
            for k, v in rf.items()
        }
    if "timeout" in table:
        t = table["timeout"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0 or t != t \
                or t == float("inf"):
            raise _fail("timeout", f"must be a positive number of seconds, got {t!r}", source)
        kw["timeout"] = float(t)
    if "python" in table:
        py = table["python"]
        if not isinstance(py, str) or not py.strip():
            raise _fail("python", "must be a non-empty string", source)
        kw["python"] = py
    for key in ("oracle_paths", "neutral_paths", "agents"):
        if key in table:
            kw[key] = _str_list(key, table[key], source)
    if "review_days" in table:
        kw["review_days"] = _int("review_days", table["review_days"], source, 1)
    return Config(**kw)


def parse_pyproject(data: bytes | None, source: str = PYPROJECT) -> Config:
    """Config from the bytes of a pyproject.toml (None: no file, defaults)."""
    if data is None:
        return Config()
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not valid UTF-8 ({exc.reason})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{source}: [tool] must be a table")
    return parse_table(tool.get("ballot_guard"), source)


def load_worktree(root: str) -> Config:
    """Config of the working tree's pyproject.toml."""
    path = posixpath.join(root, PYPROJECT)
    try:
        with open(path, "rb") as f:
            data: bytes | None = f.read()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise ConfigError(f"{PYPROJECT}: cannot read: {exc.strerror}") from exc
    return parse_pyproject(data, PYPROJECT)


def load_at(root: str, rev: str | None) -> Config:
    """Config as committed at ``rev`` (None: no commit yet, defaults)."""
    if rev is None:
        return Config()
    from ballot_guard.git import Snapshot

    data = Snapshot(root, rev).read(PYPROJECT)
    return parse_pyproject(data, f"{PYPROJECT} at {rev[:12]}")
