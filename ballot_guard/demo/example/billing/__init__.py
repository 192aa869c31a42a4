"""A small billing service: a client with retries, an idempotent ledger, redacted logs."""
from __future__ import annotations

from pathlib import Path

from billing.breaker import Breaker, FileStore
from billing.client import BillingClient, BreakerOpen, Charge, Receipt, RetriesExhausted, Transport
from billing.clock import SystemClock

# Where the production breaker keeps its state, shared by every worker on the
# host (ignored by git).  A test that uses `connect` shares it too.
STATE_DIR = Path(__file__).resolve().parent.parent / ".billing-state"

__all__ = ["BillingClient", "BreakerOpen", "Charge", "Receipt", "RetriesExhausted", "Transport",
           "connect"]


def connect(transport: Transport, *, api_key: str) -> BillingClient:
    """The production wiring: the system clock and the breaker file every worker shares."""
    clock = SystemClock()
    breaker = Breaker(FileStore(STATE_DIR / "breaker"), clock)
    return BillingClient(transport, clock=clock, breaker=breaker, api_key=api_key)
