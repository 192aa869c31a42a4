"""bounded_retry: the client never calls the gateway more often than the pinned cap.

The cap is pinned in fixtures/retry_policy.json.  Every client here runs on a
fake clock with an in-memory breaker, so no run waits or leaves state behind.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from billing.breaker import Breaker, MemoryStore
from billing.client import BillingClient, Charge, Receipt, RetriesExhausted, Transport
from billing.clock import FakeClock

# Same inputs, same verdict: no deadline and no health check that depends on the
# machine's load, no example database carried from one run to the next.
STEADY = settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
POLICY = json.loads((FIXTURES / "retry_policy.json").read_text())
CAP: int = POLICY["max_attempts"]
KEY = "bk_test_property0000000000000000"
CHARGE = Charge(key="ch_retry", customer="cus_ada", amount_cents=500, card="4242424242424242")


def fake_client(transport: Transport) -> BillingClient:
    clock = FakeClock()
    return BillingClient(transport, clock=clock, breaker=Breaker(MemoryStore(), clock),
                         api_key=KEY)


def failing(calls: list[str], failures: int) -> Transport:
    """A gateway that times out ``failures`` times, then answers."""
    def send(charge: Charge, api_key: str) -> Receipt:
        calls.append(charge.key)
        if len(calls) <= failures:
            raise TimeoutError("synthetic gateway timeout")
        return Receipt(charge.key, charge.amount_cents)
    return send


def storm(client: BillingClient, attempts: int | None = None) -> None:
    """Charge through a gateway that never answers: every attempt times out."""
    with pytest.raises(RetriesExhausted):
        client.charge(CHARGE, attempts=attempts)


@STEADY
@given(requested=st.integers(min_value=1, max_value=10))
@example(requested=10)
def test_attempts_never_exceed_the_cap(requested: int) -> None:
    calls: list[str] = []
    storm(fake_client(failing(calls, failures=1_000)), attempts=requested)
    assert len(calls) == min(requested, CAP)


def test_default_attempts_is_the_cap() -> None:
    calls: list[str] = []
    storm(fake_client(failing(calls, failures=1_000)))
    assert len(calls) == CAP


@STEADY
@given(failures=st.integers(min_value=0, max_value=CAP - 1))
def test_a_late_answer_is_taken_and_backoff_doubles(failures: int) -> None:
    calls: list[str] = []
    client = fake_client(failing(calls, failures))
    receipt = client.charge(CHARGE)
    assert receipt == Receipt(CHARGE.key, CHARGE.amount_cents)
    assert len(calls) == failures + 1
    base = POLICY["backoff_seconds"]
    assert isinstance(client.clock, FakeClock)
    assert client.clock.slept == [base * 2 ** i for i in range(failures)]
