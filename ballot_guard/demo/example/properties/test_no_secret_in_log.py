"""no_secret_in_log: no card number and no API key survives into a log line."""
from __future__ import annotations

import json
import logging
import string
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.breaker import Breaker, MemoryStore
from billing.client import BillingClient, Charge, Receipt
from billing.clock import FakeClock
from billing.redact import redact

# Same inputs, same verdict: no deadline and no health check that depends on the
# machine's load, no example database carried from one run to the next.
STEADY = settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LINES: list[dict[str, Any]] = json.loads((FIXTURES / "log_lines.json").read_text())

# Surrounding text from a fixed alphabet (ASCII and a few others): no Unicode table to build.
noise = st.text(alphabet=string.printable + "éß€→日本", max_size=20)
cards = st.text(alphabet=string.digits, min_size=13, max_size=19)
api_keys = st.builds(lambda env, body: f"bk_{env}_{body}", st.sampled_from(["live", "test"]),
                     st.text(alphabet=string.ascii_letters + string.digits, min_size=24,
                             max_size=32))


@STEADY
@given(card=cards, api_key=api_keys, before=noise, after=noise)
def test_generated_secrets_are_redacted(card: str, api_key: str, before: str, after: str) -> None:
    line = redact(f"{before} card={card} api_key={api_key} {after}")
    assert card not in line
    assert api_key not in line


def test_fixture_lines_are_redacted() -> None:
    for case in LINES:
        line = redact(case["line"])
        for secret in case["secrets"]:
            assert secret not in line, line


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_client_logs_no_secret() -> None:
    capture = Capture()
    logger = logging.getLogger("billing")
    logger.addHandler(capture)
    logger.setLevel(logging.INFO)
    api_key = "bk_live_4eC39HqLyjWDarjtT1zdp7dc"
    charge = Charge(key="ch_log", customer="cus_ada", amount_cents=42, card="4242424242424242")
    clock = FakeClock()
    try:
        client = BillingClient(lambda c, k: Receipt(c.key, c.amount_cents), clock=clock,
                               breaker=Breaker(MemoryStore(), clock), api_key=api_key)
        client.charge(charge)
    finally:
        logger.removeHandler(capture)
    assert capture.lines
    for line in capture.lines:
        assert api_key not in line and charge.card not in line
