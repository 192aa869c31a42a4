"""What the fork server prepares once for every run (pytest's first step, Hypothesis's
survey of the modules it already has) changes no run's meaning and carries nothing
from one run to the next."""
from __future__ import annotations

import pytest

from testing.gate_support import make_project, project, scorecard
from testing.helpers import Repo, run_cli

__all__ = ["project"]

MODES = ['sandbox = "off"\n', ""]  # the hermetic level, and the default (the OS sandbox)

# Hypothesis draws examples from the constants of the project's own modules: the
# property fails under plain pytest (its only failing input is a constant of limits.py).
LIMITS = "MAGIC = 48_611_237\n\n\ndef same(x):\n    return x\n"
MAGIC = ("from hypothesis import given, strategies as st\n"
         "import limits\n\n\n"
         "@given(st.integers())\n"
         "def test_never_magic(x):\n"
         "    assert limits.same(x) != 48_611_237\n")

# Each run's pytest Config is its own: its own arguments, nothing another run set.
OWN_CONFIG = ("from pathlib import Path\n\n\n"
              "def test_own_config(pytestconfig):\n"
              "    assert Path(pytestconfig.invocation_params.args[0]).name == '{file}'\n"
              "    assert pytestconfig.args == [pytestconfig.invocation_params.args[0]]\n"
              "    pm = pytestconfig.pluginmanager\n"
              "    assert not any(hasattr(x, 'left_by_a_run')\n"
              "                   for x in (pytestconfig, pytestconfig.option, pm))\n"
              "    for x in (pytestconfig, pytestconfig.option, pm):\n"
              "        x.left_by_a_run = True\n")


@pytest.mark.parametrize("mode", MODES, ids=["hermetic", "default"])
def test_the_projects_own_constants_still_reach_hypothesis_in_every_run(
        project: Repo, mode: str) -> None:
    project.write("limits.py", LIMITS)
    make_project(project, {"magic": MAGIC}, table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--seed", "1"], project.path)
    assert res.code == 1, res.out + res.err
    runs = scorecard(project)["properties"]["magic"]["runs"]
    assert [r["outcome"] for r in runs] == ["fail"] * 3
    assert all("48611237" in r["failure"] for r in runs), runs


@pytest.mark.parametrize("mode", MODES, ids=["hermetic", "default"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_run_starts_from_its_own_pytest_config(project: Repo, mode: str,
                                                    jobs: str) -> None:
    props = {name: OWN_CONFIG.format(file=f"test_{name}.py") for name in ("a", "b", "c")}
    make_project(project, props, table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--jobs", jobs], project.path)
    assert res.code == 0, res.out + res.err
    card = scorecard(project)
    assert {n: [r["outcome"] for r in p["runs"]] for n, p in card["properties"].items()} == \
        {n: ["pass"] * 3 for n in props}


# The installed distributions' metadata is read once by the fork server, before any
# run: a run still reads what is on disk, and a distribution that appears during a run
# (here in /tmp, outside the checkout, rewritten) is read afresh each time.
METADATA = (
    "import importlib.metadata as md, pathlib, shutil, sys, tempfile\n\n\n"
    "def test_metadata_as_on_disk():\n"
    "    checked = 0\n"
    "    for d in md.distributions():\n"
    "        meta = pathlib.Path(d._path) / 'METADATA'\n"
    "        if meta.exists():\n"
    "            names = [x.split(':', 1)[1].strip() for x in meta.read_text().splitlines()\n"
    "                     if x.startswith('Name:')]\n"
    "            assert d.metadata['Name'] == names[0]\n"
    "            checked += 1\n"
    "        files = d.files\n"
    "        if files:\n"
    "            files.clear()\n"
    "            assert d.files, d  # each caller gets a list of its own\n"
    "    assert checked > 3\n"
    "    tmp = pathlib.Path(tempfile.mkdtemp(dir='/tmp'))  # outside the checkout\n"
    "    try:\n"
    "        info = tmp / 'late_pkg-1.0.dist-info'\n"
    "        info.mkdir()\n"
    "        sys.path.insert(0, str(tmp))\n"
    "        for version in ('1.0', '2.0'):\n"
    "            (info / 'METADATA').write_text(\n"
    "                f'Metadata-Version: 2.1\\nName: late-pkg\\nVersion: {version}\\n')\n"
    "            assert md.distribution('late-pkg').metadata['Version'] == version\n"
    "    finally:\n"
    "        shutil.rmtree(tmp)\n"
)


@pytest.mark.parametrize("mode", MODES, ids=["hermetic", "default"])
def test_a_run_reads_the_installed_metadata_as_it_is_on_disk(project: Repo,
                                                            mode: str) -> None:
    make_project(project, {"meta": METADATA}, table=mode)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    assert [r["outcome"] for r in scorecard(project)["properties"]["meta"]["runs"]] == \
        ["pass", "pass"]
