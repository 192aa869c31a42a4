"""The documentation: every command, flag, config key and hook id is in docs/, the
README's links lead to pages that exist, and the site builds with no broken link."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

from ballot_guard.cli import COMMANDS
from ballot_guard.config import KEYS
from ballot_guard.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# The contract's names (revision 3), so that one dropped from the code is still
# missed here rather than silently undocumented.
CONTRACT_COMMANDS = ("scope", "digest", "gate", "freeze", "unfreeze", "split", "hook", "ci",
                     "install", "demo", "init", "doctor")
CONTRACT_KEYS = ("properties_dir", "fixtures_dir", "digest_file", "freeze_file", "properties",
                 "repeats", "repeats_for", "timeout", "python", "oracle_paths", "neutral_paths",
                 "agents", "review_days")
CONTRACT_HOOKS = ("ballot-guard", "ballot-gate")


def _docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options() -> list[tuple[str, str]]:
    """(command words, option) for every option of every command and sub-command."""
    found = []
    todo = [(name, p) for name, p in _subparsers(build_parser()).items()]
    while todo:
        words, parser = todo.pop()
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    found.append((words, option))
        todo += [(f"{words} {n}", p) for n, p in _subparsers(parser).items()]
    return sorted(found)


@pytest.mark.parametrize("command", sorted(set(COMMANDS) | set(CONTRACT_COMMANDS)))
def test_every_command_has_its_page(command: str) -> None:
    page = DOCS / "commands" / f"{command}.md"
    if command == "unfreeze":
        page = DOCS / "commands" / "freeze.md"
    assert page.is_file(), page
    assert f"ballot-guard {command}" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(("words", "option"), _options())
def test_every_option_is_documented(words: str, option: str) -> None:
    text = _docs_text()
    assert re.search(rf"{re.escape(option)}(?![\w-])", text), f"ballot-guard {words} {option}"


@pytest.mark.parametrize("key", sorted(KEYS | set(CONTRACT_KEYS)))
def test_every_config_key_is_in_the_configuration_page(key: str) -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| `{key}` \|", page, re.MULTILINE), key


def test_every_hook_id_is_in_the_hooks_page() -> None:
    manifest = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    page = (DOCS / "hooks.md").read_text(encoding="utf-8")
    ids = {h["id"] for h in manifest}
    assert set(CONTRACT_HOOKS) <= ids
    for hook_id in ids:
        assert f"`{hook_id}`" in page, hook_id


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert f" {page.relative_to(DOCS).as_posix()}\n" in nav, page


def test_the_readme_links_lead_to_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert "docs/configuration.md" in local and len(local) >= 10
    for link in local:
        assert (ROOT / link).is_file(), link


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link or anchor is a warning, strict makes it fail.

    .ci/run installs the docs extra and builds the site itself; here the build runs
    where mkdocs is installed."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "commands" / "scope" / "index.html").is_file()
