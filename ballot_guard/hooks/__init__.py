"""The hook stages (pre-commit, pre-push) as calls to scope, digest and vote;
the plain git hook scripts ``pre-commit`` and ``pre-push`` live here as
package data.
"""
