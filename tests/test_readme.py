"""Every hook id of the manifest is documented in README.md; the manifest is sound."""
from __future__ import annotations

from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))


@pytest.mark.parametrize("hook", MANIFEST, ids=[h["id"] for h in MANIFEST])
def test_hook_is_documented(hook: dict[str, object]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{hook['id']}`" in readme


@pytest.mark.parametrize("hook", MANIFEST, ids=[h["id"] for h in MANIFEST])
def test_hook_runs_the_whole_repository(hook: dict[str, object]) -> None:
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert hook["require_serial"] is True
    assert str(hook["entry"]).startswith("ballot-guard hook ")
    version = tuple(int(n) for n in str(hook["minimum_pre_commit_version"]).split("."))
    assert version >= (3, 2, 0)  # the stage names pre-commit / pre-push


def test_stages() -> None:
    stages = {h["id"]: h["stages"] for h in MANIFEST}
    assert stages == {"ballot-guard": ["pre-commit"], "ballot-gate": ["pre-push"]}
