"""The checkout's files that the runs import, read once by the runner (``sources.py``):
every file a property imports is kept, nothing outside the checkout is read, and a
run takes what was kept only for the very bytes it was made from."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.internal import constants_ast

from ballot_guard.run import sources
from testing.gate_support import MODES, make_project, project, scorecard
from testing.helpers import Repo, run_cli

__all__ = ["project"]


@pytest.fixture(autouse=True)
def _kept_anew() -> Iterator[None]:
    sources.CODE.clear()
    sources.CONSTANTS.clear()
    yield
    sources.CODE.clear()
    sources.CONSTANTS.clear()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _kept(root: Path) -> set[str]:
    """``prepare`` on ``root``'s properties: every file it read (constants of each file
    recorded as its bytes)."""
    sources.prepare(str(root), "properties", lambda data: data)
    return set(sources.CONSTANTS)


def _imported_by_python(root: Path) -> set[str]:
    """The checkout files a real interpreter runs for ``import test_p``, with the
    properties directory and the checkout root on its path (as pytest and the gate's
    runs have them)."""
    code = ("import json, os, sys\n"
            f"sys.path[:0] = [{str(root / 'properties')!r}, {str(root)!r}]\n"
            "import test_p\n"
            f"root = os.path.realpath({str(root)!r}) + os.sep\n"
            "print(json.dumps(sorted({os.path.realpath(m.__file__) for m in list("
            "sys.modules.values()) if isinstance(getattr(m, '__file__', None), str) and "
            "os.path.realpath(m.__file__).startswith(root)})))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, check=True)
    return set(json.loads(res.stdout))


NAMES = ["a", "b", "a.x", "a.y", "b.x", "a.x.z", "c", "a.c"]  # a.c beside c: lookup order


def _imports_of(name: str, target: str, style: int, packages: set[str]) -> str:
    """One import statement of module ``name`` that runs module ``target``."""
    parent, _, last = target.rpartition(".")
    own_package = name if name in packages else name.rpartition(".")[0]
    if style == 1 and parent:
        return f"from {parent} import {last}\n"
    if style == 2 and parent and parent == own_package:
        return f"from . import {last}\n"
    return f"import {target}\n"


@st.composite
def _trees(draw: st.DrawFn) -> tuple[dict[str, str], set[str]]:
    """A package tree, each module importing some modules after it (no cycles), and a
    property file importing some of them."""
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1))
    names = sorted({n.rsplit(".", i)[0] for n in names for i in range(n.count(".") + 1)})
    packages = {n for n in names if any(m.startswith(n + ".") for m in names)}
    files: dict[str, str] = {}
    for i, name in enumerate(names):
        later = names[i + 1:]
        picks = draw(st.lists(st.tuples(st.sampled_from(later), st.integers(0, 2)),
                              max_size=3)) if later else []
        body = "".join(_imports_of(name, t, s, packages) for t, s in picks)
        body += f"VALUE_{i} = {1000 + i}\n"
        rel = name.replace(".", "/") + ("/__init__.py" if name in packages else ".py")
        files[rel] = body
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
    files["properties/test_p.py"] = "".join(f"import {t}\n" for t in chosen)
    files["unused.py"] = "VALUE = 1\n"  # imported by nothing
    return files, packages


SHADOWED = ({"a/__init__.py": "", "a/c.py": "IN_A = 1\n", "a/x.py": "import c\n",
             "c.py": "AT_ROOT = 1\n", "properties/test_p.py": "import a.x\n",
             "unused.py": ""}, {"a"})  # 'import c' inside a finds the root's c, not a/c.py


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_trees())
@example(SHADOWED)
def test_every_file_a_property_imports_is_read_once(
        tmp_path_factory: pytest.TempPathFactory, tree: tuple[dict[str, str], set[str]]) -> None:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("tree")))
    _write(root, tree[0])
    sources.CODE.clear()
    sources.CONSTANTS.clear()
    kept = _kept(root)
    ran = _imported_by_python(root)
    assert ran <= kept, sorted(ran - kept)
    assert str(root / "unused.py") not in kept
    assert all(p.startswith(str(root) + os.sep) for p in kept)
    # the property file is pytest's to compile (assertion rewriting), the rest kept
    assert set(sources.CODE) == kept - {str(root / "properties" / "test_p.py")}
    for path, (data, code) in sources.CODE.items():
        assert data == Path(path).read_bytes() and code.co_filename == path


def test_nothing_outside_the_checkout_is_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "elsewhere"
    _write(outside, {"secret.py": "KEY = 1\n"})
    _write(root, {"properties/test_p.py": "import secret\nimport helper\n",
                  "helper.py": "X = 1\n"})
    os.symlink(outside / "secret.py", root / "secret.py")
    kept = _kept(root)
    assert str((root / "helper.py").resolve()) in kept
    assert not [p for p in kept if "elsewhere" in p or p.endswith("secret.py")]


def test_a_file_that_does_not_compile_is_left_to_the_run(tmp_path: Path) -> None:
    _write(tmp_path, {"properties/test_p.py": "import broken\nimport fine\n",
                      "broken.py": "def (:\n", "fine.py": "import broken\nX = 1\n"})
    kept = _kept(tmp_path)
    assert str(tmp_path.resolve() / "fine.py") in kept
    assert str(tmp_path.resolve() / "broken.py") not in kept


class _Loader:
    """The import system's compile step, as ``SourceLoader`` has it."""

    def source_to_code(self, data: bytes, path: str, *, _optimize: int = -1) -> object:
        return compile(data, path, "exec", dont_inherit=True, optimize=_optimize)


def test_a_run_takes_the_kept_code_only_for_the_bytes_it_was_made_from(
        tmp_path: Path) -> None:
    _write(tmp_path, {"properties/test_p.py": "import mod\n",
                      "mod.py": "def answer():\n    return 42\n"})
    sources.prepare(str(tmp_path), "properties", None)
    path = str(tmp_path.resolve() / "mod.py")
    data, kept = sources.CODE[path]
    loader = type("Loader", (_Loader,), {})  # install patches the class it is given
    sources.install(loader, [])
    assert loader().source_to_code(data, path) is kept
    changed = b"def answer():\n    return 43\n"  # the file as a run changed it
    fresh = loader().source_to_code(changed, path)
    assert fresh is not kept
    ns: dict[str, object] = {}
    exec(fresh, ns)
    assert ns["answer"]() == 43  # type: ignore[operator]
    other = str(tmp_path / "other.py")
    assert loader().source_to_code(data, other).co_filename == other  # type: ignore[attr-defined]
    assert loader().source_to_code(data, path, _optimize=2) is not kept


def test_kept_constants_are_hypothesiss_own(tmp_path: Path) -> None:
    source = "LIMIT = 48_611_237\nNAME = 'ballot'\n\n\ndef f(x):\n    return x * -7.5\n"
    _write(tmp_path, {"properties/test_p.py": "import limits\n", "limits.py": source})
    survey, local = sources.hypothesis_constants()
    assert survey is not None
    sources.prepare(str(tmp_path), "properties", survey, local)
    path = str(tmp_path.resolve() / "limits.py")
    kept = sources.CONSTANTS[path][1]
    module = type(sys)("limits")
    module.__file__ = path
    assert kept == constants_ast.constants_from_module(module)
    assert 48_611_237 in kept and "ballot" in kept

    class Ast:  # stands where the module of Hypothesis's survey stands
        constants_from_module = staticmethod(constants_ast.constants_from_module)

    sources.install(type("Loader", (_Loader,), {}), [Ast])
    assert Ast.constants_from_module(module) is kept
    Path(path).write_text(source.replace("48_611_237", "77_777_777"))  # changed since: surveyed anew
    again = type(sys)("limits")
    again.__file__ = path
    fresh = Ast.constants_from_module(again)
    assert fresh is not kept and 77_777_777 in fresh and 48_611_237 not in fresh


PACKAGE = {"pkg/__init__.py": "from pkg import mod\n",
           "pkg/mod.py": "def answer():\n    return 42\n"}
KEPT = ("import os\nimport sys\n\nimport pkg\n\n\n"
        "def test_kept():\n"
        "    assert pkg.mod.answer() == 42\n"
        "    kept = sys.modules['_ballot_guard_sources'].CODE\n"
        "    code = kept[os.path.realpath(pkg.mod.__file__)][1]\n"
        "    assert any(c is pkg.mod.answer.__code__ for c in code.co_consts)\n")


@pytest.mark.parametrize("mode", MODES)
def test_every_run_executes_the_code_the_runner_compiled(project: Repo, mode: str) -> None:
    for rel, text in PACKAGE.items():
        project.write(rel, text)
    make_project(project, {"kept": KEPT}, table=f"repeats = 3\n{mode}")
    res = run_cli(["gate", "--seed", "1"], project.path)
    assert res.code == 0, res.out + res.err
    runs = scorecard(project)["properties"]["kept"]["runs"]
    assert [r["outcome"] for r in runs] == ["pass"] * 3
