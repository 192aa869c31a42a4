"""Tests of ballot_guard.run: one run in a fresh process state: runner, fork server, sandbox, schedule."""
