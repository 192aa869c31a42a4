"""Tests of ballot_guard.change: the change read from git or from a patch file: raw diffs, merges, identities."""
