"""idempotent_write: replaying a charge, in any order and any number of times,
records it once (the Friday incident: a retry charged a customer twice)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.ledger import KeyConflict, Ledger

# Same inputs, same verdict: no deadline and no health check that depends on the
# machine's load, no example database carried from one run to the next.
STEADY = settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CHARGES: list[dict[str, object]] = json.loads((FIXTURES / "charges.json").read_text())


def write(ledger: Ledger, charge: dict[str, object]) -> None:
    ledger.write(str(charge["key"]), str(charge["customer"]), int(str(charge["amount_cents"])))


@STEADY
@given(replay=st.lists(st.sampled_from(range(len(CHARGES))), min_size=1, max_size=30))
def test_replays_record_each_key_once(replay: list[int]) -> None:
    ledger = Ledger()
    for i in replay:
        write(ledger, CHARGES[i])
    once = {str(CHARGES[i]["key"]): CHARGES[i] for i in replay}
    assert sorted(e.key for e in ledger.entries()) == sorted(once)
    for customer in {str(c["customer"]) for c in once.values()}:
        expected = sum(int(str(c["amount_cents"])) for c in once.values()
                       if c["customer"] == customer)
        assert ledger.balance(customer) == expected


def test_same_amount_different_keys_are_two_charges() -> None:
    ledger = Ledger()
    for charge in CHARGES:
        write(ledger, charge)
        write(ledger, charge)
    assert len(ledger.entries()) == len({c["key"] for c in CHARGES})
    assert ledger.balance("cus_linus") == 15600


def test_a_key_reused_for_another_charge_is_refused() -> None:
    ledger = Ledger()
    write(ledger, CHARGES[0])
    with pytest.raises(KeyConflict):
        ledger.write(str(CHARGES[0]["key"]), "cus_mallory", 1)
