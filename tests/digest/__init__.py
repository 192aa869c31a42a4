"""Tests of ballot_guard.digest: the fixture pin: framing, reading, drift, the checkout shortcut."""
