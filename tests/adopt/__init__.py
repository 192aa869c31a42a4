"""Tests of ballot_guard.adopt: init and doctor."""
