"""``[tool.ballot_guard]`` in ``pyproject.toml``: defaults and validation.

Config is validated where it is loaded, so a bad key is one line naming it.
A change is judged by the config of its base (HEAD's, or the first parent's),
never its own: ``load_at`` reads the file from a revision.
"""
from __future__ import annotations

import posixpath
import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from ballot_guard.change.identity import unmatchable
from ballot_guard.errors import CannotJudge
from ballot_guard.git import Snapshot

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
DEFAULT_NEUTRAL = ("*.md", "*.rst", "docs/**", "/LICENSE*", "/CHANGELOG*")
TABLE = "ballot_guard"
MAX_REPEATS = 1000
MAX_TIMEOUT = 86400.0  # a day
MAX_REVIEW_DAYS = 3650
SandboxMode = Literal["auto", "required", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")


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
    sandbox: SandboxMode = "auto"
    network: bool = False

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


def _int(key: str, value: Any, source: str, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(key, f"must be an integer, got {value!r}", source)
    if value < minimum:
        raise _fail(key, f"must be at least {minimum}, got {value}", source)
    if value > maximum:
        raise _fail(key, f"must be at most {maximum}, got {_short(value)}", source)
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} digits)"


def _timeout(value: Any, source: str) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if not ok or value != value or not value > 0:  # NaN is not a number of seconds
        raise _fail("timeout", f"must be a positive number of seconds, got {_short(value)}",
                    source)
    if value > MAX_TIMEOUT:
        raise _fail("timeout", f"must be at most {MAX_TIMEOUT:.0f} seconds (a day), got "
                    f"{_short(value)}", source)
    return float(value)


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
        import difflib  # noqa: PLC0415 - lazy: rare branch: difflib (0.75 ms) only for the message naming an unknown key

        near = difflib.get_close_matches(unknown[0], sorted(KEYS), n=1, cutoff=0.6) or \
            difflib.get_close_matches(unknown[0].lower().replace("-", "_"), sorted(KEYS), n=1,
                                      cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise _fail(unknown[0], f"unknown key{hint}", source)
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
        kw["repeats"] = _int("repeats", table["repeats"], source, 2, MAX_REPEATS)
    if "repeats_for" in table:
        rf = table["repeats_for"]
        if not isinstance(rf, dict):
            raise _fail("repeats_for", "must be a table of name = integer", source)
        kw["repeats_for"] = {
            _name("repeats_for", k, source): _int(f"repeats_for.{k}", v, source, 2, MAX_REPEATS)
            for k, v in rf.items()
        }
        if "properties" in kw:
            for k in kw["repeats_for"]:
                if k not in kw["properties"]:
                    raise _fail(f"repeats_for.{k}", f"names no voter: {k!r} is not in "
                                "properties", source)
    if "timeout" in table:
        kw["timeout"] = _timeout(table["timeout"], source)
    if "python" in table:
        py = table["python"]
        if not isinstance(py, str) or not py.strip():
            raise _fail("python", "must be a non-empty string", source)
        kw["python"] = py
    for key in ("oracle_paths", "neutral_paths", "agents"):
        if key in table:
            kw[key] = _str_list(key, table[key], source)
    if "agents" in kw:
        for pattern in kw["agents"]:
            suggestion = unmatchable(pattern)
            if suggestion is not None:
                raise _fail("agents", f"{pattern!r} can match no 'Name <email>' identity; "
                            f"did you mean {suggestion!r}?", source)
    if "review_days" in table:
        kw["review_days"] = _int("review_days", table["review_days"], source, 1,
                                 MAX_REVIEW_DAYS)
    if "sandbox" in table:
        mode = table["sandbox"]
        if not isinstance(mode, str) or mode not in SANDBOX_MODES:
            raise _fail("sandbox", f"must be one of {', '.join(map(repr, SANDBOX_MODES))}, "
                        f"got {_short(mode)}", source)
        kw["sandbox"] = mode
    if "network" in table:
        if not isinstance(table["network"], bool):
            raise _fail("network", f"must be true or false, got {_short(table['network'])}",
                        source)
        kw["network"] = table["network"]
    return Config(**kw)


def _squash(key: str) -> str:
    return "".join(c for c in key.casefold() if c.isalnum())


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
        if min(row) > limit:
            return limit + 1
    return row[-1]


def _tables(doc: dict[str, Any], depth: int = 3) -> list[tuple[str, ...]]:
    """The dotted names of every table of ``doc`` down to ``depth`` levels."""
    found: list[tuple[str, ...]] = []
    stack: list[tuple[tuple[str, ...], dict[str, Any]]] = [((), doc)]
    while stack:
        path, table = stack.pop()
        for key, value in table.items():
            if isinstance(value, dict):
                found.append((*path, key))
                if len(path) + 1 < depth:
                    stack.append(((*path, key), value))
    return found


def near_miss(doc: dict[str, Any]) -> str | None:
    """A table that looks meant for ballot-guard but that it would not read
    (``[tool.ballot-guard]``, ``[tool.BallotGuard]``, ``[tool.ballot.guard]``,
    ``[ballot_guard]``, ``[tool.balot_guard]``), as written; None when there is none."""
    want = _squash(TABLE)
    for path in sorted(_tables(doc)):
        if path[:2] == ("tool", TABLE):
            continue
        rest = path[1:] if _squash(path[0]) in ("tool", "tools") else path
        name = "".join(_squash(p) for p in rest)
        if name and _distance(name, want, 2) <= 2:
            return "[" + ".".join(path) + "]"
    return None


def parse_pyproject(data: bytes | None, source: str = PYPROJECT) -> Config:
    """Config from the bytes of a pyproject.toml (None: no file, defaults)."""
    if data is None:
        return Config()
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not valid UTF-8 ({exc.reason})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{source}: invalid TOML: nested too deeply") from None
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{source}: [tool] must be a table")
    miss = near_miss(doc)
    if miss is not None:
        raise ConfigError(f"{source}: {miss} is not read by ballot-guard: its table is "
                          f"[tool.{TABLE}]; rename it")
    return parse_table(tool.get(TABLE), source)


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

    data = Snapshot(root, rev).read(PYPROJECT)
    return parse_pyproject(data, f"{PYPROJECT} at {rev[:12]}")
