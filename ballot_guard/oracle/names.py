"""The names the oracle is built from, and the form paths are compared in.

A leaf: the built-in oracle file and directory names, git's hook names, and
``normal`` / ``fold`` / ``ancestors``, which every stage that compares paths uses.
"""
from __future__ import annotations

import posixpath
import unicodedata

PYTEST_CONFIGS = ("conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")
# Also in an ancestor of the properties dir: an ``__init__.py`` there makes it a package
# that pytest imports, by its default import mode, before any property runs.
ANCESTOR_FILES = (*PYTEST_CONFIGS, "__init__.py")
ORACLE_FILES = (".pre-commit-config.yaml",)
ORACLE_DIRS = (".venv",)
# Scripts git runs as hooks; when ``core.hooksPath`` names a tracked directory (where
# ``ballot-guard install`` puts its hooks), that directory is the judge's entry point.
GIT_HOOKS = frozenset({
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "post-index-change"})
HOOK_FILES = GIT_HOOKS | {f"{h}.legacy" for h in GIT_HOOKS}  # install chains <hook>.legacy



def normal(path: str) -> str:
    """The form paths are compared in: NFC, normalised separators and dots."""
    if not path.isascii():
        path = unicodedata.normalize("NFC", path)
    if "\\" in path:
        path = path.replace("\\", "/")
    if "//" in path or ("." in path and ("./" in path or path.endswith("."))) \
            or path.endswith("/"):
        path = posixpath.normpath(path) if path else path
        return "" if path == "." else path
    return path


def fold(path: str) -> str:
    """The case-insensitive oracle key of a path."""
    return normal(path).casefold()


def ancestors(directory: str) -> list[str]:
    """"" (the root) and every proper ancestor of a repository-relative directory."""
    parts = normal(directory).split("/") if normal(directory) else []
    return ["/".join(parts[:i]) for i in range(len(parts))]
