"""How GitHub's runner reads a step's log, written apart from the code under test.

The runner (actions/runner, ``ActionCommandManager``) reads stdout and stderr
line by line (.NET ``StreamReader.ReadLine``: a line ends at ``\\n``, ``\\r`` or
``\\r\\n``) and acts on a line that, after ``TrimStart()`` (.NET white space),
starts with ``::`` and holds a second ``::`` (``::name args::value``), or on one
that holds ``##[`` anywhere (the older syntax).
"""
from __future__ import annotations

import re
from typing import NamedTuple

# .NET char.IsWhiteSpace
DOTNET_SPACE = ("\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
                + "\u2028\u2029\u202f\u205f\u3000")


class Command(NamedTuple):
    name: str
    props: dict[str, str]
    value: str


def runner_lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


def command(line: str) -> Command | None:
    """The workflow command the runner reads in ``line``, or None."""
    s = line.lstrip(DOTNET_SPACE)
    if s.startswith("::"):
        end = s.find("::", 2)
        if end >= 0:
            head, value = s[2:end], s[end + 2:]
            name, _, args = head.partition(" ")
            props = dict(p.partition("=")[::2] for p in args.split(",") if p)
            return Command(name, props, value)
    if "##[" in line:
        return Command("##[", {}, line)
    return None


def commands(text: str) -> list[Command]:
    return [c for c in map(command, runner_lines(text)) if c is not None]


def unescape_property(text: str) -> str:
    for esc, raw in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(esc, raw)
    return text
