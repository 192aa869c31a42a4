"""Hermetic runs: nothing one run writes is read by another run or a later gate, pytest
stays inside the checkout, and the environment cannot lead into it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from testing.gate_support import FAIL, _shared_pycache, lines, make_project, project, scorecard
from testing.helpers import Repo, run_cli
from testing.hookutil import bare_remote, push

__all__ = ["_shared_pycache", "project"]


def test_each_run_has_its_own_empty_tmpdir_and_home(project: Repo, tmp_path: Path) -> None:
    log = tmp_path / "seen.jsonl"
    prop = ("import json, os, pathlib, tempfile\n"
            f"LOG = pathlib.Path({str(log)!r})\n"
            "def test_private(tmp_path):\n"
            "    tmp, home = tempfile.gettempdir(), os.environ['HOME']\n"
            "    seen = {'tmp': tmp, 'home': home, 'tmp_path': str(tmp_path),\n"
            "            'tmp_files': sorted(os.listdir(tmp)), 'home_files': os.listdir(home),\n"
            "            'expanded': os.path.expanduser('~')}\n"
            "    pathlib.Path(tmp, 'left-behind').write_text('x')\n"
            "    pathlib.Path(home, '.secret').write_text('x')\n"
            "    with LOG.open('a') as f:\n"
            "        f.write(json.dumps(seen) + '\\n')\n")
    make_project(project, {"private": prop}, table='repeats = 3\nsandbox = "off"\n')
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    seen = lines(log)
    assert len(seen) == 3
    assert len({s["tmp"] for s in seen}) == 3 and len({s["home"] for s in seen}) == 3
    for s in seen:
        assert s["home_files"] == [] and s["expanded"] == s["home"]
        assert s["tmp_files"] in ([], [f"pytest-of-{os.environ.get('USER', 'root')}"]) or \
            all(f.startswith("pytest-of-") for f in s["tmp_files"])
        assert s["tmp_path"].startswith(s["tmp"] + os.sep)
        assert not os.path.exists(s["tmp"]) and not os.path.exists(s["home"])


UPRIGHT = ("import pytest\n"
           "@pytest.hookimpl(hookwrapper=True)\n"
           "def pytest_runtest_makereport(item, call):\n"
           "    outcome = yield\n"
           "    report = outcome.get_result()\n"
           "    report.outcome, report.longrepr = 'passed', None\n")


def test_config_and_conftests_above_the_checkout_are_never_read(project: Repo,
                                                                tmp_path: Path) -> None:
    """pytest would climb from the property to the filesystem root for its config file
    and (without a confcutdir) for conftest.py files: both stop at the checkout."""
    (tmp_path / "conftest.py").write_text(UPRIGHT)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:randomly\n")
    make_project(project, {"bad": FAIL})
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    assert scorecard(project)["properties"]["bad"]["ballot"] == "fail"


def test_a_conftest_a_run_drops_above_the_rev_worktree_is_never_loaded(
        project: Repo, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Run 1 writes a pytest.ini and a conftest.py into $TMPDIR and above the --rev
    worktree (pytest's config search climbs past a pyproject.toml without a pytest
    table, and the conftest search follows the config file's directory); run 2 must
    still fail honestly, not flip."""
    drop = ("import pathlib, tempfile\n"
            f"UPRIGHT = {UPRIGHT!r}\n"
            "def test_bad():\n"
            "    here = pathlib.Path(__file__).resolve()\n"
            "    for d in (pathlib.Path(tempfile.gettempdir()), *here.parents[2:4]):\n"
            "        try:\n"
            "            (d / 'conftest.py').write_text(UPRIGHT)\n"
            "            (d / 'pytest.ini').write_text('[pytest]\\n')\n"
            "        except OSError:\n"
            "            pass\n"
            "    assert 1 + 1 == 3\n")
    make_project(project, {"bad": drop})
    outside = tmp_path / "system-tmp"  # the gate's own TMPDIR: the worktree goes there
    outside.mkdir()
    monkeypatch.setenv("TMPDIR", str(outside))
    monkeypatch.setattr(tempfile, "tempdir", str(outside))
    res = run_cli(["gate", "--rev", "HEAD", "--repeats", "3"], project.path)
    assert res.code == 1, res.out + res.err
    assert [r["outcome"] for r in scorecard(project)["properties"]["bad"]["runs"]] == \
        ["fail"] * 3


def test_the_environment_cannot_lead_the_runner_into_the_checkout(
        project: Repo, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A kept PYTHONPATH would run src/sitecustomize.py at interpreter start and
    PYTEST_PLUGINS would load a plugin from it: neither reaches a run."""
    marker = tmp_path / "sitecustomize-ran"
    project.write("src/sitecustomize.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    project.write("src/upright.py", UPRIGHT)
    make_project(project, {"bad": FAIL})
    monkeypatch.setenv("PYTHONPATH", str(project.path / "src"))
    monkeypatch.setenv("PYTEST_PLUGINS", "upright")
    monkeypatch.setenv("PYTHONSTARTUP", str(project.path / "src" / "sitecustomize.py"))
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    assert not marker.exists()


FORGE = """\
import importlib._bootstrap_external as ext, importlib.util, pathlib, sys
ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET = ROOT / 'src' / 'limits.py'
def forge():
    source = TARGET.read_bytes()
    code = compile('def cap():\\n    return 3\\n', str(TARGET), 'exec')
    data = ext._code_to_hash_pyc(code, importlib.util.source_hash(source), True)
    name = f'limits.{sys.implementation.cache_tag}.pyc'
    dirs = [TARGET.parent / '__pycache__']
    for prefix in (sys.pycache_prefix, ROOT / '.ballot_guard' / 'pycache'):
        if prefix:
            dirs.append(pathlib.Path(prefix, *TARGET.parent.parts[1:]))
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
def max_attempts():
    forge()
    return 3
"""
SRC = ("import sys, pathlib\n"
       "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / 'src'))\n")


def test_bytecode_one_run_writes_is_never_read_by_another(project: Repo) -> None:
    """A run forges a hash-valid .pyc of a module another property imports, in every
    cache location it can find (its own prefix, ``__pycache__`` beside the source, the
    old shared prefix); a later gate, and unfreeze, still run the module's source."""
    project.write("src/billing.py", FORGE)
    project.write("src/limits.py", "def cap():\n    return 4\n")
    prop_a = SRC + "import billing\ndef test_a():\n    assert billing.max_attempts() == 3\n"
    prop_b = SRC + "import limits\ndef test_b():\n    assert limits.cap() == 3\n"
    make_project(project, {"a": prop_a, "b": prop_b}, table='sandbox = "off"\n')
    assert run_cli(["gate", "--property", "a"], project.path).code == 0
    assert list(project.path.rglob("limits.*.pyc")), "the forgery was written"
    res = run_cli(["gate", "--property", "b"], project.path)
    assert res.code == 1, res.out + res.err
    assert scorecard(project)["properties"]["b"]["ballot"] == "fail"
    project.write("freeze_set.json", json.dumps({"frozen": ["b"]}) + "\n")
    res = run_cli(["unfreeze", "b", "--repeats", "2"], project.path)
    assert res.code == 1, res.out + res.err  # refused: it fails every time


def test_a_runner_started_with_our_flags_runs_no_sitecustomize_of_the_checkout(
        project: Repo, tmp_path: Path) -> None:
    """A src layout on the path through a site .pth (an editable install): its
    sitecustomize.py must not run at interpreter start, while the package still imports."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", ("import sysconfig; print(sysconfig."
                                    "get_path('purelib'))")], check=True, capture_output=True,
                                  text=True).stdout.strip())
    (purelib / "test_tools.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (purelib / "billing_src.pth").write_text(str(project.path / "src") + "\n")
    marker = tmp_path / "ran"
    project.write("src/sitecustomize.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    project.write("src/billing/__init__.py", "def max_attempts():\n    return 3\n")
    prop = "import billing\ndef test_cap():\n    assert billing.max_attempts() == 3\n"
    make_project(project, {"cap": prop}, python=str(python))
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert not marker.exists()


def runner_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A real virtualenv (this suite's pytest and Hypothesis reachable through a .pth):
    (its python, its site-packages)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", ("import sysconfig; print(sysconfig."
                                    "get_path('purelib'))")], check=True, capture_output=True,
                                  text=True).stdout.strip())
    (purelib / "test_tools.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python, purelib


def editable_install(python: Path, project: Repo) -> None:
    """``setup.py develop`` of the project's src layout: a real editable install
    (``easy-install.pth`` names ``src/``), no network, no wheel needed."""
    subprocess.run([str(python), "setup.py", "-q", "develop", "--no-deps"], cwd=project.path,
                   check=True, capture_output=True)


SETUP = {"setup.py": "from setuptools import setup\nsetup()\n",
         "setup.cfg": ("[metadata]\nname = billing\nversion = 0.1\n[options]\n"
                       "package_dir =\n    =src\npackages = find:\n"
                       "[options.packages.find]\nwhere = src\n")}
CAP = "import billing\ndef test_cap():\n    assert billing.max_attempts() == 3\n"


def test_rev_tests_the_revisions_code_not_the_main_checkouts(project: Repo,
                                                            tmp_path: Path) -> None:
    """An editable install points into the main checkout's src/: under --rev (and the
    pre-push gate on the pushed tip) the import path is re-pointed to the worktree, so
    an uncommitted fix cannot make a broken commit pass."""
    python, _ = runner_venv(tmp_path)
    for rel, text in SETUP.items():
        project.write(rel, text)
    project.write("src/billing/__init__.py", "def max_attempts():\n    return 4\n")  # broken
    project.write(".gitignore", "*.egg-info/\n")
    make_project(project, {"cap": CAP}, python=str(python))
    editable_install(python, project)
    project.write("src/billing/__init__.py", "def max_attempts():\n    return 3\n")  # unstaged
    assert run_cli(["gate"], project.path).code == 0  # the working tree holds the fix
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 1, res.out + res.err
    assert scorecard(project)["properties"]["cap"]["ballot"] == "fail"
    assert run_cli(["install"], project.path).code == 0
    bare_remote(project, tmp_path)
    proc = push(project, "origin", "main")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "cap" in proc.stdout + proc.stderr and "fail" in proc.stdout + proc.stderr


def test_an_import_path_into_the_main_checkout_without_counterpart_is_an_error(
        project: Repo, tmp_path: Path) -> None:
    """A path the worktree does not have (an untracked build dir) cannot be re-pointed:
    the ballot is error, never a silent vote on the main checkout's code."""
    python, purelib = runner_venv(tmp_path)
    project.write("build/lib/billing/__init__.py", "def max_attempts():\n    return 3\n")
    project.write(".gitignore", "build/\n")
    (purelib / "billing_build.pth").write_text(str(project.path / "build" / "lib") + "\n")
    make_project(project, {"cap": CAP}, python=str(python))
    assert run_cli(["gate"], project.path).code == 0
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 4, res.out + res.err
    assert "leads into the main checkout and has no counterpart" in res.out


def test_a_run_that_plants_a_startup_file_in_the_runners_environment_is_an_error(
        project: Repo, tmp_path: Path) -> None:
    python, purelib = runner_venv(tmp_path)
    project.write("src/billing/__init__.py", (
        "import site\n"
        "def max_attempts():\n"
        f"    assert {str(purelib)!r} in site.getsitepackages()  # the venv's, as site has it\n"
        f"    open({str(purelib / 'zz_helper.pth')!r}, 'w').write('import os\\n')\n"
        "    return 3\n"))
    prop = ("import sys, pathlib\n"
            "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / 'src'))\n"
            + CAP)
    make_project(project, {"cap": prop}, python=str(python), table='sandbox = "off"\n')
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "changed the runner interpreter's start-up files" in res.out
    assert "zz_helper.pth" in res.out
    assert (purelib / "zz_helper.pth").exists()


def test_rev_re_points_setuptools_editable_finder_mappings(project: Repo,
                                                           tmp_path: Path) -> None:
    """setuptools' PEP 660 editable install (strict mode): a finder module in
    site-packages maps the package name to the main checkout's src/billing
    (``MAPPING``), installed by a .pth import line.  Under --rev the mapping leads
    into the worktree."""
    from setuptools.command.editable_wheel import _finder_template  # noqa: PLC0415 - private

    python, purelib = runner_venv(tmp_path)
    name = "__editable___billing_0_1_finder"
    (purelib / f"{name}.py").write_text(_finder_template(
        name, {"billing": str(project.path / "src" / "billing")}, {}))
    (purelib / "__editable__.billing-0.1.pth").write_text(f"import {name}; {name}.install()\n")
    project.write("src/billing/__init__.py", "def max_attempts():\n    return 4\n")  # broken
    make_project(project, {"cap": CAP}, python=str(python))
    project.write("src/billing/__init__.py", "def max_attempts():\n    return 3\n")  # unstaged
    assert run_cli(["gate"], project.path).code == 0
    res = run_cli(["gate", "--rev", "HEAD"], project.path)
    assert res.code == 1, res.out + res.err
    assert scorecard(project)["properties"]["cap"]["ballot"] == "fail"
