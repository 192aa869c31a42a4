"""Tests of ballot_guard.demo: the demo."""
