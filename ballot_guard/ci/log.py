"""What reaches a CI log: text, never a workflow command the change wrote.

GitHub's runner reads every line a step prints, on stdout and stderr alike, and
acts on two shapes: ``::name args::value`` once leading white space is trimmed,
and the older ``##[name ...]value`` anywhere in a line; it splits lines at
``\\n`` and at a lone ``\\r``.  Path names, commit messages, a property's output
all come from the change, and a file named ``::stop-commands::x`` would make
the runner ignore every later annotation, ``::add-mask::BLOCKED`` would hide a
word from the log.

So under GitHub Actions (``GITHUB_ACTIONS=true``) every command prints through
``guard``: each line written to ``sys.stdout`` or ``sys.stderr`` has its control
and format characters escaped (``\\n``, ``\\r``, ``\\t``, ``\\uXXXX``: the notation
JSON reads back, so ``--json`` output stays the same data), a leading ``::``
written ``\\u003a:``, and every ``##[`` written ``#\\u0023[``.  Only
``command`` writes a line as it is, and only a one-line ``::`` command built by
``ballot_guard.ci.annotations`` (whose values are escaped by GitHub's own rules).
"""
from __future__ import annotations

import contextlib
import io
import sys
import unicodedata
from collections.abc import Iterator, Mapping
from typing import IO

_ESCAPE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code > 0xFFFF:  # a surrogate pair, as JSON writes it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def neutral(text: str) -> str:
    """``text`` as one log line that no runner reads as a command (see the module doc)."""
    if not text.isprintable() or "##" in text:
        text = "".join(_escape(c) if not c.isprintable() and (
            c != " " and unicodedata.category(c) in _ESCAPE_CATEGORIES) else c
            for c in text)
        text = text.replace("##[", "#\\u0023[").replace("##vso[", "#\\u0023vso[")
    rest = text.lstrip()
    if rest.startswith("::"):
        at = len(text) - len(rest)
        text = text[:at] + "\\u003a" + text[at + 1:]
    return text


class Guarded(io.TextIOBase):
    """A text stream that writes whole lines, each one ``neutral``, to ``raw``."""

    neutralises = True  # output.use_color: no colour codes through here

    def __init__(self, raw: IO[str]) -> None:
        super().__init__()
        self.raw = raw
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        text = self._pending + s
        *lines, self._pending = text.split("\n")
        if lines:
            self.raw.write("".join(neutral(line) + "\n" for line in lines))
        return len(s)

    def end_line(self) -> None:
        """Write out a partial line (before a raw command, or at the end)."""
        if self._pending:
            self.raw.write(neutral(self._pending) + "\n")
            self._pending = ""

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8") or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)

    def fileno(self) -> int:
        return self.raw.fileno()


def active(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


@contextlib.contextmanager
def guard(environ: Mapping[str, str]) -> Iterator[None]:
    """Under GitHub Actions, route ``sys.stdout`` and ``sys.stderr`` through ``Guarded``."""
    if not active(environ) or isinstance(sys.stdout, Guarded):
        yield
        return
    out, err = sys.stdout, sys.stderr
    g_out, g_err = Guarded(out), Guarded(err)
    sys.stdout, sys.stderr = g_out, g_err
    try:
        yield
    finally:
        for g in (g_out, g_err):
            try:
                g.end_line()
                g.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = out, err


def command(line: str) -> None:
    """Print one workflow command as it is (an ``annotations`` line: escaped values)."""
    if not line.startswith("::") or "\n" in line or "\r" in line:
        raise ValueError(f"not a one-line workflow command: {line!r}")
    stream = sys.stdout
    if isinstance(stream, Guarded):
        stream.end_line()
        stream = stream.raw
    stream.write(line + "\n")
    stream.flush()
