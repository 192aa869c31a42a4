"""Tests of ballot_guard.oracle: which paths are the oracle: names, patterns, tables, links, neutral code."""
