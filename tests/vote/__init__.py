"""Tests of ballot_guard.vote: the gate's vote, its reports, the git-directory ground, unfreeze, shards."""
