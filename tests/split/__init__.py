"""Tests of ballot_guard.split: split: a mixed change into an oracle commit and a behaviour commit."""
