"""Text from the change, made inert for GitHub's Markdown (the step summary).

A property name, a path, a commit subject or a message that quotes one comes
from the change, and the summary is rendered as GitHub Flavored Markdown: a
``|`` would split a table cell, a newline would end the row (and the next line
could be a forged row, a heading, a list), a backtick or ``[x](y)`` would start
a code span or a link, ``<`` raw HTML.  So nothing from the change is written
as it is:

- ``text`` is running text: every ASCII punctuation character is
  backslash-escaped (CommonMark lets any of them be, so none starts markup and
  ``\\|`` keeps a table cell whole), control and line-separator characters are
  written as ``\\n``, ``\\uXXXX`` (``ballot_guard.ci.log.neutral``), so one value is one line;
- ``code`` is a literal (names, paths): a code span whose fence is longer than
  any backtick run inside, with ``|`` escaped, which a GFM table removes
  before the span is read, and control characters escaped as in ``text``.
"""
from __future__ import annotations

import re
import string

from ballot_guard.ci.log import neutral

_PUNCT = frozenset(string.punctuation)
_SPACES = re.compile(r"[\t\n\r\f\v\x85\u2028\u2029]")


def _one_line(value: object) -> str:
    # neutral escapes control and separator characters; a lone separator it leaves
    # (none: it escapes them all) would still be caught here
    return _SPACES.sub(" ", neutral(str(value)))


def text(value: object) -> str:
    """``value`` as inline Markdown that renders as exactly its characters, on one line."""
    return "".join("\\" + c if c in _PUNCT else c for c in _one_line(value))


def code(value: object, *, table: bool = True) -> str:
    """``value`` as a code span that holds it whatever backticks it contains; in a table
    cell (``table``) its ``|`` are escaped, which the table reads before the span."""
    body = _one_line(value)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    # a span that starts or ends with a backtick or a space is padded (CommonMark strips
    # one space from each side when both have one), and an empty one would be no span
    pad = " " if body[:1] in ("`", " ", "") or body[-1:] in ("`", " ") else ""
    if table:
        body = body.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"
