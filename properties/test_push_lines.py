"""ballot-guard's own invariant: git's pre-push lines parse back to the refs they name.

The local ref may hold spaces (git splits the fields from the right); all-zero names mean a
deleted ref or a new branch.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.hooks.push_refs import PushRef, parse_push_lines

ZERO = "0" * 40
shas = st.one_of(st.just(ZERO), st.text("0123456789abcdef", min_size=40, max_size=40))
local_refs = st.text(st.characters(min_codepoint=33, max_codepoint=126) | st.just(" "),
                     min_size=1, max_size=30).filter(lambda r: r.strip() == r)
remote_refs = st.from_regex(r"refs/(heads|tags)/[A-Za-z0-9._/-]{1,20}", fullmatch=True)
refs = st.builds(PushRef, local_refs, shas, remote_refs, shas)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(refs, max_size=6))
def test_pre_push_lines_round_trip(pushed: list[PushRef]) -> None:
    text = "".join(f"{r.local_ref} {r.local_sha} {r.remote_ref} {r.remote_sha}\n"
                   for r in pushed)
    parsed = parse_push_lines(text)
    assert list(parsed) == pushed
    assert [r.deleted for r in parsed] == [r.local_sha == ZERO for r in pushed]
    assert [r.new for r in parsed] == [r.remote_sha == ZERO for r in pushed]
