"""gitignore-style patterns (``oracle_paths``, ``neutral_paths``) compiled to one regex.

The semantics are git's (and ``pathspec``'s ``GitIgnoreSpec``, which the tests
compare against): a pattern without a slash matches at any depth, one with a
leading or inner slash is anchored at the root, a trailing slash matches only
directories (so every file under them), ``*`` and ``?`` never match ``/``,
``**`` spans directories, ``[...]`` is a character class, ``\\`` escapes,
``!`` re-includes and the last matching pattern wins.  A pattern matching a
directory matches every path under it.

Patterns without ``!`` (the defaults, and most configs) go through our own
small translator, because the commit-time hook runs it on every commit: it
imports nothing heavy (``pathspec`` costs 10-30 ms to import) and folds all
patterns into one regular expression, so a 20,000-path change is matched in
one pass; the tests hold it to ``pathspec``'s answers.  A set with a ``!``
re-include is handed to ``pathspec.GitIgnoreSpec`` whole: the order rules of
re-inclusion are the corner cases we do not re-learn.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any


def _class(seg: str, i: int) -> tuple[str, int] | None:
    """Translate the character class starting at seg[i] == '['; None if unterminated."""
    j = i + 1
    negate = j < len(seg) and seg[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < len(seg):
        c = seg[j]
        if c == "]" and not first:
            inner = "".join(body)
            return (f"(?!/)[{'^' if negate else ''}{inner}]", j + 1)
        if c == "\\" and j + 1 < len(seg):
            body.append(re.escape(seg[j + 1]))
            j += 2
        else:
            body.append("\\" + c if c in "\\]^[" else c)
            j += 1
        first = False
    return None


def _segment(seg: str) -> str:
    out = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            while i < len(seg) and seg[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            cls = _class(seg, i)
            if cls is not None:
                out.append(cls[0])
                i = cls[1]
                continue
            return "(?!)"  # an unterminated class matches nothing (git's wildmatch aborts)
        elif c == "\\" and i + 1 < len(seg):
            out.append(re.escape(seg[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _strip_trailing_spaces(pat: str) -> str:
    while pat.endswith(" ") and not pat.endswith("\\ "):
        pat = pat[:-1]
    return pat


def translate(pattern: str) -> tuple[str, bool, bool] | None:
    """(regex of exactly the paths it names, negated, dir_only) for one line; None: no-op."""
    pat = pattern.rstrip("\n\r")
    if not pat or pat.startswith("#"):
        return None
    negated = pat.startswith("!")
    if negated:
        pat = pat[1:]
    pat = _strip_trailing_spaces(pat)
    if pat.startswith("\\") and pat[1:2] in ("!", "#"):
        pat = pat[1:]
    dir_only = pat.endswith("/")
    pat = pat.rstrip("/")
    if not pat:
        return None
    anchored = "/" in pat
    pat = pat.lstrip("/") if anchored else pat
    if not pat:
        return None
    segs: list[str] = []
    for seg in pat.split("/"):  # a/**/**/b is a/**/b
        if not (seg == "**" and segs and segs[-1] == "**"):
            segs.append(seg)
    rx = "" if anchored else "(?:.*/)?"
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == "**":
            if i == 0 and last:
                rx += ".*"
            elif i == 0:
                rx += "(?:.*/)?"
            elif last:
                rx += "/.*"
            else:
                rx += "(?:/.*)?/"
            continue
        if i > 0 and segs[i - 1] != "**":
            rx += "/"
        rx += _segment(seg)
    if segs[-1] == "**" and len(segs) > 1:  # foo/**/ is foo/**
        dir_only = False
    return rx, negated, dir_only


class PatternSet:
    """Compiled gitignore-style patterns: ``match(path)`` for a file path.

    Without ``!`` patterns (the common case, and the defaults) every pattern
    is folded into one regex that also matches descendants.  With them, the
    order rules of re-inclusion are ``pathspec``'s ``GitIgnoreSpec``, used
    as it is: those corner cases are not ours to re-learn.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        lines = list(patterns)
        compiled = [t for t in (translate(p) for p in lines) if t is not None]
        self._any = bool(compiled)
        self._one: re.Pattern[str] | None = None
        self._spec: Any = None
        if compiled and not any(neg for _, neg, _ in compiled):
            self._one = re.compile("|".join(
                f"(?:{rx}{'/.*' if dir_only else '(?:/.*)?'})" for rx, _, dir_only in compiled),
                re.DOTALL)
        elif compiled:
            import pathspec  # noqa: PLC0415 - lazy: rare branch: pathspec (17 ms) only for patterns that re-include with !

            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def __bool__(self) -> bool:
        return self._any

    def matcher(self) -> Callable[[str], object]:
        """``match`` as the fastest callable there is (its result is only truthy or not):
        the compiled regex's own ``fullmatch`` when there is one."""
        if self._one is not None:
            return self._one.fullmatch
        return self.match

    def match(self, path: str) -> bool:
        if self._one is not None:
            return self._one.fullmatch(path) is not None
        return self._spec is not None and bool(self._spec.match_file(path))
