"""The package's shape holds: the import graph of ``ballot_guard`` has no cycle, each
sub-package is a room of 3 to 10 modules, and the top level holds only the edges.

The graph is read from the source (``ast``), not from an import: every ``import`` and
``from ... import`` at any depth (top level, inside functions, under ``TYPE_CHECKING``
excepted, since it never runs), plus every string constant that names a module of the
package (what ``importlib.import_module`` is handed, like ``cli.COMMANDS``), so a cycle
cannot hide in a function or behind a module name written as a string.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ballot_guard"

# The edges: the entry points, the one error type, the exit codes and the contract's other
# words, printing, the config, atomic writes, the one git seam, the freeze file (read by
# scope, vote, hooks and cli alike), ``.ballot_guard/`` and its timestamps.
TOP_LEVEL = {"__init__", "__main__", "main", "errors", "exit_codes", "vocabulary", "output",
             "config", "atomic", "git", "freeze", "scratch", "timestamps"}
# cli/ holds one module a command: the contract's twelve commands (pre-commit's
# commands/ holds fourteen); run/ holds the gate's side of a run (eight) and the four
# files that run alone under the project's interpreter, loaded by path (the fork server,
# a run's keeper, the checkout's sources read once, the OS sandbox); every other room
# holds 3 to 10 modules.
ROOM_SIZES = {"cli": (3, 12), "run": (3, 12)}
# Imports kept inside a function on the commit-time path, each written
# ``noqa: PLC0415 - lazy: <spot>: <reason, with its measured cost>``; cli/ (the command
# boundary) is lazy by design, and the fork server and its keeper run alone in the
# project's interpreter (``pyproject.toml`` says why they are exempt by file).  Three spots: what reads the judge's
# content (the pin check, the freeze file's reader), only when the change touches it;
# what reads code (the patch reader, rule 5's analysis), only when there is a patch or
# added lines a first scan cannot clear; and a module of the standard library or a
# dependency that only a rare branch of a commit-time module needs.
LAZY_SPOTS = {"judge content", "code reader", "rare branch"}
LAZY = re.compile(r"# noqa: PLC0415 - lazy: (?P<spot>[a-z ]+): (?P<why>.*\(.*\d ms.*\).*)$")
EXEMPT = ("ballot_guard.cli", "ballot_guard.run.forkserver", "ballot_guard.run.keeper")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if "example" in rel.parts:  # the demo's example project is package data
            continue
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The module of the package ``name`` refers to (itself, or the module holding it)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skip.update(id(n) for n in ast.walk(inner))
    return skip


def _edges(module: str, path: Path) -> dict[str, set[str]]:
    """Imported module -> how (``import``, ``lazy import``, ``string``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    top = {id(n) for n in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                    ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    out: dict[str, set[str]] = {}

    def add(name: str, how: str) -> None:
        found = _known(name)
        if found is not None and found != module:
            out.setdefault(found, set()).add(how)

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        how = "import" if id(node) in top else "lazy import"
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, how)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                add(full if full in MODULES else base, how)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings and node.value in MODULES:
            add(node.value, "string")
    return out


GRAPH = {m: _edges(m, p) for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start, edges in graph.items():
        if start in index:
            continue
        work = [(start, iter(sorted(edges)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_sees_every_kind_of_import() -> None:
    """The reader is not blind: the kinds of edge the package really uses are seen."""
    assert "import" in GRAPH["ballot_guard.scope.judge"]["ballot_guard.scope.pin_rule"]
    assert "string" in GRAPH["ballot_guard.cli"]["ballot_guard.cli.gate"]
    assert "lazy import" in GRAPH["ballot_guard.cli.gate"]["ballot_guard.vote.gate"]


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_has_no_cycle() -> None:
    graph = {m: set(edges) for m, edges in GRAPH.items()}
    cycles = _cycles(graph)
    detail = ["  " + " <-> ".join(c) for c in cycles]
    assert not cycles, "import cycles (docs/layout.md shows the order):\n" + "\n".join(detail)


def test_the_top_level_holds_only_the_edges() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == TOP_LEVEL


ROOMS = sorted(p.name for p in PACKAGE.iterdir()
               if p.is_dir() and (p / "__init__.py").exists())


def test_the_rooms_are_the_stages() -> None:
    assert ROOMS == ["adopt", "change", "ci", "cli", "demo", "digest", "hooks", "oracle",
                     "run", "scope", "split", "vote"]


@pytest.mark.parametrize("room", ROOMS)
def test_every_room_holds_3_to_10_modules(room: str) -> None:
    modules = [p for p in (PACKAGE / room).glob("*.py") if p.name != "__init__.py"]
    low, high = ROOM_SIZES.get(room, (3, 10))
    assert low <= len(modules) <= high, sorted(p.name for p in modules)
    assert not [p for p in (PACKAGE / room).iterdir()
                if p.is_dir() and (p / "__init__.py").exists()], "rooms hold no sub-rooms"


def test_imports_are_at_the_top_outside_cli() -> None:
    """Inside the domain, an import inside a function (of the package, the standard
    library or a dependency) is one of the named lazy spots, its reason giving the
    measured cost it saves; cli/ is the command boundary."""
    unnamed: list[str] = []
    spots: set[str] = set()
    for module, path in MODULES.items():
        if module.startswith(EXEMPT):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        skip = _type_checking_nodes(tree)
        scoped = {id(n) for s in ast.walk(tree)  # ruff's PLC0415: in a function or class
                  if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  for n in ast.walk(s)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) not in scoped \
                    or id(node) in skip:
                continue
            end = node.end_lineno or node.lineno
            found = [m for line in lines[node.lineno - 1:end] if (m := LAZY.search(line))]
            if found:
                spots.add(found[0]["spot"])
            else:
                unnamed.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert unnamed == []
    assert spots == LAZY_SPOTS


@pytest.mark.parametrize(("module", "late"), [
    ("ballot_guard.hooks.pre_commit", "ballot_guard.digest.pin"),
    ("ballot_guard.scope.pin_rule", "ballot_guard.digest.pin"),
    ("ballot_guard.scope.freeze_rule", "ballot_guard.freeze"),
    ("ballot_guard.scope.judge", "ballot_guard.change.from_patch"),
    ("ballot_guard.scope.tamper_rule", "ballot_guard.digest.checkout"),
    ("ballot_guard.scope.tamper_rule", "ballot_guard.scope.tamper"),
])
def test_the_lazy_spots_are_edges_of_the_graph(module: str, late: str) -> None:
    """Each late import of the package is an edge the cycle check follows: it is late
    for its cost alone, not to hide a cycle."""
    assert GRAPH[module][late] == {"lazy import"}


def test_a_cycle_behind_a_function_level_import_is_found(tmp_path: Path) -> None:
    """``digest/pin.py`` importing the rule that imports it, inside a function: a cycle."""
    pin = tmp_path / "pin.py"
    pin.write_text((PACKAGE / "digest" / "pin.py").read_text(encoding="utf-8")
                   + "\n\ndef _late() -> None:\n    from ballot_guard.scope import pin_rule\n")
    graph = {m: set(edges) for m, edges in GRAPH.items()}
    graph["ballot_guard.digest.pin"] = set(_edges("ballot_guard.digest.pin", pin))
    assert any({"ballot_guard.digest.pin", "ballot_guard.scope.pin_rule"} <= set(c)
               for c in _cycles(graph))
