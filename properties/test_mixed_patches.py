"""ballot-guard's own invariant: a patch that touches the oracle and behaviour is blocked.

Judged through the command line, as a user runs it (``scope --patch FILE --json``), in a
real adopted repository: the patch files in ``fixtures/patches/`` (real-world shapes: a
``git format-patch`` mail, plain ``diff -u``, a rename) get the verdicts listed in
``fixtures/patches/expected.json``, and any generated pair of an oracle path and a
behaviour path in one patch is blocked.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.main import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "patches"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text())
FILES = {"properties/test_retry.py": "def test_retry():\n    assert True\n",
         "fixtures/cases.json": "{}\n", "src/retry.py": "CAP = 3\n",
         "README.md": "# a service\n"}


@contextlib.contextmanager
def inside(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def cli(root: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with inside(root), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    return code, out.getvalue()


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Property", "-c", "user.email=p@example.com",
                    "-c", "commit.gpgsign=false", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository that has adopted ballot-guard: a property, a fixture, code, the pin."""
    root = tmp_path_factory.mktemp("adopted")
    git(root, "init", "-q")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert cli(root, "digest", "--pin")[0] == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "adopt")
    return root


def scope(root: Path, patch: bytes) -> tuple[int, dict[str, Any]]:
    path = root.parent / "change.diff"
    path.write_bytes(patch)
    code, out = cli(root, "scope", "--patch", str(path), "--json")
    return code, json.loads(out)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_fixture_patches_get_their_verdicts(adopted: Path, name: str) -> None:
    want = EXPECTED[name]
    code, got = scope(adopted, (FIXTURES / name).read_bytes())
    assert (code, got["verdict"]) == (want["exit"], want["verdict"])
    assert sorted(got["oracle"]) == want["oracle"]
    assert sorted(got["behavior"]) == want["behavior"]


def diff(path: str, old: str | None, new: str) -> str:
    if old is None:
        return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                f"+++ b/{path}\n@@ -0,0 +1 @@\n+{new}\n")
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1 +1 @@\n-{old}\n+{new}\n")


segment = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(segment, segment, st.booleans())
def test_any_oracle_and_behaviour_pair_is_blocked(adopted: Path, prop: str, module: str,
                                                  edit_existing: bool) -> None:
    oracle = diff("properties/test_retry.py", "    assert True", "    assert 1") \
        if edit_existing else diff(f"properties/test_{prop}.py", None, "def test_x(): pass")
    behaviour = diff(f"src/{module}.py", None, "CAP = 4")
    code, got = scope(adopted, (oracle + behaviour).encode())
    assert code == 1 and got["verdict"] == "blocked"
    assert [r["rule"] for r in got["reasons"]][:1] == [1]
