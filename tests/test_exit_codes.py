"""When several verdicts are reached, one exit code speaks for them all, in the
contract's order: 4 > 2 > 1 > 3 > 0 (a stable failure outranks a frozen voter)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.exit_codes import worst

RANK = {4: 4, 2: 3, 1: 2, 3: 1, 0: 0}  # the contract's order, highest first


@given(st.lists(st.sampled_from(sorted(RANK))))
def test_the_combined_code_is_the_highest_in_the_contracts_order(codes: list[int]) -> None:
    assert worst(*codes) == max(codes, key=RANK.__getitem__, default=0)


def test_a_stable_failure_outranks_a_frozen_voter() -> None:
    assert worst(3, 1) == 1
    assert worst(1, 3, 0) == 1
    assert worst(3, 0) == 3
    assert worst(1, 2) == 2
    assert worst(2, 4, 1) == 4
    assert worst() == 0
