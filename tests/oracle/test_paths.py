"""Which paths are the judge: the built-in oracle, user patterns, neutral, behaviour."""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.change.from_git import Change
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.config import Config
from ballot_guard.git import Snapshot, empty_tree
from ballot_guard.oracle.names import HOOK_FILES, ancestors, normal
from ballot_guard.oracle.paths import Judge, classify
from testing.helpers import init_repo

ROOT = "/nonexistent/repo"
DEFAULT = Judge(ROOT, Config())
NESTED_CONFIG = Config(properties_dir="tests/props", fixtures_dir="tests/data/fx",
                       digest_file="tests/pin.txt", freeze_file="tests/frozen.json")
NESTED = Judge(ROOT, NESTED_CONFIG)


@pytest.mark.parametrize("path", [
    "properties/test_a.py", "properties/sub/deeper/helper.py", "properties",
    "fixtures/cases.json", "fixtures/x/y.bin", "fixture_digest.txt", "freeze_set.json",
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
    ".pre-commit-config.yaml", ".venv/bin/python", ".venv/lib/site.py",
    # case and Unicode variants cannot slip past
    "Properties/x.py", "PROPERTIES/test_a.py", "FIXTURES/c.json", "PYTEST.INI",
    "Conftest.py", "Fixture_Digest.TXT", ".Pre-Commit-Config.yaml",
    # normalised paths
    "properties/./test_a.py", "properties//test_a.py", "./properties/test_a.py",
    "src/../properties/test_a.py",
])
def test_default_oracle_paths(path: str) -> None:
    assert DEFAULT.kind(path) == "oracle"


@pytest.mark.parametrize("path", [
    "src/app.py", "propertiesx/test.py", "fixtures.py", "src/conftest.py",
    "src/pytest.ini", "tests/conftest.py", "my_fixture_digest.txt", "venv/bin/python",
    "src/properties/test_a.py", "setup.py",
    # neutral never covers code, and LICENSE* / CHANGELOG* match at the root only
    "docs/a/b/c.py", "docs/stub.pyi", "docs/x.PYC", "docs/ext.cpython-311-x86_64-linux-gnu.so",
    "docs/lib.so.1", "docs/mod.pyd", "docs/mod.pyx", "docs/evil.pth", "README.py",
    "src/LICENSE_impl.py", "src/LICENSE", "pkg/CHANGELOG.txt", "docs/test_usage.txt",
])
def test_default_behaviour_paths(path: str) -> None:
    assert DEFAULT.kind(path) == "behavior"


@pytest.mark.parametrize("path", [
    "README.md", "docs/index.html", "docs/usage.txt", "LICENSE", "LICENSE.txt",
    "CHANGELOG.rst", "src/notes.md",
])
def test_default_neutral_paths(path: str) -> None:
    assert DEFAULT.kind(path) == "neutral"


def test_neutral_patterns_match_as_written_oracle_case_insensitively() -> None:
    assert DEFAULT.kind("README.MD") == "behavior"  # neutral is not widened by case
    judge = Judge(ROOT, Config(oracle_paths=("Specs/**",), neutral_paths=("specs/**",)))
    assert judge.kind("specs/a.txt") == "oracle"  # oracle wins over neutral
    assert judge.kind("SPECS/b/c.txt") == "oracle"


@pytest.mark.parametrize("path, kind", [
    ("tests/props/test_a.py", "oracle"), ("tests/data/fx/a", "oracle"),
    ("tests/pin.txt", "oracle"), ("tests/frozen.json", "oracle"),
    ("conftest.py", "oracle"), ("tests/conftest.py", "oracle"), ("tests/props/conftest.py", "oracle"),
    ("tests/pytest.ini", "oracle"), ("tests/.pytest.toml", "oracle"),
    ("tests/other/conftest.py", "behavior"), ("tests/data/conftest.py", "behavior"),
    ("tests/__init__.py", "oracle"), ("__init__.py", "oracle"),
    ("tests/other/__init__.py", "behavior"), ("src/__init__.py", "behavior"),
    ("properties/test_a.py", "behavior"), ("fixtures/x", "behavior"),
    ("pyproject.toml", "table"), ("tests/setup.cfg", "table"), ("tests/tox.ini", "table"),
    ("src/pyproject.toml", "behavior"), ("TESTS/Tox.INI", "table"),
])
def test_ancestors_of_a_nested_properties_dir(path: str, kind: str) -> None:
    assert NESTED.kind(path) == kind


def test_ancestors() -> None:
    assert ancestors("properties") == [""]
    assert ancestors("tests/props") == ["", "tests"]
    assert ancestors("a/b/c/") == ["", "a", "a/b"]


def test_user_oracle_paths_are_gitignore_patterns() -> None:
    judge = Judge(ROOT, Config(oracle_paths=("ci/", "*.lock", "/Makefile", "tools/**/gen_*.py")))
    assert judge.kind("ci/run") == "oracle"
    assert judge.kind("sub/ci/run") == "oracle"  # gitignore: a dir pattern anywhere
    assert judge.kind("poetry.lock") == "oracle" and judge.kind("a/b/UV.LOCK") == "oracle"
    assert judge.kind("Makefile") == "oracle" and judge.kind("src/Makefile") == "behavior"
    assert judge.kind("tools/x/y/gen_z.py") == "oracle"
    assert judge.kind("tools/x/y/z.py") == "behavior"


@pytest.mark.parametrize("python, oracle, behaviour", [
    ("env/bin/python", ["env/bin/python", "env/lib/x.py"], ["envx/a"]),
    ("{root}/tools/py3", ["tools/py3"], ["tools/other"]),
    ("python3", [], [".python3", "python3"]),
    ("/usr/bin/python3", [], ["usr/bin/python3"]),
])
def test_runner_python_inside_the_repo_is_oracle(tmp_path: object, python: str,
                                                 oracle: list[str], behaviour: list[str]) -> None:
    root = str(tmp_path)
    judge = Judge(root, Config(python=python.format(root=root)))
    for p in oracle:
        assert judge.kind(p) == "oracle", p
    for p in behaviour:
        assert judge.kind(p) == "behavior", p


def test_nfc_normalisation() -> None:
    judge = Judge(ROOT, Config(properties_dir="pr\u00fcfungen"))
    decomposed = unicodedata.normalize("NFD", "pr\u00fcfungen/test_a.py")
    assert decomposed != "pr\u00fcfungen/test_a.py"
    assert judge.kind(decomposed) == "oracle"
    assert judge.kind("PR\u00dcFUNGEN/test_a.py") == "oracle"
    assert Judge(ROOT, Config(properties_dir=unicodedata.normalize("NFD", "pr\u00fcfungen"))
                 ).kind("pr\u00fcfungen/x") == "oracle"


# --- Hypothesis: variants classify as their originals ---------------------------------------

_SEG = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\\\0"),
               min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
_PATH = st.lists(st.one_of(_SEG, st.sampled_from(
    ["properties", "fixtures", "conftest.py", "pytest.ini", "docs", "README.md", "src",
     "fixture_digest.txt", "caf\u00e9", ".venv", "pyproject.toml"])),
    min_size=1, max_size=4).map("/".join)
OTHER_CONFIG = Config(oracle_paths=("spec*/", "*.LOCK"), neutral_paths=("*.md", "notes/**"))
_JUDGES = st.sampled_from([DEFAULT, NESTED, Judge(ROOT, OTHER_CONFIG)])


def _swapcase(p: str) -> str:
    return "".join(c.swapcase() if c.swapcase().casefold() == c.casefold() else c for c in p)


@given(path=_PATH, judge=_JUDGES)
def test_case_and_nfc_variants_are_oracle_alike(path: str, judge: Judge) -> None:
    oracle = judge.is_oracle(path)
    for variant in (path.upper(), path.lower(), _swapcase(path),
                    unicodedata.normalize("NFD", path), unicodedata.normalize("NFC", path)):
        assert judge.is_oracle(variant) == oracle, variant


@given(path=_PATH, judge=_JUDGES, where=st.integers(min_value=0, max_value=10))
def test_normalised_variants_classify_the_same(path: str, judge: Judge, where: int) -> None:
    parts = path.split("/")
    i = where % len(parts)
    for extra in (".", ""):  # a/./b and a//b
        variant = "/".join([*parts[:i], extra, *parts[i:]]) if i else "./" + path
        assert judge.kind(variant) == judge.kind(path), variant
    assert judge.kind(f"{parts[0]}/../{path}") == judge.kind(path)
    assert judge.kind(unicodedata.normalize("NFD", path)) == judge.kind(path)
    assert normal(normal(path)) == normal(path)


# --- Hypothesis: the bulk classification of a whole change agrees with Judge.kind ------------

_MANY = st.lists(st.one_of(
    _PATH,
    st.sampled_from(["src/app.py", "docs/x.md", "a/./b", "src//c", "./properties/t.py",
                     "src/../fixtures/c.json", "notes/", "file.", "src/..", "x\\y",
                     "Properties/T.py", "caf\u0065\u0301/x", "\u00c9T\u00c9/y.md"])),
    max_size=12).filter(lambda ps: not any(
        p.rpartition("/")[2] in HOOK_FILES for p in ps))  # those make classify ask git


@pytest.fixture(scope="module")
def empty_repo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A repository whose base is the empty tree: no pytest config widens collection."""
    path = tmp_path_factory.mktemp("empty") / "repo"
    init_repo(path)
    return str(path)


@settings(deadline=None)  # a change with neutral paths reads the base's pytest configs
@given(paths=_MANY, judge=_JUDGES)
def test_classify_sorts_every_path_as_judge_kind_does(empty_repo: str, paths: list[str],
                                                      judge: Judge) -> None:
    config = {id(DEFAULT): Config(), id(NESTED): NESTED_CONFIG}.get(id(judge), OTHER_CONFIG)
    judge = Judge(ROOT, config)
    change = Change("staged", "staged change", None, None,
                    tuple(FileChange("M", p) for p in paths), (), False)
    old = Snapshot(empty_repo, empty_tree(empty_repo))
    got = classify(empty_repo, config, change, old, lambda: old, contents=False)
    want: dict[str, list[str]] = {"oracle": [], "behavior": [], "neutral": []}
    for p in dict.fromkeys(paths):
        kind = judge.kind(p)
        want["oracle" if kind in (judge.ORACLE, judge.TABLE) else kind].append(p)
    assert got.oracle == tuple(sorted(want["oracle"]))
    assert got.behavior == tuple(sorted(want["behavior"]))
    assert got.neutral == tuple(sorted(want["neutral"]))
