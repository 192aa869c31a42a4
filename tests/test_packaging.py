"""Packaging ready for an index: ``python -m build`` (offline, ``--no-isolation``) makes a
wheel and an sdist that ``twine check --strict`` passes; the version comes from one place;
the wheel carries the demo, the hook scripts and ``py.typed``."""
from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from ballot_guard import __version__
from ballot_guard.demo import build as demo_build

ROOT = Path(__file__).resolve().parents[1]


def _tools() -> None:
    """The build tools of the test extra (CI installs them); older setuptools cannot read
    the PEP 639 licence field, so the build would not be this project's."""
    pytest.importorskip("build")
    pytest.importorskip("twine")
    setuptools = importlib.metadata.version("setuptools")
    if tuple(int(p) for p in setuptools.split(".")[:2]) < (77, 0):
        pytest.skip(f"setuptools {setuptools} is older than the build-system's >=77")


def _source(dest: Path) -> Path:
    """The project's files as git lists them (a build writes into its source tree)."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout
    for raw in filter(None, listed.split(b"\0")):
        rel = os.fsdecode(raw)
        src, dst = ROOT / rel, dest / rel
        if not os.path.lexists(src) or "__pycache__" in rel:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    return dest


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _tools()
    base = tmp_path_factory.mktemp("packaging")
    src = _source(base / "src")
    out = base / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                           str(src)], capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_wheel_and_sdist_pass_twine_check(dist: Path) -> None:
    files = sorted(p.name for p in dist.iterdir())
    assert files == [f"ballot_guard-{__version__}-py3-none-any.whl",
                     f"ballot_guard-{__version__}.tar.gz"]
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           *(str(p) for p in sorted(dist.iterdir()))],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2


def test_the_version_is_written_in_one_place() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "ballot_guard.__version__" }' in pyproject
    assert "\nversion =" not in pyproject.split("[tool.setuptools.dynamic]")[0]


def test_the_wheel_carries_the_demo_the_hooks_and_py_typed(dist: Path) -> None:
    [wheel] = dist.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"ballot_guard/py.typed", "ballot_guard/hooks/pre-commit",
            "ballot_guard/hooks/pre-push", "ballot_guard/run/forkserver.py"} <= names
    example = {f"ballot_guard/demo/example/{p.relative_to(demo_build.EXAMPLE).as_posix()}"
               for p in demo_build.EXAMPLE.rglob("*")
               if p.is_file() and not demo_build.skipped(p.relative_to(demo_build.EXAMPLE))}
    assert example and example <= names
    assert not any(n.startswith("tests/") for n in names)
    metadata = zipfile.ZipFile(wheel).read(
        f"ballot_guard-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    assert "\nRequires-Dist: pathspec>=0.12\n" in metadata
    assert "\nDescription-Content-Type: text/markdown\n" in metadata
    entry = zipfile.ZipFile(wheel).read(
        f"ballot_guard-{__version__}.dist-info/entry_points.txt").decode()
    assert "ballot-guard = ballot_guard.main:main" in entry


def test_the_sdist_carries_what_builds_documents_and_tests_it(dist: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    top = f"ballot_guard-{__version__}/"
    with tarfile.open(sdist) as tar:
        names = {n[len(top):] for n in tar.getnames() if n.startswith(top)}
    assert {"action.yml", ".pre-commit-hooks.yaml", "mkdocs.yml", "LICENSE", "README.md",
            "docs/index.md", "tests/test_packaging.py", "ballot_guard/py.typed",
            "ballot_guard/hooks/pre-commit", ".ci/run"} <= names
