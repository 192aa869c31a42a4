"""Who made a change: agent patterns and the identity git would commit with.

``agents`` patterns match ``Name <email>`` case-insensitively and in full;
only ``*`` (any run of characters) and ``?`` (one character) are wildcards,
everything else is literal, so ``*[bot]*`` matches GitHub's bot accounts
rather than any name containing a b, o or t (``fnmatch`` would treat
``[bot]`` as a character class).

Patterns and identities are compared in one folded form (``fold``): NFC,
case-folded, every run of white space one space, none around ``<`` and ``>``.
A space the pattern keeps (one not next to ``<`` or ``>`` as written) also
stands where a ``<`` or ``>`` begins or ends, so ``Coding Agent *`` matches
``Coding Agent <a@x.example>``, whose folded form is ``coding agent<a@x.example>``:
white space around the brackets never counts, on either side.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

from ballot_guard import git

_SPACES = re.compile(r"\s+")
_AROUND = re.compile(r" ?([<>]) ?")
# A pattern's space: a space, or nothing where the identity has a bracket beside it
# (the folded identity has no space there).
_SPACE = r"(?: |(?=[<>])|(?<=[<>]))"


def _fold_once(text: str) -> str:
    text = _SPACES.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()
    return _AROUND.sub(r"\1", text)


def fold(text: str) -> str:
    """The compared form of a pattern or an identity: NFC, case-folded, every run of
    white space one space and none around ``<`` ``>``, so that ``Bot  <b@x>`` or
    ``Bot<b@x>`` cannot slip past a pattern written ``Bot <b@x>``.  Applied until it
    holds still (a case fold can leave a string that is not NFC), so that folding a
    folded text changes nothing."""
    for _ in range(4):
        folded = _fold_once(text)
        if folded == text:
            break
        text = folded
    return text


def compile_pattern(pattern: str) -> re.Pattern[str]:
    parts = []
    for ch in fold(pattern):
        if ch == "*":
            parts.append(".*")
        elif ch == "?":
            parts.append(".")
        elif ch == " ":
            parts.append(_SPACE)
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


class AgentMatch(NamedTuple):
    identity: str  # as the change carries it
    pattern: str  # as configured


def agent_match(patterns: Iterable[str], identities: Iterable[str]) -> AgentMatch | None:
    """The first identity (in the order given) that an ``agents`` pattern matches in
    full, with the first such pattern; None when no identity is an agent."""
    compiled = [(p, compile_pattern(p)) for p in patterns]
    if not compiled:
        return None
    for who in identities:
        folded = fold(who)
        for pattern, rx in compiled:
            if rx.fullmatch(folded) is not None:
                return AgentMatch(who, pattern)
    return None


def matches(pattern: str, identity: str) -> bool:
    """Whether one ``agents`` pattern matches one ``Name <email>`` identity, in full."""
    return agent_match((pattern,), (identity,)) is not None


def any_agent(patterns: Iterable[str], identities: Iterable[str]) -> bool:
    return agent_match(patterns, identities) is not None


# Where a folded ``Name <email>`` identity is: 0 in the name, 1 in the email, 2 after ``>``.
_STEP = {("<", 0): 1, ("o", 0): 0, ("o", 1): 1, (">", 1): 2}
_ANY = {0: {0, 1, 2}, 1: {1, 2}, 2: {2}}  # where a ``*`` can lead


def _can_match_identity(folded: str) -> bool:
    """Whether the folded pattern matches some ``name<email>`` (no bracket in either)."""
    states = {0}
    for ch in folded:
        if ch == "*":
            states = {t for s in states for t in _ANY[s]}
        elif ch == "?":
            states = {_STEP[c, s] for s in states for c in "<>o" if (c, s) in _STEP}
        elif ch == " ":  # a space, or nothing beside a bracket
            states |= {_STEP["o", s] for s in states if ("o", s) in _STEP}
        else:
            c = ch if ch in "<>" else "o"
            states = {_STEP[c, s] for s in states if (c, s) in _STEP}
        if not states:
            return False
    return 2 in states


def unmatchable(pattern: str) -> str | None:
    """None when ``pattern`` can match some ``Name <email>`` identity; else the pattern
    to suggest instead (``Coding Agent`` -> ``Coding Agent <*>``)."""
    if _can_match_identity(fold(pattern)):
        return None
    text = pattern.strip()
    if not fold(text).strip("*? "):
        return "Name <*>"
    if "<" in text:
        name, _, email = text.partition("<")
        email = email.split(">", 1)[0].strip()
        guess = f"{name.strip()} <{email or '*'}>".strip()
    else:
        guess = f"{text} <*>"
    return guess if _can_match_identity(fold(guess)) else "Name <*>"


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


def login_identities(login: str) -> tuple[str, ...]:
    """What an account name with no email (``ci --actor``, a GitHub login) is matched
    against ``agents`` as: the name as given (``*[bot]*`` matches ``dependabot[bot]``)
    and the name with an empty email (``Name <*>`` matches ``Name <>``).  A pattern
    that needs a particular email cannot match an account that shows none."""
    return (login, f"{login} <>")
