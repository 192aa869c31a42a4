"""Scope rule 5: added behaviour code that reaches into the judge at run time.

The lines a change adds to behaviour ``.py`` files are read as one unified diff
(``git diff-index --cached -p -U0`` for a staged change, ``git diff-tree -p -U0``
for a commit, the patch itself for a patch file).  A quick scan first: a new file
whose text holds none of the characters and words a finding needs cannot hold a
finding (one ``git grep`` for a staged change or a commit, one regular-expression
pass over a patch's added lines), so a change adding plain new files reads none.  Otherwise
the diff is read with ``unidiff`` and every file is parsed whole with ``ast``
(``ballot_guard.scope.tamper``:
the new file from the index or the commit; for a patch, HEAD's file with the
hunks applied, or the hunks alone when they do not fit), and findings on added
lines count.  An agent change is blocked; for a human change every finding is
printed as a warning and the verdict is unchanged.
"""
from __future__ import annotations

import io
import os
import re
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from ballot_guard import git
from ballot_guard.change import identity
from ballot_guard.output import warn
from ballot_guard.scope.verdict import Reason, ScopeRule

if TYPE_CHECKING:
    from ballot_guard.scope.tamper import Finding
    from ballot_guard.scope.verdict import ScopeContext

_SHOWN = 20
# Every finding in a NEW file needs, on an added line, one of these characters (an
# attribute, a subscript, an assignment, a string, a dunder, a decorator) or words: a
# builtin the analysis flags when called by name (``exec(s)``), or ``import`` (an alias
# of a module is bound by one).
_SPECIALS = b".=[\"'/\\@_"
_WORDS = (b"import", b"exec", b"eval", b"compile")
# The first scan's patterns, compiled on first use (re's cache): the commit-time path,
# which imports this module, never scans a patch.
# An added line (not "+++ ") that holds one of _SPECIALS or _WORDS, in one pass: the line
# is taken a run of other characters at a time, or an "i", "e" or "c" that starts no word.
_SUSPECT_LINE = (rb"\n\+(?!\+\+ )(?:[^\n.=\[\"'/\\@_iec]++|i(?!mport)|e(?!xec|val)|c(?!ompile))*+"
                 rb"(?:[.=\[\"'/\\@_]|import|exec|eval|compile)")
# A "+++ " line right after a "--- " line: a header's (the empty group: no allocation).
_HEADER_PLUS = rb"\n--- [^\n]*+\n\+\+\+ ()"


class Located(NamedTuple):
    path: str
    finding: Finding


def _quiet(text: bytes) -> bool:
    """Whether the added lines of a diff of new files cannot hold a finding: none holds
    one of ``_SPECIALS`` or ``_WORDS`` (the files' text is their added lines; a word
    elsewhere, in a header, is not theirs).  The added lines that read ``++ ...`` (a
    ``+++ `` line that is no header: it does not follow a ``--- `` line; in a diff of
    new files no removed line can stand before it) are not looked into: with one, the
    files are read.  Three C-level passes, no copy (but of a diff that starts with
    ``+`` or ``-``)."""
    if text[:1] in (b"+", b"-"):
        text = b"\n" + text
    return text.count(b"\n+++ ") == len(re.findall(_HEADER_PLUS, text)) and \
        re.search(_SUSPECT_LINE, text) is None


_GREP_WORDS = "import|exec|eval|compile"
_GREP_SPECIALS = "[.=[\"'/\\\\@_]"
_MANY = 2000  # more paths than this: one glob pathspec instead of the names


def _spec(paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """Pathspec arguments naming ``paths`` (or every ``*.py`` when they are many)."""
    if len(paths) <= _MANY:
        return ["--", *paths], dict(os.environ, GIT_LITERAL_PATHSPECS="1")
    return ["--", ":(glob)**/*.py"], dict(os.environ)


_FROM_CHECKOUT = 500  # more new staged files than this: read from the checkout first
_SUSPECT = re.compile(rb"[.=\[\"'/\\@_]|" + _GREP_WORDS.encode())


def _suspects(ctx: ScopeContext, paths: list[str]) -> set[str]:
    """The new files among ``paths`` whose content (index or commit) holds a character or
    word a finding needs (``_SPECIALS``, ``_WORDS``).

    Many new staged files are read from the checkout, each kept only when its git
    object id, computed here, is the index's id for that path (the new blob id of the
    staged change's record, so no other git call): then they are the same bytes, and
    the scan reads no object (``ballot_guard.digest.checkout``).  git's new objects are
    loose, and ``git grep`` opens and inflates each one, three times the
    cost.  The others (and every file of a commit) go to ``git grep``."""
    if ctx.change.source == "commit" or len(paths) <= _FROM_CHECKOUT:
        return _grep(ctx, paths)
    from ballot_guard.digest.checkout import LARGE, object_id, worktree_bytes  # noqa: PLC0415 - lazy: code reader: the checkout reader (10.2 ms) only for more than _FROM_CHECKOUT new files

    staged = {f.path: f.new_oid for f in ctx.change.files if f.new_oid is not None}
    base = os.fsencode(ctx.root)
    found: set[str] = set()
    rest: list[str] = []
    for path in paths:
        oid = staged.get(path)
        data = None if oid is None else worktree_bytes(os.path.join(base, os.fsencode(path)),
                                                       False)
        if data is None or data is LARGE or object_id(data, _ALGO[len(oid or "")]) != oid:
            rest.append(path)  # not the staged bytes, or too large: git reads it
        elif _SUSPECT.search(data):
            found.add(path)
    return found | _grep(ctx, rest) if rest else found


_ALGO = {40: "sha1", 64: "sha256", 0: "sha1"}


def _grep(ctx: ScopeContext, paths: list[str]) -> set[str]:
    """``_suspects`` by one ``git grep``, in git's own threads."""
    spec, env = _spec(paths)
    rev = [ctx.change.commit or ""] if ctx.change.source == "commit" else ["--cached"]
    threads = ["--threads=1"] if len(paths) <= 200 else []  # git's threads cost more here
    res = git.run(["grep", *threads, "-l", "-z", "--full-name", "--no-color", "-E",
                   "-e", _GREP_SPECIALS, "-e", _GREP_WORDS, *rev, *spec],
                  cwd=ctx.root, env=env, check=False)
    if res.code not in (0, 1):
        return set(paths)  # git could not say: read them all
    prefix = f"{rev[0]}:" if ctx.change.source == "commit" else ""
    names = {os.fsdecode(n)[len(prefix):] for n in res.stdout.split(b"\0") if n}
    return names & set(paths)


def _diff(ctx: ScopeContext, paths: list[str]) -> bytes:
    """The change's ``paths`` as a unified diff with no context."""
    opts = ["-p", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
            "--src-prefix=a/", "--dst-prefix=b/"]
    base = ctx.change.base if ctx.change.base is not None else git.empty_tree(ctx.root)
    spec, env = _spec(paths)
    if ctx.change.source == "commit":
        args = ["diff-tree", "-r", *opts, base, ctx.change.commit or "", *spec]
    else:
        args = ["diff-index", "--cached", *opts, base, *spec]
    return git.out(args, cwd=ctx.root, env=env)


def _sources(ctx: ScopeContext, wanted: list[str], rev: str) -> dict[str, bytes]:
    """The content of ``wanted`` files at ``rev`` ("": the index), through one cat-file."""
    out: dict[str, bytes] = {}
    with git.BlobReader(ctx.root) as reader:
        for path in wanted:
            if "\n" in path:
                continue
            try:
                out[path] = reader.read(f"{rev}:{path}")
            except git.GitError:
                continue
    return out


def _new_file(old: bytes | None, hunks: list[object]) -> str | None:
    """HEAD's file with a patch's hunks applied (exact line positions, no fuzz), or None
    when the hunks do not fit it."""
    lines = [] if old is None else old.decode("utf-8", "replace").splitlines(keepends=True)
    result: list[str] = []
    at = 0  # next old line to copy
    for hunk in hunks:
        start = hunk.source_start - 1 if hunk.source_length else hunk.source_start  # type: ignore[attr-defined]
        if start < at or start > len(lines):
            return None
        result += lines[at:start]
        at = start
        for line in hunk:  # type: ignore[attr-defined]
            if line.is_context or line.is_removed:
                if at >= len(lines) or lines[at].rstrip("\r\n") != line.value.rstrip("\r\n"):
                    return None
                if line.is_context:
                    result.append(lines[at])
                at += 1
            elif line.is_added:
                result.append(line.value)
    result += lines[at:]
    return "".join(result)


def find(ctx: ScopeContext, patch: bytes | None = None) -> list[Located]:
    """Every rule-5 finding on the change's added lines in behaviour Python files."""
    if not any(p.endswith(".py") for p in ctx.behavior):
        return []
    # only new files (the common shape of a large patch): one scan of the added text
    # first, with no step per file here
    if ctx.change.source == "patch" and set(map(itemgetter(0), ctx.change.files)) == {"A"} \
            and (patch is None or _quiet(patch)):
        return []
    oracle = set(ctx.oracle)
    behaviour = set(ctx.behavior)
    files = [f for f in ctx.change.files
             if f.status != "D" and f.path.endswith(".py") and f.path in behaviour]
    if not files:
        return []
    if ctx.change.source == "patch":
        if patch is None:
            return []
        text = patch
    else:
        new = [f.path for f in files if f.status == "A"]
        read = set(_suspects(ctx, new)) if new else set()
        read.update(f.path for f in files if f.status != "A")  # an alias may stand in
        if not read:  # the unchanged lines: every changed file is read
            return []
        text = _diff(ctx, sorted(read))
    from unidiff.errors import UnidiffParseError  # noqa: PLC0415 - lazy: code reader: unidiff and rule 5's analysis (ast; 4.2 ms together) only when a first scan could not clear the added lines
    from unidiff.patch import PatchSet  # noqa: PLC0415 - lazy: code reader: as the line above (4.2 ms together)

    from ballot_guard.scope.tamper import findings, scan_lines  # noqa: PLC0415 - lazy: code reader: as the lines above (4.2 ms together)


    try:
        parsed = PatchSet(io.StringIO(text.decode("utf-8", "surrogateescape")))
    except (UnidiffParseError, ValueError):
        return [Located("(patch)", f) for f in scan_lines(
            (n, line[1:].decode("utf-8", "replace"))
            for n, line in enumerate(text.split(b"\n"), 1)
            if line.startswith(b"+") and not line.startswith(b"+++ "))]
    sections = []
    for pf in parsed:
        if pf.is_removed_file:
            continue
        path = pf.path[1:-1] if pf.path.startswith('"') else pf.path
        stripped = path.split("/", 1)[-1]
        if not path.endswith(".py") or path in oracle or stripped in oracle or (
                path not in behaviour and stripped not in behaviour):
            continue
        added = {n for hunk in pf for line in hunk
                 if line.is_added and (n := line.target_line_no) is not None}
        if added:
            sections.append((path if path in behaviour else stripped, pf, added))
    if not sections:
        return []
    found: list[Located] = []
    if ctx.change.source == "patch":
        olds = _sources(ctx, [p for p, pf, _ in sections if not pf.is_added_file],
                        ctx.change.base) if ctx.change.base is not None else {}
        for path, pf, added in sections:
            source = _new_file(olds.get(path) if not pf.is_added_file else None, list(pf))
            if source is None:  # the hunks alone, in place, other lines blank
                width = max(added)
                rows = [""] * width
                for hunk in pf:
                    for line in hunk:
                        if line.target_line_no and line.target_line_no <= width:
                            rows[line.target_line_no - 1] = line.value.rstrip("\r\n")
                source = "\n".join(rows) + "\n"
            found += [Located(path, f) for f in findings(source, added)]
        return found
    contents = _sources(ctx, [p for p, _, _ in sections],
                        ctx.change.commit or "" if ctx.change.source == "commit" else "")
    for path, pf, added in sections:
        data = contents.get(path)
        if data is None:
            found += [Located(path, f) for f in scan_lines(
                (line.target_line_no or 0, line.value) for hunk in pf for line in hunk
                if line.is_added)]
        else:
            found += [Located(path, f) for f in findings(data, added)]
    return found


def judge_tampering(ctx: ScopeContext) -> list[Reason]:
    """Rule 5: blocked for an agent change; a warning, not a block, for a human one."""
    found = find(ctx, ctx.patch)
    if not found:
        return []
    lines = [f"{loc.path}:{loc.finding.line}: {loc.finding.what}" for loc in found]
    if len(lines) > _SHOWN:
        lines = [*lines[:_SHOWN], f"and {len(lines) - _SHOWN} more"]
    is_agent = ctx.is_agent
    if not is_agent and ctx.config.agents and ctx.change.source != "commit":
        is_agent = identity.any_agent(ctx.config.agents, identity.committing_identities(ctx.root))
    why = "behaviour code reaches into the judge at run time (judge tampering)"
    if is_agent:
        return [Reason(ScopeRule.TAMPER, f"{line}: {why}") for line in lines]

    for line in lines:
        warn(f"ballot-guard: warning: rule 5 (not blocking: a human change): {line}: {why}")
    return []
