"""Run integrity: behaviour code that forges a run's outcome or changes the oracle's
meaning in-process (the judge's functions, Hypothesis's profile and strategies,
``builtins``, pytest's plugin manager) makes the run an ``error`` naming what changed.

Each attack is a few lines in the package under test (``src/billing/__init__.py``),
imported by an honest property; the honest code fails, so a pass would be forged.
"""
from __future__ import annotations

import functools
import gc
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.run import forkserver
from testing.gate_support import MODES, _shared_pycache, make_project, project, scorecard
from testing.helpers import Repo, run_cli

__all__ = ["_shared_pycache", "project"]

HEAD = ("import sys, pathlib\n"
        "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / 'src'))\n"
        "import billing\n")
# one test that passes and one that fails: the run must never vote pass
TWO = HEAD + ("def test_fine():\n    assert billing.max_attempts() > 0\n"
              "def test_retry_cap():\n    assert billing.max_attempts() == 3\n")
SORTS = HEAD + ("def test_sorted_like_the_reference():\n"
                "    xs = [3, 1, 2]\n"
                "    assert billing.arrange(xs) == sorted(xs)\n")
LISTS = HEAD + ("from hypothesis import given, strategies as st\n"
                "@given(st.lists(st.integers()))\n"
                "def test_no_duplicates(xs):\n"
                "    assert billing.dedupe(xs) == sorted(set(xs))\n")
BUGGY = "def max_attempts():\n    return 4\n"
# returns xs unchanged: wrong as soon as the input is not sorted
ARRANGE = "def arrange(xs):\n    return list(xs)\n"
# forgets to remove duplicates: wrong for any list with one repeated value
DEDUPE = "def dedupe(xs):\n    return sorted(xs)\n"

# what the runner names the fixtures it found once in the judge's plugins
SCANS = "pytest's fixture definitions of the judge's plugins"

# a tracer that jumps over the property's assert (a line follows it to jump to)
SKIPPED = HEAD + "def test_retry_cap():\n    assert billing.max_attempts() == 3\n    return\n"
JUMPER = ("import sys\n"
          "def _local(frame, event, arg):\n"
          "    if event == 'line' and frame.f_code.co_name == 'test_retry_cap':\n"
          "        try:\n"
          "            frame.f_lineno = frame.f_lineno + 1\n"
          "        except ValueError:\n"
          "            pass\n"
          "    return _local\n"
          "sys.settrace(lambda frame, event, arg: _local if frame.f_code.co_name == "
          "'test_retry_cap' else None)\n")

# attack: (property, behaviour code, the name the error must give)
ATTACKS = {
    "sys.settrace jumping over the assert": (SKIPPED, JUMPER + BUGGY, "sys.settrace"),
    "os._exit replaced": (TWO, "import os\n_real = os._exit\n"
                               "os._exit = lambda code: _real(0)\n" + BUGGY, "os._exit"),
    "json.dumps replaced": (TWO, "import json\n_real = json.dumps\n"
                                 "def _forged(data, *a, **k):\n"
                                 "    if isinstance(data, dict) and 'passed' in data:\n"
                                 "        data = dict(data, passed=2, failed=0, errors=0)\n"
                                 "    return _real(data, *a, **k)\n"
                                 "json.dumps = _forged\n" + BUGGY, "json.dumps"),
    "Function._getobj replaced": (TWO, "import _pytest.python\n"
                                       "_pytest.python.Function._getobj = "
                                       "lambda self: (lambda *a, **k: None)\n" + BUGGY,
                                  "_pytest.python.Function._getobj"),
    "Function.runtest's code swapped": (TWO, "import _pytest.python\n"
                                             "def _nothing(self):\n    pass\n"
                                             "_pytest.python.Function.runtest.__code__ = "
                                             "_nothing.__code__\n" + BUGGY,
                                        "_pytest.python.Function.runtest"),
    # a keyword default changed in place: the function and its defaults stay as they were
    "importorskip's keyword default changed": (TWO, "import _pytest.outcomes\n"
                                                    "_pytest.outcomes.importorskip."
                                                    "__kwdefaults__['exc_type'] = Exception\n"
                                                    + BUGGY, "_pytest.outcomes.importorskip"),
    # pytest's own exit status is 0 then: no report is logged
    "runtestprotocol's default changed": (TWO, "import _pytest.runner\n"
                                               "_pytest.runner.runtestprotocol.__defaults__ = "
                                               "(False, None)\n" + BUGGY,
                                          "_pytest.runner.runtestprotocol"),
    "builtins.sorted replaced": (SORTS, "import builtins\n"
                                        "builtins.sorted = lambda xs, **k: list(xs)\n" + ARRANGE,
                                 "builtins.sorted"),
    "strategies.lists wrapped": (LISTS, "import hypothesis.strategies as st\n"
                                        "_lists = st.lists\n"
                                        "st.lists = lambda e, **k: _lists(e, max_size=1, **k)\n"
                                        + DEDUPE, "hypothesis.strategies.lists"),
    "profile with max_examples=1": (LISTS, "from hypothesis import settings\n"
                                           "settings.register_profile('quick', max_examples=1)\n"
                                           "settings.load_profile('quick')\n" + DEDUPE,
                                    "hypothesis._settings.settings._current_profile"),
    # the fixtures the runner found once in the judge's plugins, emptied: a run would
    # then search them again; a changed entry would give a fixture of the change's own
    "the judge's recorded fixtures changed": (TWO, "import _pytest.fixtures\n"
                                                   "_pytest.fixtures.FixtureManager."
                                                   "parsefactories.__globals__"
                                                   "['_SCANS'].clear()\n" + BUGGY,
                                              SCANS),
    # the keeper's module, loaded by path beside the runner, is watched as the runner is
    "the keeper's module changed": (TWO, "import sys\n"
                                          "sys.modules['_ballot_guard_keeper'].end_below = "
                                          "lambda me, group: 0\n" + BUGGY,
                                     "_ballot_guard_keeper.end_below"),
    "active profile re-registered": (LISTS, "from hypothesis import settings\n"
                                            "name = settings.get_current_profile_name()\n"
                                            "settings.register_profile(name, max_examples=1)\n"
                                            + DEDUPE, "hypothesis settings profiles"),
}


# wrong against the installation's references: a ratio, a mean, a weekday, a path
REFERENCED = ("def ratio():\n    return 0.4\n"
              "def average(xs):\n    return max(xs)\n"
              "def first_weekday():\n    return 6\n"
              "def clean(p):\n    return p\n"
              "def circumference(r):\n    return 4.0 * r\n"
              "def digits():\n    return '012345678'\n")
HONEST = BUGGY + ARRANGE + DEDUPE + REFERENCED + "def prime():\n    pass\n"


def attacked(project: Repo, prop: str, code: str, attack: str) -> str:
    """The gate's report once ``code`` replaced the honest (failing) behaviour code under
    ``prop``: every run an ``error``, exit 4."""
    project.write("src/billing/__init__.py", HONEST)
    make_project(project, {"retry": prop})
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err  # the honest code fails: the oracle bites
    project.write("src/billing/__init__.py", code)
    project.commit_all(f"behaviour: {attack}")
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    card = scorecard(project)["properties"]["retry"]
    assert card["ballot"] == "error"
    assert [r["outcome"] for r in card["runs"]] == ["error", "error"]
    return res.out


def votes_pass(project: Repo, name: str, prop: str, passed: int, table: str = "") -> None:
    """An honest oracle under every check: exit 0, each run a pass of ``passed`` tests."""
    make_project(project, {name: prop}, table=table)
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    runs = scorecard(project)["properties"][name]["runs"]
    assert [(r["outcome"], r["passed"]) for r in runs] == [("pass", passed)] * 2


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_behaviour_code_that_changes_the_judge_is_an_error_naming_it(project: Repo,
                                                                     attack: str) -> None:
    prop, code, name = ATTACKS[attack]
    out = attacked(project, prop, code, attack)
    assert "replaced the test machinery" in out and name in out, out


def test_a_failing_test_beside_a_passing_one_never_votes_pass(project: Repo) -> None:
    """pytest's own counts decide: one failure among passes is a failing run."""
    project.write("src/billing/__init__.py", BUGGY)
    make_project(project, {"retry": TWO})
    res = run_cli(["gate"], project.path)
    assert res.code == 1, res.out + res.err
    runs = scorecard(project)["properties"]["retry"]["runs"]
    assert [(r["outcome"], r["passed"], r["failed"]) for r in runs] == [("fail", 1, 1)] * 2


# The fork server freezes its objects (gc.freeze), pytest's plugin manager among them,
# which hides them from gc.get_objects(); an attack unfreezes them first.
GC_PLUGIN = (
    "import gc\n"
    "gc.unfreeze()\n"
    "class _Quiet:\n"
    "    def pytest_runtest_makereport(self, item, call):\n"
    "        pass\n"
    "    def pytest_runtest_logreport(self, report):\n"
    "        report.outcome, report.longrepr = 'passed', None\n"
    "_Quiet.__module__ = '_pytest.runner'\n"
    "for obj in gc.get_objects():\n"
    "    if type(obj).__name__ == 'PytestPluginManager':\n"
    "        obj.register(_Quiet(), 'runner-extra')\n"
    + BUGGY)


def test_a_plugin_registered_through_the_garbage_collector_is_caught(project: Repo) -> None:
    """Its class claims to be pytest's own module; where its code really is decides."""
    project.write("src/billing/__init__.py", BUGGY)
    make_project(project, {"retry": TWO})
    project.write("src/billing/__init__.py", GC_PLUGIN)
    project.commit_all("behaviour: a plugin through gc")
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "a pytest plugin was registered during the run (runner-extra" in res.out, res.out
    assert "src/billing/__init__.py" in res.out


def test_a_hook_implementation_added_behind_the_managers_back_is_caught(project: Repo) -> None:
    sneak = ("import gc\n"
             "gc.unfreeze()\n"
             "def _passed(report):\n"
             "    report.outcome = 'passed'\n"
             "for obj in gc.get_objects():\n"
             "    if type(obj).__name__ == 'HookCaller' and obj.name == "
             "'pytest_runtest_logreport':\n"
             "        impl = obj.get_hookimpls()[0]\n"
             "        impl.function = _passed\n" + BUGGY)
    project.write("src/billing/__init__.py", BUGGY)
    make_project(project, {"retry": TWO})
    project.write("src/billing/__init__.py", sneak)
    project.commit_all("behaviour: a hook swapped")
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "the implementations of hook pytest_runtest_logreport" in res.out, res.out


def test_a_profile_the_oracle_loads_in_its_conftest_is_its_own_choice(project: Repo) -> None:
    """A conftest (oracle) may set Hypothesis up: only changes during the run count."""
    project.write("src/billing/__init__.py", "def dedupe(xs):\n    return sorted(set(xs))\n")
    project.write("properties/conftest.py",
                  "from hypothesis import settings\n"
                  "settings.register_profile('ci', max_examples=20)\n"
                  "settings.load_profile('ci')\n")
    make_project(project, {"retry": LISTS})
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err


def test_the_judges_recorded_fixtures_changed_before_collection_are_caught(
        project: Repo) -> None:
    """Set-up before collection is accepted (a conftest's profile, above), but not a
    change to the fixtures the runner found in the judge's plugins: behaviour code a
    conftest imports empties them before the session starts."""
    project.write("src/billing/__init__.py",
                  "import _pytest.fixtures\n"
                  "_pytest.fixtures.FixtureManager.parsefactories.__globals__"
                  "['_SCANS'].clear()\n" + BUGGY)
    project.write("properties/conftest.py", HEAD)
    make_project(project, {"retry": TWO})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert SCANS in res.out + res.err
    assert scorecard(project)["properties"]["retry"]["ballot"] == "error"


# --- the version tags the checks read before comparing values ------------------------

CHANGES = st.lists(st.tuples(st.sampled_from(["set", "same", "del", "update", "setdefault",
                                              "pop", "clear"]),
                             st.sampled_from(["a", "b", "c"])), max_size=25)


def _namespace(kind: str) -> tuple[Any, Callable[[str, Any], None], Callable[[str], None]]:
    """A namespace as the integrity check watches it (a module's dict, a class's dict
    behind its mappingproxy, a plain dict) and how code sets and deletes in it."""
    if kind == "module":
        mod = types.ModuleType("judge_like")
        return vars(mod), functools.partial(setattr, mod), functools.partial(delattr, mod)
    if kind == "class":
        cls = type("JudgeLike", (), {})
        inner = [d for d in gc.get_referents(cls.__dict__) if isinstance(d, dict)]
        return inner[0], functools.partial(setattr, cls), functools.partial(delattr, cls)
    d: dict[str, Any] = {}
    return d, d.__setitem__, d.__delitem__


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["module", "class", "dict"]), changes=CHANGES)
def test_a_namespaces_version_tag_moves_with_every_change_of_its_entries(
        kind: str, changes: list[tuple[str, str]]) -> None:
    """The checks skip a namespace whose tag has not moved: any entry added, replaced
    by another object or removed must move it, however the code makes the change."""
    assert forkserver._VIEW is not None  # CPython 3.10-3.13, as this suite runs on
    ns, put, drop = _namespace(kind)
    tag = forkserver._VIEW(ns)
    for op, key in changes:
        before = [(k, id(v)) for k, v in ns.items()]
        was = tag.value
        if op == "set":
            put(key, object())
        elif op == "same" and key in ns:
            put(key, ns[key])  # the same object again: nothing changes
        elif op == "del" and key in ns:
            drop(key)
        elif op == "update":
            ns.update({key: object()})
        elif op == "setdefault":
            ns.setdefault(key, object())
        elif op == "pop":
            ns.pop(key, None)
        elif op == "clear" and kind == "dict":
            ns.clear()
        if [(k, id(v)) for k, v in ns.items()] != before:
            assert tag.value != was, (kind, op, key)


# The run's result lies beside its TMPDIR; code under test can always find it, block the
# judge (its stdout made a full pipe, so the judge's next write waits for ever), rewrite
# the counts, the log's summary line and pytest's statistics all alike, and exit 0 itself;
# or write a result of its own before the judge does and exit 0 at once.  Nothing of the
# judge is replaced, so only the result's signature (the gate's key, never in the run's
# environment or files) can tell.
FORGER_HEAD = (
    "import os, json, sys, threading\n"
    "_dir = os.path.dirname(os.environ['TMPDIR'])\n"
    "_res, _log = os.path.join(_dir, 'result.json'), os.path.join(_dir, 'log')\n"
    "def _write(text):\n"
    "    with open(_res + '.x', 'w') as f:\n"
    "        f.write(text)\n"
    "    os.replace(_res + '.x', _res)\n"
    "    with open(_log, 'a') as f:\n"
    "        f.write('\\n2 passed in 0.01s\\n')\n"
    "    os._exit(0)\n")
FORGERS = {
    "rewritten after the judge, the judge blocked": FORGER_HEAD + (
        "def _forge():\n"
        "    r, w = os.pipe()\n"
        "    os.set_blocking(w, False)\n"
        "    try:\n"
        "        while True:\n"
        "            os.write(w, b'x' * 65536)\n"
        "    except BlockingIOError:\n"
        "        pass\n"
        "    while not os.path.exists(_res):\n"
        "        pass\n"
        "    os.dup2(w, 1)\n"
        "    os.dup2(w, 2)\n"
        "    sig, _, body = open(_res, 'rb').read().partition(b'\\n')\n"
        "    data = json.loads(body if body else sig)\n"
        "    data.update(passed=2, failed=0, errors=0, complete=True, stats={'passed': 2})\n"
        "    _write((sig.decode() + '\\n' if body else '') + json.dumps(data))\n"
        "sys.setswitchinterval(1e-6)\n"
        "threading.Thread(target=_forge, daemon=True).start()\n"),
    "written before the judge, then an exit 0": FORGER_HEAD + (
        "_write(json.dumps({'passed': 2, 'failed': 0, 'errors': 0, 'skipped': 0,\n"
        "                   'collected': 2, 'dodged': 0, 'plugins': [], 'early': [],\n"
        "                   'complete': True, 'replaced': [], 'late': [], 'registered': [],\n"
        "                   'from_main': [], 'unrepointable': [], 'stats': {'passed': 2}}))\n"),
}


@pytest.mark.parametrize("forger", sorted(FORGERS))
@pytest.mark.parametrize("mode", MODES)
def test_a_result_the_judge_did_not_sign_never_counts(project: Repo, forger: str,
                                                      mode: str) -> None:
    project.write("src/billing/__init__.py", FORGERS[forger] + BUGGY)
    make_project(project, {"retry": TWO}, table=mode)
    res = run_cli(["gate"], project.path)
    card = scorecard(project)["properties"]["retry"]
    outcomes = [r["outcome"] for r in card["runs"]]
    if forger.startswith("rewritten"):  # a race the forger may lose (the judge exits
        # first): then the run fails as the honest code does; never a pass
        assert res.code in (1, 4) and "pass" not in outcomes, res.out + res.err
    else:
        assert res.code == 4 and outcomes == ["error", "error"], res.out + res.err
    errors = [r for r in card["runs"] if r["outcome"] == "error"]
    assert [r["passed"] for r in errors] == [0] * len(errors), errors  # forged: not read
    assert card["ballot"] == ("error" if errors else "fail")
    if outcomes == ["error", "error"]:
        assert "does not carry the judge's signature" in res.out, res.out


# Behaviour code that changes what the oracle's own modules hold, nothing of the judge:
# the property's module swapped in ``sys.modules`` while it imports (pytest collects the
# one there), a reference shadowed in its globals, one of its imports rebound, a
# reference injected once the tests run.  Found through the property's file, as any
# code could.
FIND = ("import sys, types\n"
        "_prop = next(m for m in list(sys.modules.values())\n"
        "             if str(getattr(m, '__file__', '')).endswith('test_retry.py'))\n")
ST_FIRST = ("from hypothesis import given, strategies as st\n" + HEAD +
            "@given(st.lists(st.integers()))\n"
            "def test_no_duplicates(xs):\n"
            "    assert billing.dedupe(xs) == sorted(set(xs))\n")
LATE = HEAD + ("def test_first():\n    billing.prime()\n"
               "def test_sorted_like_the_reference():\n"
               "    xs = [3, 1, 2]\n"
               "    assert billing.arrange(xs) == sorted(xs)\n")
SWAPS = {
    "the property's module swapped": (TWO, FIND + (
        "_fake = types.ModuleType(_prop.__name__)\n"
        "_fake.__file__ = _prop.__file__\n"
        "exec('def test_fine():\\n    pass\\ndef test_retry_cap():\\n    pass\\n',\n"
        "     _fake.__dict__)\n"
        "sys.modules[_prop.__name__] = _fake\n") + BUGGY, "not the oracle's"),
    "a reference shadowed": (SORTS, FIND + "_prop.sorted = lambda xs: list(xs)\n" + ARRANGE,
                             "put there"),
    "an import rebound": (ST_FIRST, FIND + (
        "_real = _prop.st\n"
        "_prop.st = types.SimpleNamespace(**{**vars(_real),\n"
        "                                   'lists': lambda *a, **k: _real.just([])})\n")
        + DEDUPE, "not what its import gives"),
    "the property's builtins replaced": (SORTS, FIND + (
        "import builtins\n"
        "_prop.__builtins__ = {**vars(builtins), 'sorted': lambda xs: list(xs)}\n")
        + ARRANGE, "__builtins__"),
    "a later test's code swapped while the tests run": (HEAD + (
        "def test_first():\n    billing.prime()\n"
        "def test_retry_cap():\n    assert billing.max_attempts() == 3\n"), (
        "def prime():\n" + "".join("    " + line + "\n" for line in FIND.splitlines())
        + "    _prop.test_retry_cap.__code__ = (lambda: None).__code__\n") + BUGGY,
        "the test function test_retry.test_retry_cap"),
    "a test's code swapped for code that claims its file and line": ((
        "def test_retry_cap():\n    assert billing.max_attempts() == 3\n") + HEAD, FIND + (
        "_was = _prop.test_retry_cap.__code__\n"
        "_prop.test_retry_cap.__code__ = (lambda: None).__code__.replace(\n"
        "    co_filename=_was.co_filename, co_firstlineno=_was.co_firstlineno,\n"
        "    co_name=_was.co_name)\n") + BUGGY, "compiles to"),
    "a test's code swapped in a file pytest does not rewrite": ((
        '"""PYTEST_DONT_REWRITE"""\n'
        "def test_retry_cap():\n    assert billing.max_attempts() == 3\n") + HEAD, FIND + (
        "_was = _prop.test_retry_cap.__code__\n"
        "_prop.test_retry_cap.__code__ = (lambda: None).__code__.replace(\n"
        "    co_filename=_was.co_filename, co_firstlineno=_was.co_firstlineno,\n"
        "    co_name=_was.co_name)\n") + BUGGY, "compiles to"),
    "a function of a standard module the oracle uses replaced": (
        "import math\n" + HEAD + (
            "def test_half():\n    assert math.isclose(billing.ratio(), 0.5)\n"),
        "import math\nmath.isclose = lambda *a, **k: True\n" + REFERENCED,
        "math.isclose (of math"),
    "a function of an installed library replaced before the property imports it": (
        "import pathspec.util\n" + HEAD + (
            "def test_clean():\n"
            "    assert billing.clean('./a/b') == pathspec.util.normalize_file('./a/b')\n"),
        "import pathspec.util\npathspec.util.normalize_file = lambda p, *a, **k: p\n"
        + REFERENCED, "pathspec.util.normalize_file (code of"),
    "a standard module's function rebound to another one before the property imports it": (
        "from statistics import mean\n" + HEAD + (
            "def test_average():\n    assert billing.average([1, 2, 3]) == mean([1, 2, 3])\n"),
        "import statistics\nstatistics.mean = max\n" + REFERENCED,
        "statistics.mean (of statistics"),
    "a standard module swapped in sys.modules before the property imports it": (
        HEAD + "import statistics\n" + (
            "def test_average():\n"
            "    assert billing.average([1, 2, 3]) == statistics.mean([1, 2, 3])\n"),
        "import sys, types\n"
        "sys.modules['statistics'] = types.SimpleNamespace(mean=max)\n" + REFERENCED,
        "statistics (another module under its name"),
    "a constant of a standard module rebound": (
        "import calendar\n" + HEAD + (
            "def test_first_weekday():\n"
            "    assert billing.first_weekday() == calendar.MONDAY\n"),
        "import calendar\ncalendar.MONDAY = 6\n" + REFERENCED, "calendar.MONDAY (of calendar"),
    "a number of a standard module rebound": (
        "import math\n" + HEAD + (
            "def test_circumference():\n"
            "    assert billing.circumference(1) == 2 * math.pi\n"),
        "import math\nmath.pi = 2.0\n" + REFERENCED, "math.pi (of math"),
    "a text constant of a standard module rebound": (
        "import string\n" + HEAD + (
            "def test_digits():\n    assert billing.digits() == string.digits\n"),
        "import string\nstring.digits = '012345678'\n" + REFERENCED,
        "string.digits (of string"),
    "a constant of the oracle rebound": ("EXPECTED = 3\n" + HEAD + (
        "def test_retry_cap():\n    assert billing.max_attempts() == EXPECTED\n"),
        FIND + "_prop.EXPECTED = 4\n" + BUGGY, "not the value its code gives"),
    "a reference injected while the tests run": (LATE, (
        "def prime():\n" + "".join("    " + line + "\n" for line in FIND.splitlines())
        + "    _prop.sorted = lambda xs: list(xs)\n") + ARRANGE, "test_retry.sorted"),
}


@pytest.mark.parametrize("attack", sorted(SWAPS))
def test_what_the_oracles_modules_hold_is_their_own_code(project: Repo, attack: str) -> None:
    prop, code, name = SWAPS[attack]
    out = attacked(project, prop, code, attack)
    assert "what the oracle's modules hold is not what their code defines" in out
    assert name in out, out


def test_an_oracle_with_classes_helpers_and_decorators_still_votes(project: Repo) -> None:
    """What the oracle's code binds, however it binds it, is its own."""
    project.write("properties/__init__.py", "")  # a package: its submodules are set on it
    project.write("properties/helpers.py", "import functools\n"
                  "def reference(xs):\n    return sorted(xs)\n"
                  "def logged(f):\n    @functools.wraps(f)\n"
                  "    def inner(*a, **k):\n        return f(*a, **k)\n    return inner\n")
    prop = ("import sys, pathlib\n"
            "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))\n"
            "import pytest\n"
            "from hypothesis import given, strategies as st\n"
            "import helpers\nfrom helpers import reference as ref\n"
            "try:\n    import tomllib as toml\nexcept ImportError:\n    toml = None\n"
            "CASES = [(x, x) for x in range(3)]\n"
            "LIMIT = 3\n"
            "class TestSorted:\n"
            "    @helpers.logged\n"
            "    def test_reference(self):\n        assert ref([2, 1]) == [1, 2]\n"
            "@given(st.lists(st.integers()))\n"
            "def test_idempotent(xs):\n    assert ref(ref(xs)) == ref(xs)\n"
            "@pytest.mark.parametrize('a, b', CASES)\n"
            "def test_cases(a, b):\n    global SEEN, LIMIT\n    SEEN, LIMIT = a, LIMIT\n"
            "    assert a == b < LIMIT\n")
    votes_pass(project, "sorting", prop, 5)


def test_an_oracle_using_standard_modules_still_votes(project: Repo) -> None:
    """The modules of the installation the oracle imports are watched, not frozen: their
    state moves (a seed, recorded warnings, log handlers), a test may patch them with
    pytest's ``monkeypatch`` (undone after it), and a conftest may set them up."""
    project.write("properties/conftest.py", "import random\nrandom.seed(7)\n")
    prop = ("import logging, math, os, random, statistics, tempfile, time, warnings\n"
            "from statistics import mean\n"
            "import xml.etree.ElementTree as ET\n"
            "def test_state_moves():\n"
            "    random.seed(3)\n"
            "    logging.getLogger('x').warning('logged')\n"
            "    warnings.warn('careful')\n"
            "    assert random.randint(1, 1) == 1 and mean([1, 3]) == statistics.mean([3, 1])\n"
            "    assert ET.fromstring('<a/>').tag == 'a' and tempfile.gettempdir()\n"
            "def test_time_zone(monkeypatch):\n"
            "    monkeypatch.setenv('TZ', 'UTC+3')\n"
            "    time.tzset()\n"
            "    assert time.timezone == 3 * 3600\n"
            "def test_patched_for_one_test(monkeypatch):\n"
            "    monkeypatch.setattr(math, 'isclose', lambda *a, **k: False)\n"
            "    assert not math.isclose(1.0, 1.0)\n"
            "def test_as_installed():\n"
            "    assert math.isclose(0.1 + 0.2, 0.3) and math.cos(math.pi) == -1.0\n"
            "    assert tempfile.template and os.sep == '/'\n")
    votes_pass(project, "stdlib", prop, 4)


@pytest.mark.parametrize("plain", ["docstring", "config"])
def test_an_oracle_pytest_does_not_rewrite_still_votes(project: Repo, plain: str) -> None:
    """A file compiled as the import system compiles it (``PYTEST_DONT_REWRITE``, or
    ``--assert=plain``) is compared with that compile, and its honest code votes."""
    prop = ("import pytest\n"
            "def helper(xs):\n    return sorted(xs)\n"
            "class TestSorted:\n"
            "    def test_reference(self):\n"
            "        def inner():\n            return helper([2, 1])\n"
            "        assert inner() == [1, 2]\n"
            "@pytest.mark.parametrize('x', [1, 2])\n"
            "def test_cases(x):\n    assert helper([x]) == [x]\n")
    table = ""
    if plain == "docstring":
        prop = '"""PYTEST_DONT_REWRITE"""\n' + prop
    else:
        table = '[tool.pytest.ini_options]\naddopts = "--assert=plain"\n'
    votes_pass(project, "sorting", prop, 3, table)


def test_a_tracer_set_while_a_conftest_imports_the_code_under_test_is_caught(
        project: Repo) -> None:
    """Set before the point where set-up is accepted (a conftest imports the package),
    a trace function that is not the judge's is still named."""
    project.write("properties/conftest.py", HEAD)
    project.write("src/billing/__init__.py", JUMPER + BUGGY)
    make_project(project, {"retry": SKIPPED})
    res = run_cli(["gate"], project.path)
    assert res.code == 4, res.out + res.err
    assert "sys.settrace" in res.out, res.out
    assert [r["outcome"] for r in scorecard(project)["properties"]["retry"]["runs"]] == \
        ["error", "error"]


NO_KEY_IN_SIGHT = (
    "import os\n"
    "def test_the_key_is_not_in_sight():\n"
    "    pid, seen = os.getpid(), []\n"
    "    while pid > 1:\n"
    "        with open(f'/proc/{pid}/cmdline', 'rb') as f:\n"
    "            seen.append(f.read())\n"
    "        with open(f'/proc/{pid}/stat', 'rb') as f:\n"
    "            pid = int(f.read().rsplit(b')', 1)[1].split()[1])\n"
    "    assert seen and not any(b'\"key\"' in s for s in seen)\n"
    "    assert not any('key' in k.lower() for k in os.environ if k.startswith('BALLOT'))\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_one_process_per_run_gets_its_key_on_stdin_alone(project: Repo,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the fork server, each run's request is a command line: the key is not
    in it (nor in any ancestor's), and a result the run forges is still refused."""
    monkeypatch.setenv("BALLOT_GUARD_NO_FORK", "1")
    make_project(project, {"sight": NO_KEY_IN_SIGHT})
    res = run_cli(["gate"], project.path)
    assert res.code == 0, res.out + res.err
    project.write("src/billing/__init__.py",
                  FORGERS["written before the judge, then an exit 0"] + BUGGY)
    make_project(project, {"retry": TWO})
    res = run_cli(["gate", "--property", "retry"], project.path)
    assert res.code == 4, res.out + res.err
    assert "does not carry the judge's signature" in res.out, res.out


# Code under test that climbs its process's ancestors and opens their pipes through
# /proc (the keeper's report to the runner, the runner's replies to the gate), where a
# forged line would end a run early.  Each ancestor it may open, and whether it can
# still see its own descriptors, is what it asserts about.
REACHES = (
    "import os, subprocess, sys\n"
    "def _parent(pid):\n"
    "    with open(f'/proc/{pid}/stat', 'rb') as f:\n"
    "        return int(f.read().rsplit(b')', 1)[1].split()[1])\n"
    "def test_the_judge_is_out_of_reach():\n"
    "    look = f'open(\"/proc/{os.getpid()}/environ\", \"rb\").read()'\n"
    "    subprocess.run([sys.executable, '-c', look], check=True)  # open, as any process\n"
    "    pid, opened = _parent(os.getpid()), []\n"
    "    for _ in range(2):  # its keeper, then the runner (or the gate, without one)\n"
    "        try:\n"
    "            fds = os.listdir(f'/proc/{pid}/fd')\n"
    "        except OSError:\n"
    "            fds = []\n"
    "        for fd in fds:\n"
    "            try:\n"
    "                if os.readlink(f'/proc/{pid}/fd/{fd}').startswith('pipe:'):\n"
    "                    os.close(os.open(f'/proc/{pid}/fd/{fd}', os.O_RDONLY | os.O_NONBLOCK))\n"
    "                    opened.append((pid, fd))\n"
    "            except OSError:\n"
    "                pass\n"
    "        pid = _parent(pid)\n"
    "    assert opened == []\n")


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("setpriv") is None,
                    reason="reads /proc; drops capabilities with setpriv")
@pytest.mark.parametrize("fresh", [False, True], ids=["forked", "fresh"])
def test_a_run_cannot_open_the_pipes_of_its_keeper_or_runner(project: Repo,
                                                              fresh: bool) -> None:
    """At the hermetic level the runner and each keeper cannot be looked into through
    /proc by the run's user (without CAP_SYS_PTRACE, which the gate runs without
    here), and the run's own process still can be (by a process it starts)."""
    make_project(project, {"reach": REACHES}, table='sandbox = "off"\n')
    env = {**os.environ, **({"BALLOT_GUARD_NO_FORK": "1"} if fresh else {})}
    res = subprocess.run(["setpriv", "--inh-caps=-all", "--bounding-set=-all",
                          sys.executable, "-m", "ballot_guard", "gate"], cwd=project.path,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    runs = scorecard(project)["properties"]["reach"]["runs"]
    assert [(r["outcome"], r["passed"]) for r in runs] == [("pass", 1)] * 2
