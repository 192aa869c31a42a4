"""Tests of ballot_guard.scope: the scope rules and their judge, through every source."""
