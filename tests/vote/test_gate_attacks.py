"""Attacks on the gate's count: behaviour code that makes a run look like a pass.

The property is honest (the oracle); the code under test, which a behaviour
patch may change freely, tries to end the run early with exit 0, or to skip or
xfail the check while it runs.  None of these may vote pass.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import pytest
from _pytest.config import get_config

from ballot_guard.run import forkserver
from testing.gate_support import (
    KEEPS_STATE,
    PASS,
    _shared_pycache,
    make_project,
    project,
    scorecard,
)
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]

PROPERTY = (
    "import sys, pathlib\n"
    "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / 'src'))\n"
    "import billing\n"
    "def test_retry_cap():\n"
    "    assert billing.max_attempts() == 3\n"
)

# dodge: (behaviour code, the ballot it must get, words of the reason)
DODGES = {
    "os._exit": ("import os\ndef max_attempts():\n    os._exit(0)\n", "error",
                 "without finishing its pytest session"),
    "pytest.exit": ("import pytest\ndef max_attempts():\n    pytest.exit('done', returncode=0)\n",
                    "error", "ended before every collected test ran"),
    "pytest.skip": ("import pytest\ndef max_attempts():\n    pytest.skip('not today')\n", "fail",
                    "skipped or xfailed themselves while running"),
    "pytest.xfail": ("import pytest\ndef max_attempts():\n    pytest.xfail('known')\n", "fail",
                     "skipped or xfailed themselves while running"),
    "skip at import": ("import pytest\npytest.skip('no', allow_module_level=True)\n", "error",
                       "no tests collected"),
    "runtest replaced": (("import _pytest.python\n"
                          "_pytest.python.Function.runtest = lambda self: None\n"
                          "def max_attempts():\n    return 4\n"), "error",
                         "replaced the test machinery"),
    "report rewritten": (("import _pytest.reports\n"
                          "_make = _pytest.reports.TestReport.from_item_and_call\n"
                          "def _passed(cls, item, call):\n"
                          "    r = _make.__func__(cls, item, call)\n"
                          "    r.outcome, r.longrepr = 'passed', None\n"
                          "    return r\n"
                          "_pytest.reports.TestReport.from_item_and_call = classmethod(_passed)\n"
                          "def max_attempts():\n    return 4\n"), "error",
                         "replaced the test machinery"),
}


@pytest.mark.parametrize("dodge", sorted(DODGES))
def test_code_under_test_cannot_fake_a_pass(project: Repo, dodge: str) -> None:
    project.write("src/billing.py", "def max_attempts():\n    return 4\n")  # the real bug
    make_project(project, {"retry": PROPERTY})
    assert run_cli(["gate"], project.path).code == 1  # honest code: a stable failure
    code, want, words = DODGES[dodge]
    project.write("src/billing.py", code)
    project.commit_all(f"behaviour: {dodge}")
    res = run_cli(["gate"], project.path)
    assert res.code == {"fail": 1, "error": 4}[want], res.out + res.err
    ballot = scorecard(project)["properties"]["retry"]
    assert ballot["ballot"] == want
    assert all(r["outcome"] == want for r in ballot["runs"])
    assert words in res.out


def test_a_skip_declared_by_a_mark_still_lets_the_rest_vote(project: Repo) -> None:
    marked = (PASS + "import pytest\n@pytest.mark.skip(reason='not on this platform')\n"
              "def test_elsewhere():\n    assert False\n"
              "@pytest.mark.xfail(reason='known', strict=False)\n"
              "def test_known():\n    assert False\n")
    make_project(project, {"marked": marked})
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


def test_only_marked_skips_is_not_a_pass(project: Repo) -> None:
    make_project(project, {"idle": "import pytest\n@pytest.mark.skip(reason='later')\n"
                                   "def test_later():\n    assert False\n"})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "no test passed" in res.out


WRITERS = {
    "a fixture": ("fixtures/cases.json", '{"retries": 4}\n'),
    "a new fixture": ("fixtures/extra.json", "{}\n"),
    "the property": ("properties/test_retry.py", "def test_retry_cap():\n    pass\n"),
    "a conftest": ("conftest.py", "# rewritten\n"),
    "a golden file beside the property": ("properties/golden.json", '{"cap": 4}\n'),
}


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_code_under_test_that_writes_into_the_oracle_voids_the_vote(project: Repo,
                                                                  what: str) -> None:
    """Run 1 fails honestly and rewrites the judge for run 2: at the hermetic level the
    vote does not count (4), and nothing is recorded in the freeze file."""
    rel, text = WRITERS[what]
    project.write("src/billing.py", (
        "import pathlib\n"
        f"TARGET = pathlib.Path(__file__).resolve().parent.parent / {rel!r}\n"
        "def max_attempts():\n"
        f"    TARGET.write_text({text!r})\n"
        "    return 4\n"))
    make_project(project, {"retry": PROPERTY}, table='sandbox = "off"\n')
    for args in (["gate"], ["gate", "--rev", "HEAD"]):
        project.git("checkout", "-q", "--", ".")
        project.git("clean", "-qfd", "--", "fixtures", "properties")
        if (project.path / "conftest.py").exists():
            (project.path / "conftest.py").unlink()
        res = run_cli(args, project.path)
        assert res.code == 4, (args, res.out + res.err)
        assert "the oracle changed while it voted" in res.out
        assert rel in res.out
        assert scorecard(project)["exit"] == 4
        assert not (project.path / "freeze_set.json").exists()


def test_hypothesis_given_replaced_by_the_code_under_test_is_caught(project: Repo) -> None:
    project.write("src/billing.py", (
        "import hypothesis\n"
        "hypothesis.given = lambda *a, **k: (lambda f: (lambda: None))\n"
        "def max_attempts():\n    return 4\n"))
    head = PROPERTY.split("def test_retry_cap", maxsplit=1)[0]
    prop = (head + "from hypothesis import given, strategies as st\n"
            "@given(st.integers())\ndef test_any(n):\n    assert billing.max_attempts() == 3\n")
    make_project(project, {"retry": prop})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "replaced the test machinery (hypothesis.given" in res.out
    assert scorecard(project)["properties"]["retry"]["ballot"] == "error"


HOOK = ("import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome, report.longrepr = 'passed', None\n")


def test_a_behaviour_module_loaded_as_a_plugin_cannot_judge(project: Repo) -> None:
    """The oracle's config loads a plugin that lives in behaviour space: a behaviour
    patch turns it into a hook that reports every failure as a pass."""
    project.write("src/billing.py", "def max_attempts():\n    return 4\n")
    project.write("src/pytest_helpers.py", HOOK)
    table = '\n[tool.pytest.ini_options]\naddopts = "-p pytest_helpers"\npythonpath = ["src"]\n'
    make_project(project, {"retry": PROPERTY}, table=table)
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "pytest loaded src/pytest_helpers.py as a plugin" in res.out
    # named by the oracle (oracle_paths), the same module judges: here, wrongly, but
    # then changing it is an oracle change that scope blocks from behaviour patches
    make_project(project, {"retry": PROPERTY},
                 table='oracle_paths = ["src/pytest_helpers.py"]\n' + table)
    assert run_cli(["gate"], project.path).code == 0


def runner_with_plugin(tmp_path: Path, dist_name: str, entry: str,
                       files: dict[str, str], direct_url: dict[str, object] | None = None
                       ) -> tuple[Path, Path]:
    """A runner venv (this suite's pytest reachable through a .pth) in which a distribution
    ``dist_name`` declares the pytest11 entry point ``entry`` (``name = module``) and
    ``files`` go into site-packages (a ``.pth`` names a path: an editable install).
    Returns (its python, its dist-info folder)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", ("import sysconfig; print(sysconfig.get_path"
                            "('purelib'))")], check=True, capture_output=True, text=True)
    purelib = Path(site.stdout.strip())
    dist = purelib / f"{dist_name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{entry}\n")
    if direct_url is not None:
        (dist / "direct_url.json").write_text(json.dumps(direct_url))
    for name, text in files.items():
        (purelib / name).write_text(text)
    (purelib / "test_tools.pth").write_text(sysconfig.get_path("purelib") + "\n")  # pytest
    return python, dist


def test_an_editable_install_of_the_project_with_a_plugin_cannot_judge(project: Repo,
                                                                      tmp_path: Path) -> None:
    """The project's own pytest11 entry point, installed in develop mode: its hooks
    are behaviour code that every pytest session loads."""
    python, _ = runner_with_plugin(tmp_path, "billing_plugin", "billing = pytest_helpers",
                                   {"billing_plugin.pth": str(project.path / "src") + "\n"})
    project.write("src/billing.py", "def max_attempts():\n    return 4\n")
    project.write("src/pytest_helpers.py", HOOK)
    make_project(project, {"retry": PROPERTY}, python=str(python))
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "pytest loaded src/pytest_helpers.py as a plugin" in res.out


def test_a_plugin_installed_from_the_repository_cannot_judge(project: Repo,
                                                            tmp_path: Path) -> None:
    """``pip install .`` copies the plugin into site-packages; PEP 610's direct_url.json
    still says where it came from."""
    python, dist = runner_with_plugin(
        tmp_path, "billing_plugin", "billing = billing_hooks", {"billing_hooks.py": HOOK},
        {"url": project.path.as_uri(), "dir_info": {}})
    project.write("src/billing.py", "def max_attempts():\n    return 4\n")
    make_project(project, {"retry": PROPERTY}, python=str(python))
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "a plugin installed from this repository" in res.out
    (dist / "direct_url.json").write_text(json.dumps(  # from elsewhere: a third-party tool
        {"url": "https://example.com/billing_plugin-1.0.tar.gz", "archive_info": {}}))
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err  # its hook reports the failure as a pass


def test_machinery_replaced_when_an_installed_plugin_is_imported_is_caught(
        project: Repo, tmp_path: Path) -> None:
    """The note of pytest's machinery is taken before any installed plugin is imported
    (the runner imports them once, before forking the runs), so a plugin module that
    replaces it at import time is caught too."""
    python, _ = runner_with_plugin(
        tmp_path, "quiet_tool", "quiet = quiet_tool",
        {"quiet_tool.py": "import _pytest.python\n"
                          "_pytest.python.Function.runtest = lambda self: None\n"})
    project.write("src/billing.py", "def max_attempts():\n    return 4\n")
    make_project(project, {"retry": PROPERTY}, python=str(python))
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "replaced the test machinery (_pytest.python.Function.runtest" in res.out


def test_the_runners_own_plugins_are_not_project_code() -> None:
    """ballot-guard's own pytest plugins live in its forkserver module, which lies inside the
    repository when ballot-guard judges a checkout of itself: they are never reported.
    A plugin is judged by where its hook functions' code is, whatever module its class
    claims.  (pytest's real plugin manager, with pytest's own plugins loaded.)"""
    class Disguised:
        def pytest_runtest_logreport(self, report: object) -> None:
            pass

    Disguised.__module__ = "_pytest.runner"
    pm = get_config().pluginmanager
    hold = forkserver._Hold(None, "properties/test_x.py")
    module = types.ModuleType("project_plugin")
    module.__file__ = "/repo/src/project_plugin.py"
    for name, plugin in (("hold", hold), ("ours", forkserver._Plugin("/h", "/r", hold)),
                         ("project", module), ("disguised", Disguised())):
        pm.register(plugin, name)
    assert forkserver.plugin_files(pm) == sorted(["/repo/src/project_plugin.py",
                                              os.path.realpath(__file__)])


def test_a_unittest_skip_decorator_is_a_declared_skip(project: Repo) -> None:
    prop = ("import unittest\n"
            "class TestRetry(unittest.TestCase):\n"
            "    def test_ok(self):\n        self.assertEqual(1 + 1, 2)\n"
            "    @unittest.skip('not on this platform')\n"
            "    def test_elsewhere(self):\n        self.fail()\n"
            "@unittest.skip('whole class')\n"
            "class TestLater(unittest.TestCase):\n"
            "    def test_later(self):\n        self.fail()\n"
            "class TestDodge(unittest.TestCase):\n"
            "    def test_dodge(self):\n        self.skipTest('decided while running')\n")
    make_project(project, {"unit": prop})
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err  # only the skip decided while running counts
    assert "1 test(s) skipped or xfailed themselves while running" in res.out


def test_a_property_that_keeps_state_in_the_properties_dir_rewrites_the_oracle(
        project: Repo) -> None:
    """Every file of the properties dir is the judge (golden data lives there): state a
    property writes there changes what the next run reads, so the vote does not count."""
    flipper = (KEEPS_STATE + "import pathlib\n"
               "COUNTER = pathlib.Path(__file__).with_name('counter.txt')\n"
               "def test_flips():\n"
               "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
               "    COUNTER.write_text(str(n + 1))\n"
               "    assert n % 2 == 0\n")
    make_project(project, {"flips": flipper})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "the oracle changed while it voted (properties/counter.txt)" in res.out
    assert not (project.path / "freeze_set.json").exists()


def test_a_file_named_by_oracle_paths_is_watched_too(project: Repo) -> None:
    project.write("src/billing.py", (
        "import pathlib\n"
        "GOLDEN = pathlib.Path(__file__).resolve().parent.parent / 'golden' / 'cap.txt'\n"
        "def max_attempts():\n"
        "    GOLDEN.write_text('4')\n"
        "    return 4\n"))
    project.write("golden/cap.txt", "3")
    # at the hermetic level: in the OS sandbox the write would vanish with the run
    make_project(project, {"retry": PROPERTY},
                 table='oracle_paths = ["golden/**"]\nsandbox = "off"\n')
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "the oracle changed while it voted (golden/cap.txt)" in res.out
