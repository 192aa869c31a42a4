"""Log redaction: no card number and no API key reaches a log line."""
from __future__ import annotations

import re

# Any run of 12 or more digits is treated as a card number, whole.
_CARD = re.compile(r"[0-9]{12,}")
_API_KEY = re.compile(r"bk_(?:live|test)_[A-Za-z0-9]+")


def redact(line: str) -> str:
    line = _API_KEY.sub("bk_[redacted]", line)
    return _CARD.sub("[card]", line)
