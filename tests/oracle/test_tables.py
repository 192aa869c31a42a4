"""pyproject.toml / setup.cfg / tox.ini are judged by table: parsed data, not lines."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.oracle import tables
from ballot_guard.vocabulary import SOURCES
from testing.helpers import Repo
from testing.scope_support import adopt, judged_as, scope_json

BASE_TOML = """\
[project]
name = "demo"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"

[tool.ballot_guard]
repeats = 2
"""

TOML_CASES = [
    ("judge only", BASE_TOML.replace('"-q"', '"-q -p no:randomly"'), "oracle"),
    ("ballot_guard only", BASE_TOML.replace("repeats = 2", "repeats = 3"), "oracle"),
    ("other only", BASE_TOML.replace('"1.0"', '"1.1"'), "behavior"),
    ("both", BASE_TOML.replace('"1.0"', '"1.1"').replace("repeats = 2", "repeats = 3"), "both"),
    ("comment only", BASE_TOML.replace("[project]", "# a comment\n[project]  # here"), "neutral"),
    ("layout only", BASE_TOML.replace('name = "demo"', "name   =   'demo'\n\n"), "neutral"),
    ("new tool table", BASE_TOML + "[tool.ruff]\nline-length = 99\n", "behavior"),
    ("new pytest table", BASE_TOML + "[tool.pytest]\nminversion = '9'\n", "oracle"),
    ("unparseable new", BASE_TOML + "[tool.ballot_guard\n", "oracle"),
    ("not utf-8", BASE_TOML.encode() + b"# \xff\n", "oracle"),
]


@pytest.mark.parametrize("name, new, expected", TOML_CASES, ids=[c[0] for c in TOML_CASES])
def test_pyproject_by_table(name: str, new: str | bytes, expected: str) -> None:
    data = new if isinstance(new, bytes) else new.encode()
    assert tables.judge("pyproject.toml", BASE_TOML.encode(), data) == expected


def test_missing_side_is_an_empty_document() -> None:
    judge_only = b"[tool.ballot_guard]\nrepeats = 3\n"
    assert tables.judge("pyproject.toml", None, judge_only) == "oracle"
    assert tables.judge("pyproject.toml", judge_only, None) == "oracle"
    assert tables.judge("pyproject.toml", None, b"[project]\nname='x'\n") == "behavior"
    assert tables.judge("pyproject.toml", None, BASE_TOML.encode()) == "both"
    assert tables.judge("pyproject.toml", None, b"# only a comment\n") == "neutral"
    assert tables.judge("pyproject.toml", b"[tool.ballot_guard\n", None) == "oracle"


INI = "[metadata]\nname = demo\n\n[tool:pytest]\naddopts = -q\n"


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini"])
@pytest.mark.parametrize("new, expected", [
    (INI.replace("addopts = -q", "addopts = -q -x"), "oracle"),
    (INI.replace("name = demo", "name = demo2"), "behavior"),
    (INI.replace("name = demo", "name = demo2").replace("-q", "-x"), "both"),
    ("; comment\n" + INI.replace("\n\n", "\n\n# more\n\n"), "neutral"),
    (INI + "[pytest]\naddopts = -x\n", "oracle"),
    (INI + "[testenv]\ncommands = pytest\n", "behavior"),
    (INI + "[metadata]\nname = dup\n", "oracle"),  # duplicate section: does not parse
    (INI + "no section line\n", "oracle"),
], ids=["judge", "other", "both", "comment", "new-pytest", "new-other", "dup", "junk"])
def test_ini_files_by_section(name: str, new: str, expected: str) -> None:
    assert tables.judge(name, INI.encode(), new.encode()) == expected


def test_ini_default_section_is_ordinary_data() -> None:
    """[DEFAULT] would leak into every section in configparser; here it is its own table."""
    old = INI.encode()
    new = (INI + "[DEFAULT]\nx = 1\n").encode()
    assert tables.judge("setup.cfg", old, new) == "behavior"


# --- on real repositories --------------------------------------------------------------------

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("new, oracle, behavior, neutral", [
    (BASE_TOML.replace("repeats = 2", "repeats = 3"), ["pyproject.toml"], [], []),
    (BASE_TOML.replace('"1.0"', '"1.1"'), [], ["pyproject.toml"], []),
    (BASE_TOML.replace('"1.0"', '"1.1"').replace("repeats = 2", "repeats = 3"),
     ["pyproject.toml"], ["pyproject.toml"], []),
    ("# comment\n" + BASE_TOML, [], [], ["pyproject.toml"]),
    (BASE_TOML + "[broken\n", ["pyproject.toml"], [], []),
    (None, ["pyproject.toml"], ["pyproject.toml"], []),
], ids=["judge", "other", "both", "comment", "unparseable", "deleted"])
def test_table_file_on_every_source(repo: Repo, tmp_path: Path, source: str, new: str | None,
                                    oracle: list[str], behavior: list[str],
                                    neutral: list[str]) -> None:
    adopt(repo, BASE_TOML)
    if new is None:
        repo.git("rm", "-q", "pyproject.toml")
    else:
        repo.write("pyproject.toml", new)
        repo.stage()
    code, out = scope_json(repo, *judged_as(repo, source, tmp_path))
    assert (out["oracle"], out["behavior"], out["neutral"]) == (oracle, behavior, neutral)
    assert code == (1 if oracle and behavior else 0)


def test_new_pyproject_with_only_judge_tables_is_oracle_alone(repo: Repo) -> None:
    adopt(repo)
    repo.write("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n")
    repo.stage()
    assert scope_json(repo)[1]["oracle"] == ["pyproject.toml"]


def test_table_file_in_an_ancestor_of_the_properties_dir(repo: Repo) -> None:
    adopt(repo, "[tool.ballot_guard]\nproperties_dir = 'tests/props'\n")
    repo.write("tests/props/test_a.py", "x\n")
    repo.write("tests/setup.cfg", "[tool:pytest]\naddopts = -q\n")
    repo.write("src/setup.cfg", "[tool:pytest]\naddopts = -q\n")  # not read for the properties
    repo.commit_all("layout")
    repo.write("tests/setup.cfg", "[tool:pytest]\naddopts = -x\n")
    repo.write("src/setup.cfg", "[tool:pytest]\naddopts = -x\n")
    repo.stage()
    code, out = scope_json(repo)
    assert out["oracle"] == ["tests/setup.cfg"] and out["behavior"] == ["src/setup.cfg"]
    assert code == 1


def test_table_file_also_listed_in_neutral_paths(repo: Repo) -> None:
    adopt(repo, BASE_TOML + "neutral_paths = ['pyproject.toml']\n")
    repo.write("pyproject.toml", BASE_TOML.replace('"1.0"', '"1.1"')
               + "neutral_paths = ['pyproject.toml']\n")
    repo.stage()
    assert scope_json(repo)[1]["neutral"] == ["pyproject.toml"]
    repo.write("pyproject.toml", BASE_TOML.replace("repeats = 2", "repeats = 3")
               + "neutral_paths = ['pyproject.toml']\n")
    repo.stage()
    assert scope_json(repo)[1]["oracle"] == ["pyproject.toml"]


_INI_OR_TOML = st.lists(st.one_of(
    st.sampled_from(["[pytest]", "[tool:pytest]", "[tool.pytest.ini_options]", "[project]",
                     "[tool.ballot_guard]", "[DEFAULT]", "a = 1", "a=", "b : 2", "  indented",
                     "# c", "; c", "x = [1,", "[[arr]]", "[", "=", "addopts = -q", "%(x)s"]),
    st.text(max_size=10)), max_size=8).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(["pyproject.toml", "setup.cfg", "tox.ini"]),
       old=st.one_of(st.none(), _INI_OR_TOML), new=st.one_of(st.none(), _INI_OR_TOML))
def test_any_content_gets_a_verdict(name: str, old: str | None, new: str | None) -> None:
    """Whatever the two sides hold, the judgement is one of the four, never a crash."""
    def enc(t):
        return (None if t is None else t.encode("utf-8", "surrogatepass"))
    verdict = tables.judge(name, enc(old), enc(new))
    assert verdict in ("oracle", "behavior", "both", "neutral")
    if old == new:
        assert verdict in ("neutral", "oracle")  # oracle only when it does not parse


def test_nan_is_equal_to_itself() -> None:
    doc = b"[project]\nx = nan\n[tool.ballot_guard]\ny = nan\n"
    assert tables.judge("pyproject.toml", doc, doc + b"# comment\n") == "neutral"
