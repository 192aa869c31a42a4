"""Tests of ballot_guard.ci: ci: the judge of a pushed range, its log, its target, the Action."""
