"""gitignore-style patterns: our one-regex translator agrees with pathspec's GitIgnoreSpec."""
from __future__ import annotations

import itertools

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.oracle.patterns import PatternSet

PATTERNS = ["docs/", "*.md", "a/**/b", "/Makefile", "**/x", "x/**", "**", "a*b/c?d", "[ab]c",
            "[!a]x/", "foo/*", "foo/**/", "\\#x", "a\\*b", "**/y/", "m[a-c]n", "a/b", "*",
            "?", "[]]x", "x[", "d/ ", "*.py[co]", "a**b", "!a", "**/", "a/**/**/b", "[a-]x",
            "a?", "*/b", "**/**", "a/**/", "/**/a", "\\ ", "x\\ ", "[^a]b", "*[", "a/", "#a",
            "\\!a", "LICENSE*", "CHANGELOG*", "docs/**"]
SEGMENTS = ["a", "b", "docs", "x", "y", "README.md", "c", "foo", "Makefile", "acbc", "ab",
            "a*b", "#x", "d", "mbn", "]x", "x[", "m.pyc", "axxb", "cd", "b c", "-x", " ", "x ",
            "^b", "!a", "#a", "LICENSE.txt"]


def _paths(segments: list[str], depth: int = 3) -> list[str]:
    return ["/".join(c) for n in range(1, depth + 1)
            for c in itertools.product(segments, repeat=n)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_single_patterns_agree_with_pathspec(pattern: str) -> None:
    theirs = pathspec.GitIgnoreSpec.from_lines([pattern])
    ours = PatternSet([pattern])
    wrong = [p for p in _paths(SEGMENTS, 2) + _paths(["a", "b", "x", "docs"], 3)
             if theirs.match_file(p) != ours.match(p)]
    assert wrong == []


@pytest.mark.parametrize("patterns", [
    ["docs/", "!docs/keep.md"], ["*.md", "!README.md"], ["a/", "!a/b"], ["*", "!*.py"],
    ["a/**", "!a/b/"], ["*", "!*/"], ["docs/**", "!docs/**/*.py", "x"], ["!x", "x", "!x/"],
    ["a", "!b", "b/x.py"],
])
def test_negations_agree_with_pathspec(patterns: list[str]) -> None:
    theirs = pathspec.GitIgnoreSpec.from_lines(patterns)
    ours = PatternSet(patterns)
    segs = ["a", "b", "docs", "keep.md", "README.md", "x.py", "x"]
    assert [p for p in _paths(segs) if theirs.match_file(p) != ours.match(p)] == []


def test_backslash_in_a_class_escapes_as_in_git() -> None:
    """git's wildmatch reads [\\]] as a class holding ']' (pathspec does not)."""
    assert PatternSet(["[\\]]x"]).match("]x")


def test_a_class_never_matches_a_slash() -> None:
    """As in git (wildmatch with WM_PATHNAME); pathspec's [!a] would match "a/a"."""
    assert not PatternSet(["a[!a]a"]).match("a/a") and PatternSet(["a[!a]a"]).match("aba")


def test_empty_and_comment_lines_match_nothing() -> None:
    assert not PatternSet([]) and not PatternSet(["", "# c"]).match("a")


# "[!a]" is left out: pathspec lets a negated class match "/", git's wildmatch does not
# (test_a_class_never_matches_a_slash).
_PIECE = st.sampled_from(["a", "b", "*", "?", "**", "[ab]", ".", "x", "\\*", "-"])
_PATTERN = st.builds(
    lambda neg, lead, parts, trail: ("!" if neg else "") + ("/" if lead else "")
    + "/".join("".join(p) for p in parts) + ("/" if trail else ""),
    st.booleans(), st.booleans(),
    st.lists(st.lists(_PIECE, min_size=1, max_size=3), min_size=1, max_size=3), st.booleans())
_PATH = st.lists(st.sampled_from(["a", "b", "ab", "ba", "x", "a.b", "*", "-", "aa"]),
                 min_size=1, max_size=4).map("/".join)


@settings(max_examples=400, deadline=None)
@given(patterns=st.lists(_PATTERN, min_size=1, max_size=4), paths=st.lists(_PATH, max_size=8))
def test_random_pattern_sets_agree_with_pathspec(patterns: list[str], paths: list[str]) -> None:
    try:
        theirs = pathspec.GitIgnoreSpec.from_lines(patterns)
    except Exception:  # noqa: BLE001 - pathspec rejects some degenerate lines (e.g. "!/"); skip those sets
        return
    ours = PatternSet(patterns)
    for p in paths:
        assert ours.match(p) == theirs.match_file(p), (patterns, p)
