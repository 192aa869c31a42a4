"""split of pyproject.toml / setup.cfg / tox.ini by table."""
from __future__ import annotations

import re
from typing import Any

import pytest

from ballot_guard.errors import CannotJudge
from ballot_guard.oracle import tables
from ballot_guard.split.split import split_staged
from ballot_guard.split.tables import CannotSplit, intermediate
from testing.helpers import Repo
from testing.split_support import index, names, on_base, state, unchanged

CLASSIFY: Any = None

OLD = """\
# the project
[project]
name = "billing"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"

[tool.black]
line-length = 100
"""

NEW = """\
# the project
[project]
name = "billing"
version = "1.1"
dependencies = ["requests"]

[tool.pytest.ini_options]
addopts = "-q -p no:randomly"
markers = [
  "slow: [not] a header",
]

[tool.black]
line-length = 100
"""


def check(name: str, old: str | None, new: str | None) -> str | None:
    o = None if old is None else old.encode()
    n = None if new is None else new.encode()
    got = intermediate(name, o, n)
    judge, other = tables.split(name, got)
    assert judge == tables.split(name, n)[0]
    assert other == tables.split(name, o)[1]
    return None if got is None else got.decode()


def test_judge_edit_applied_other_edit_left_out() -> None:
    got = check("pyproject.toml", OLD, NEW)
    assert got == OLD.replace('addopts = "-q"\n', 'addopts = "-q -p no:randomly"\nmarkers = [\n'
                              '  "slow: [not] a header",\n]\n')


@pytest.mark.parametrize("old, new", [
    pytest.param(None, '[project]\nname = "x"\n\n[tool.ballot_guard]\nrepeats = 3\n',
                 id="new file"),
    pytest.param('[project]\nname = "x"\n\n[tool.ballot_guard]\nrepeats = 3\n', None,
                 id="deleted file"),
    pytest.param('[project]\nname = "x"\n', '[project]\nname = "y"\n\n[tool.pytest]\nx = 1\n',
                 id="new judge table at the end"),
    pytest.param('[project]\nname = "x"', '[tool.ballot_guard]\nrepeats = 3\n[project]\nname = "y"',
                 id="new judge table first, no final newline"),
    pytest.param('[project]\nname = "x"\n[tool.pytest.ini_options]\na = 1\n[tool.x]\nb = 2\n',
                 '[project]\nname = "z"\n[tool.x]\nb = 3\n', id="judge table removed"),
    pytest.param('[tool.pytest.ini_options]\nx = """\n[project]\n"""\n[a]\nb = 1\n',
                 '[tool.pytest.ini_options]\nx = """\n[project]\nname\n"""\n[a]\nb = 2\n',
                 id="header-like line inside a multi-line string"),
    pytest.param('[[tool.pytest.ini_options.x]]\na = 1\n[[tool.pytest.ini_options.x]]\na = 2\n'
                 '[z]\nq = 1\n',
                 '[[tool.pytest.ini_options.x]]\na = 1\n[[tool.pytest.ini_options.x]]\na = 3\n'
                 '[z]\nq = 2\n', id="arrays of tables"),
])
def test_toml_cases(old: str | None, new: str | None) -> None:
    check("pyproject.toml", old, new)


@pytest.mark.parametrize("name, old, new", [
    ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n",
     "[metadata]\nname = y\n\n[tool:pytest]\naddopts = -q -x\n"),
    ("tox.ini", "[tox]\nenvlist = py3\n", "[tox]\nenvlist = py3,py4\n[pytest]\nxfail_strict = true\n"),
    ("setup.cfg", "[tool:pytest]\naddopts =\n  -q\n  [x]\n[flake8]\nmax = 1\n",
     "[tool:pytest]\naddopts =\n  -q\n  [y]\n[flake8]\nmax = 2\n"),
])
def test_ini_cases(name: str, old: str, new: str) -> None:
    check(name, old, new)


@pytest.mark.parametrize("old, new", [
    pytest.param('[tool]\npytest.ini_options.addopts = "-q"\nblack.x = 1\n',
                 '[tool]\npytest.ini_options.addopts = "-x"\nblack.x = 2\n',
                 id="judge and other keys in one table"),
    pytest.param('tool.pytest.ini_options.addopts = "-q"\nname = 1\n',
                 'tool.pytest.ini_options.addopts = "-x"\nname = 2\n',
                 id="dotted judge keys at the top level"),
])
def test_interleaved_tables_are_refused(old: str, new: str) -> None:
    assert tables.judge("pyproject.toml", old.encode(), new.encode()) == tables.BOTH
    with pytest.raises(CannotSplit, match=re.escape("pyproject.toml")):
        intermediate("pyproject.toml", old.encode(), new.encode())


def test_staged_pyproject_is_split_by_table(repo: Repo) -> None:
    old_head = on_base(repo, {"pyproject.toml": OLD}, "pyproject", {
        "pyproject.toml": NEW, "properties/test_retry.py": "changed\n",
        "src/billing.py": "RETRIES = 9\n"})
    before = index(repo)
    files = state(repo)["files"]
    out = split_staged(str(repo.path), classify=CLASSIFY)
    assert out.tables == ("pyproject.toml",)
    assert names(repo, "diff-tree", "-r", old_head, "HEAD") == {
        "pyproject.toml", "properties/test_retry.py"}
    middle = repo.git("show", "HEAD:pyproject.toml").encode()
    assert tables.split("pyproject.toml", middle)[0] == tables.split("pyproject.toml",
                                                                      NEW.encode())[0]
    assert tables.split("pyproject.toml", middle)[1] == tables.split("pyproject.toml",
                                                                      OLD.encode())[1]
    # the full new file stays staged; the rest of the behaviour too
    assert index(repo) == before and state(repo)["files"] == files
    assert names(repo, "diff", "--cached") == {"pyproject.toml", "src/billing.py"}
    staged = repo.git("show", ":pyproject.toml").encode()
    assert tables.judge("pyproject.toml", middle, staged) == tables.BEHAVIOR


def test_pyproject_alone_on_both_sides_is_split(repo: Repo) -> None:
    on_base(repo, {"pyproject.toml": OLD}, "pyproject", {"pyproject.toml": NEW})
    out = split_staged(str(repo.path), classify=CLASSIFY)
    assert out.oracle_commit is not None and out.tables == ("pyproject.toml",)
    assert names(repo, "diff", "--cached") == {"pyproject.toml"}


def test_unsplittable_pyproject_is_refused_and_changes_nothing(repo: Repo) -> None:
    on_base(repo, {"pyproject.toml": '[tool]\npytest.ini_options.addopts = "-q"\nblack.x = 1\n'},
            "pyproject",
            {"pyproject.toml": '[tool]\npytest.ini_options.addopts = "-x"\nblack.x = 2\n',
             "properties/test_retry.py": "changed\n"})
    objects = repo.git("count-objects", "-v")
    with unchanged(repo), pytest.raises(CannotJudge,
                                        match=re.escape("cannot split pyproject.toml")):
        split_staged(str(repo.path), classify=CLASSIFY)
    assert repo.git("count-objects", "-v") == objects


# ---- any layout of separate tables splits, and exactly ------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TOML_TABLES = ("project", "tool.black", "tool.setuptools", "tool.pytest.ini_options",
               "tool.ballot_guard", "tool.pytest", "tool.pytest.ini_options.markers")
INI_TABLES = ("metadata", "flake8", "tool:pytest", "pytest", "options")
VALUES = st.one_of(st.integers(-5, 5), st.sampled_from(['"a"', '"[b]"', "'#c'", '"""\n[x]\n"""',
                                                        "[\n  [1, 2],\n  [3]\n]"]),
                   st.lists(st.sampled_from(['"p"', '"[q]"', "1"]), max_size=3).map(
                       lambda xs: "[\n  " + ",\n  ".join(xs) + "\n]" if xs else "[]"))
DOC = st.dictionaries(st.sampled_from(TOML_TABLES),
                      st.dictionaries(st.sampled_from(["k", "v", "w"]), VALUES, max_size=3),
                      max_size=5)
INI_DOC = st.dictionaries(st.sampled_from(INI_TABLES),
                          st.dictionaries(st.sampled_from(["k", "v"]),
                                          st.sampled_from(["1", "two", "\n  a\n  [b]", ""]),
                                          max_size=2), max_size=4)


def render(doc: dict[str, dict[str, Any]], order: list[int], toml: bool) -> str:
    names = sorted(doc, key=lambda n: order[(list(doc).index(n)) % len(order)])
    out = ["# generated\n"]
    for name in names:
        out.append(f"\n[{name}]  # t\n" if toml else f"\n[{name}]\n")
        for key, value in doc[name].items():
            out.append(f"{key} = {value}\n")
    return "".join(out)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), DOC), st.one_of(st.none(), DOC),
       st.lists(st.integers(0, 9), min_size=1, max_size=6))
def test_any_toml_layout_of_separate_tables_splits(old: Any, new: Any, order: list[int]) -> None:
    old_text = None if old is None else render(old, order, True)
    new_text = None if new is None else render(new, order[::-1], True)
    check("pyproject.toml", old_text, new_text)


@settings(max_examples=100, deadline=None)
@given(INI_DOC, INI_DOC, st.lists(st.integers(0, 9), min_size=1, max_size=6),
       st.sampled_from(["setup.cfg", "tox.ini"]))
def test_any_ini_layout_splits(old: Any, new: Any, order: list[int], name: str) -> None:
    check(name, render(old, order, False), render(new, order, False))


def test_staged_setup_cfg_is_split_by_section(repo: Repo) -> None:
    on_base(repo, {"setup.cfg": "[metadata]\nname = billing\n\n[tool:pytest]\naddopts = -q\n"},
            "setup.cfg",
            {"setup.cfg": "[metadata]\nname = billing2\n\n[tool:pytest]\naddopts = -x\n"})
    out = split_staged(str(repo.path))
    assert out.tables == ("setup.cfg",)
    assert repo.git("show", "HEAD:setup.cfg") == \
        "[metadata]\nname = billing\n\n[tool:pytest]\naddopts = -x\n"
    assert names(repo, "diff", "--cached") == {"setup.cfg"}
