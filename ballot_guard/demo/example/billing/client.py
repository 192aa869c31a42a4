"""The billing client: charge a card through the gateway, retrying timeouts."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from billing.breaker import Breaker
from billing.clock import Clock
from billing.redact import redact

MAX_ATTEMPTS = 3
BACKOFF_SECONDS = 0.01

log = logging.getLogger("billing")


@dataclass(frozen=True)
class Charge:
    key: str  # idempotency key: the gateway and the ledger charge it once
    customer: str
    amount_cents: int
    card: str


@dataclass(frozen=True)
class Receipt:
    key: str
    amount_cents: int


Transport = Callable[[Charge, str], Receipt]  # (charge, api_key) -> receipt; may time out


class RetriesExhausted(Exception):
    """Every attempt timed out."""


class BreakerOpen(Exception):
    """The breaker is open after a recent retry storm: the gateway is not called."""


def _attempt_budget(requested: int | None) -> int:
    """How many times to call the gateway: the request, capped at MAX_ATTEMPTS."""
    if requested is None:
        return MAX_ATTEMPTS
    return max(1, min(requested, MAX_ATTEMPTS))


class BillingClient:
    def __init__(self, transport: Transport, *, clock: Clock, breaker: Breaker,
                 api_key: str) -> None:
        self.transport = transport
        self.clock = clock
        self.breaker = breaker
        self.api_key = api_key

    def charge(self, charge: Charge, *, attempts: int | None = None) -> Receipt:
        if self.breaker.is_open():
            raise BreakerOpen(f"breaker open; not charging {charge.key}")
        budget = _attempt_budget(attempts)
        for attempt in range(1, budget + 1):
            log.info(redact(f"charge {charge.key} customer={charge.customer} "
                            f"card={charge.card} api_key={self.api_key} attempt={attempt}"))
            try:
                return self.transport(charge, self.api_key)
            except TimeoutError:
                if attempt < budget:
                    self.clock.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1))
        self.breaker.trip()
        raise RetriesExhausted(f"{charge.key}: {budget} attempts timed out")
