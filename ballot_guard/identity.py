"""Who made a change: agent patterns and the identity git would commit with.

``agents`` patterns match ``Name <email>`` case-insensitively and in full;
only ``*`` (any run of characters) and ``?`` (one character) are wildcards,
everything else is literal, so ``*[bot]*`` matches GitHub's bot accounts
rather than any name containing a b, o or t (``fnmatch`` would treat
``[bot]`` as a character class).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ballot_guard import git

_SPACES = re.compile(r"\s+")
_AROUND = re.compile(r" ?([<>]) ?")


def _fold(text: str) -> str:
    """The compared form of a pattern or an identity: NFC, case-folded, every run of
    white space one space and none around ``<`` ``>``, so that ``Bot  <b@x>`` or
    ``Bot<b@x>`` cannot slip past a pattern written ``Bot <b@x>``."""
    text = _SPACES.sub(" ", unicodedata.normalize("NFC", text).casefold().strip())
    return _AROUND.sub(r"\1", text)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    parts = []
    for ch in _fold(pattern):
        if ch == "*":
            parts.append(".*")
        elif ch == "?":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def matches(pattern: str, identity: str) -> bool:
    """Whether one ``agents`` pattern matches one ``Name <email>`` identity, in full."""
    return compile_pattern(pattern).fullmatch(_fold(identity.strip())) is not None


def any_agent(patterns: Iterable[str], identities: Iterable[str]) -> bool:
    compiled = [compile_pattern(p) for p in patterns]
    if not compiled:
        return False
    return any(c.fullmatch(_fold(i.strip())) is not None for c in compiled for i in identities)


def _strip_ident(value: str) -> str:
    end = value.rfind(">")
    return value[: end + 1].strip() if end >= 0 else value.strip()


def committing_identities(root: str) -> tuple[str, ...]:
    """The author and committer git would commit with now (``git var``), when known."""
    found = []
    for var in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        res = git.run(["var", var], cwd=root, check=False)
        if res.code == 0 and res.stdout.strip():
            found.append(_strip_ident(res.stdout.decode("utf-8", "replace")))
    return tuple(found)
