"""Pre-push translation: git's stdin lines and pre-commit's variables into targets (pure)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.errors import CannotJudge
from ballot_guard.hooks.push_refs import (
    PushRef,
    Target,
    from_pre_commit,
    is_zero,
    parse_push_lines,
    targets,
)

Z = "0" * 40
A = "a" * 40
B = "b" * 40


@pytest.mark.parametrize("line, expected", [
    pytest.param(f"refs/heads/main {A} refs/heads/main {B}",
                 PushRef("refs/heads/main", A, "refs/heads/main", B), id="updated"),
    pytest.param(f"refs/heads/topic {A} refs/heads/topic {Z}",
                 PushRef("refs/heads/topic", A, "refs/heads/topic", Z), id="new-branch"),
    pytest.param(f"(delete) {Z} refs/heads/gone {B}",
                 PushRef("(delete)", Z, "refs/heads/gone", B), id="deleted"),
    pytest.param(f"HEAD@{{1 day ago}} {A} refs/heads/x {B}",
                 PushRef("HEAD@{1 day ago}", A, "refs/heads/x", B), id="local-ref-with-spaces"),
    pytest.param(f"refs/heads/main {'c' * 64} refs/heads/main {'0' * 64}",
                 PushRef("refs/heads/main", "c" * 64, "refs/heads/main", "0" * 64), id="sha256"),
    pytest.param(f"refs/heads/main {A} refs/heads/main {B}\r",
                 PushRef("refs/heads/main", A, "refs/heads/main", B), id="crlf"),
])
def test_one_line(line: str, expected: PushRef) -> None:
    assert parse_push_lines(line + "\n") == (expected,)


def test_several_lines_and_blank_lines() -> None:
    text = f"\nrefs/heads/a {A} refs/heads/a {B}\n\nrefs/tags/v1 {B} refs/tags/v1 {Z}\n"
    refs = parse_push_lines(text)
    assert [r.local_ref for r in refs] == ["refs/heads/a", "refs/tags/v1"]
    assert parse_push_lines("") == ()


@pytest.mark.parametrize("line", [
    "refs/heads/main",
    f"refs/heads/main {A} refs/heads/main",
    f"refs/heads/main nothex refs/heads/main {B}",
    f"refs/heads/main {A} refs/heads/main {B[:-1]}",
    f"refs/heads/main {A.upper()} refs/heads/main {B}",
])
def test_malformed_lines_cannot_be_judged(line: str) -> None:
    with pytest.raises(CannotJudge, match="malformed pre-push line"):
        parse_push_lines(line)


def test_targets_skip_deletions_and_mark_new_branches() -> None:
    refs = parse_push_lines(
        f"(delete) {Z} refs/heads/gone {B}\n"
        f"refs/heads/new {A} refs/heads/new {Z}\n"
        f"refs/heads/main {A} refs/heads/other {B}\n")
    assert targets(refs) == (
        Target("refs/heads/new", A, None, True),
        Target("refs/heads/main -> refs/heads/other", A, B, False),
    )


def test_zero() -> None:
    assert is_zero(Z) and is_zero("0" * 64)
    assert not is_zero(A) and not is_zero("") and not is_zero("00a")


def test_pre_commit_update_and_new_branch() -> None:
    env = {"PRE_COMMIT_FROM_REF": B, "PRE_COMMIT_TO_REF": A,
           "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
           "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main", "PRE_COMMIT_REMOTE_NAME": "origin"}
    assert from_pre_commit(env) == (PushRef("refs/heads/main", A, "refs/heads/main", B),)
    assert targets(from_pre_commit(env) or ()) == (Target("refs/heads/main", A, B, False),)


def test_pre_commit_legacy_names() -> None:
    env = {"PRE_COMMIT_ORIGIN": B, "PRE_COMMIT_SOURCE": A}
    assert from_pre_commit(env) == (PushRef(A, A, "(unknown)", B),)


def test_pre_commit_push_with_root_commit_passes_only_the_branch() -> None:
    # pre-commit sets no FROM/TO ref when the push includes the root commit
    env = {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/x",
           "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": "/tmp/r"}
    (ref,) = from_pre_commit(env) or ()
    assert ref.new and not ref.deleted
    assert targets((ref,)) == (Target("refs/heads/main -> refs/heads/x", "refs/heads/main",
                                      None, True),)


def test_pre_commit_passed_nothing() -> None:
    assert from_pre_commit({}) is None
    assert from_pre_commit({"PRE_COMMIT": "1", "PRE_COMMIT_FROM_REF": A}) is None


_ref = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
               max_size=30).map(str.strip).filter(bool)
_sha = st.one_of(st.just(Z), st.text("0123456789abcdef", min_size=40, max_size=40))


@given(st.lists(st.tuples(_ref, _sha, _ref.filter(lambda r: " " not in r), _sha), max_size=5))
def test_round_trip(lines: list[tuple[str, str, str, str]]) -> None:
    """Whatever git writes (the local ref may hold spaces) parses back field for field."""
    text = "".join(f"{a} {b} {c} {d}\n" for a, b, c, d in lines)
    refs = parse_push_lines(text)
    assert [(r.local_ref, r.local_sha, r.remote_ref, r.remote_sha) for r in refs] == lines
    kept = targets(refs)
    assert len(kept) == sum(1 for _, b, _, _ in lines if not is_zero(b))
    assert all(t.new == (t.exclude is None) for t in kept)
