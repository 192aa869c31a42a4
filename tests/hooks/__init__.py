"""Tests of ballot_guard.hooks: the hooks: pre-commit framework, plain hooks, pre-push, install, hints."""
