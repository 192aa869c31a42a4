"""Judge tampering in Python source, found statically (scope rule 5).

``findings(source, added)`` parses the source with ``ast`` and reports every
node on an added line that reaches into the judge at run time:

- assigns to (or deletes, or monkeypatches through ``setattr``, ``mock.patch``,
  ``monkeypatch.setattr``, ``__dict__``/``vars()`` writes) an attribute of the
  judge's modules: pytest, ``_pytest``, pluggy, Hypothesis (strategies and
  settings included), ``builtins`` and ballot-guard itself, or the process's
  exits and hooks (``os._exit``, ``sys.exit``, ``sys.excepthook``,
  ``sys.modules``, import hooks);
- rewrites what a function or module runs (``__code__``, ``__defaults__``,
  ``__kwdefaults__``, a ``__builtins__`` attribute);
- reaches the runner through frames, tracing or the garbage collector
  (``sys._getframe``, ``inspect.stack``/``currentframe``/``getouterframes``,
  ``gc.get_objects``/``get_referrers``, ``f_back``, ``f_locals``,
  ``sys.settrace``), or signals its parent;
- reads ``/proc``; registers or loads a Hypothesis settings profile; sets the
  judge's environment (``PYTEST_*``, ``HYPOTHESIS_*``, ``PYTHON*``, ``GIT_*``);
- writes a ``.pth``, ``sitecustomize`` or ``usercustomize`` file, a path in a
  git directory, or runs ``git config``;
- runs a computed string (``exec``, ``eval``, ``compile`` of a non-literal);
- defines an equality (``__eq__``, ``__ne__``) that never reads what it is compared
  with, or sets one on an existing object (an "equals anything" value passes every
  ``==`` of the oracle).

Names are resolved through the file's imports, wherever they stand in it (an
alias bound in an unchanged line counts): ``import builtins as b``,
``from _pytest import python as p``, ``__import__("builtins")``,
``importlib.import_module("pytest")``, ``sys.modules["builtins"]``,
``globals()["__builtins__"]``, ``vars(builtins)``, ``getattr(m, "x")`` with a
literal name.  Source that does not parse is scanned line by line with
regular expressions (``scan_lines``).  Names built at run time (``exec`` of a
decoded string, ``getattr`` with a computed name) cannot be resolved: the
gate's runtime checks back this rule up.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable
from typing import NamedTuple

JUDGE_ROOTS = frozenset({"pytest", "_pytest", "pluggy", "hypothesis", "builtins",
                         "__builtin__", "ballot_guard"})
# Attributes of os and sys that end, hook or steer the process running the judge.
PROCESS_HOOKS = frozenset({
    "os._exit", "os.abort", "os.exit", "os.kill", "os.killpg", "os.fork", "os.write",
    "sys.exit", "sys.excepthook", "sys.unraisablehook", "sys.displayhook",
    "sys.breakpointhook", "sys.settrace", "sys.setprofile", "sys.modules", "sys.meta_path",
    "sys.path_hooks", "sys.path_importer_cache", "sys.audit", "sys.addaudithook",
    "atexit.register", "signal.signal",
})
FRAME_CALLS = frozenset({
    "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "threading.settrace", "threading.setprofile",
    "inspect.stack", "inspect.currentframe", "inspect.getouterframes",
    "inspect.getinnerframes", "inspect.trace", "traceback.walk_stack",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",
})
FRAME_ATTRS = frozenset({"f_back", "f_locals", "f_globals", "f_builtins"})
# What a function or module runs with: rewritten, a test runs other code than its file's.
CODE_PARTS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__builtins__"})
IMPORT_HOOKS = frozenset({"sys.meta_path", "sys.path_hooks"})
# How a value compares: one that equals anything makes every ``assert f(x) == want`` pass.
EQUALITY = frozenset({"__eq__", "__ne__"})
PROFILE_CALLS = frozenset({"register_profile", "load_profile"})
ENV_PREFIXES = ("PYTEST", "HYPOTHESIS", "BALLOT_GUARD", "PYTHON", "GIT_", "PY_COLORS",
                "COV_CORE")
_PATCHERS = frozenset({"setattr", "delattr", "patch", "object", "multiple", "setitem",
                       "delitem", "__setattr__", "__delattr__"})
# Calls that write a file (``open`` counts with a writing mode).
_WRITES = frozenset({"write_text", "write_bytes", "copy", "copy2", "copyfile", "copytree",
                     "move", "rename", "replace", "symlink", "symlink_to", "link", "hardlink_to",
                     "link_to", "touch", "makedirs", "mkdir"})
_SITE_DIRS = frozenset({"site.getsitepackages", "site.getusersitepackages", "site.USER_SITE",
                        "site.USER_BASE", "site.addsitedir", "sysconfig.get_paths",
                        "sysconfig.get_path", "distutils.sysconfig.get_python_lib"})
_DICT_WRITES = frozenset({"update", "setdefault", "__setitem__", "pop", "popitem",
                          "clear", "__delitem__"})
_STARTUP = re.compile(r"(?i)sitecustomize|usercustomize|[/\\]?site-packages|dist-packages")
_PTH = re.compile(r"(?i)\.pth\Z")
_GIT_PATH = re.compile(r"(?:^|[/\\])\.git[/\\]\w|\bGIT_(?:DIR|COMMON_DIR|WORK_TREE)\b"
                       r"|--git-(?:common-)?dir\b|(?i:hookspath)|^filter\.[^.]+\.(?:smudge|clean"
                       r"|process)$")
_GIT_CONFIG = re.compile(r"\bgit\b(?:\s+-\S+(?:\s+\S+)?)*\s+config\b")
_PROC = re.compile(r"(?:^|[^\w])/proc(?:/|$)")
_EVALS = frozenset({"builtins.exec", "builtins.eval", "builtins.compile"})


class Finding(NamedTuple):
    line: int
    what: str


def findings(source: str | bytes, added: Collection[int] | None = None) -> list[Finding]:
    """Every tampering node on an ``added`` line (None: every line) of ``source``,
    sorted by line; source that does not parse is scanned line by line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        lines = text.splitlines()
        wanted = range(1, len(lines) + 1) if added is None else sorted(added)
        return scan_lines((n, lines[n - 1]) for n in wanted if 0 < n <= len(lines))
    try:
        found = _Walker(tree, added).run()
    except RecursionError:
        found = [Finding(1, "code nested too deep to read")]
    return sorted(set(found))


class _Walker:
    def __init__(self, tree: ast.Module, added: Collection[int] | None) -> None:
        self.tree = tree
        self.added = None if added is None else frozenset(added)
        self.bound: dict[str, str] = {}  # local name -> dotted module path
        self.defined: set[str] = set()  # names the file binds (shadowing builtins)
        self.found: list[Finding] = []

    # --- names -------------------------------------------------------------------------

    def _bind_imports(self) -> None:
        """Bindings from every import in the file, and from simple assignments of
        resolvable judge expressions (``b = __import__("builtins")``), to a fixed point."""
        assigns: list[ast.Assign] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.bound[a.asname] = a.name
                    else:
                        top = a.name.split(".", 1)[0]
                        self.bound[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":
                        self.bound[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.Assign):
                assigns.append(node)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.defined.add(t.id)
        for _ in range(3):  # aliases of aliases
            changed = False
            for node in assigns:
                target = self.dotted(node.value)
                if target is None:
                    continue
                for t in node.targets:
                    if isinstance(t, ast.Name) and self.bound.get(t.id) != target:
                        self.bound[t.id] = target
                        changed = True
            if not changed:
                break

    def dotted(self, node: ast.AST) -> str | None:
        """The dotted name a node stands for, rooted in a module, when it can be told."""
        if isinstance(node, ast.Name):
            if node.id in self.bound:
                return self.bound[node.id]
            if node.id == "__builtins__":
                return "builtins"
            if node.id not in self.defined and node.id in _BUILTIN_NAMES:
                return "builtins." + node.id
            return None
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call):
            func = self.dotted(node.func)
            first = _literal(node.args[0]) if node.args else None
            if func in ("builtins.__import__", "importlib.import_module",
                        "importlib.__import__") and first:
                return first
            if func == "builtins.globals":
                return "<globals>"
            if func == "builtins.vars" and node.args:
                inner = self.dotted(node.args[0])
                return None if inner is None else inner + ".__dict__"
            if func == "builtins.getattr" and len(node.args) >= 2:
                base, name = self.dotted(node.args[0]), _literal(node.args[1])
                return None if base is None or name is None else f"{base}.{name}"
            return None
        if isinstance(node, ast.Subscript):
            base, key = self.dotted(node.value), _literal(node.slice)
            if base is None or key is None:
                return None
            if base == "sys.modules":
                return key
            if base == "<globals>":
                return self.bound.get(key) or ("builtins" if key == "__builtins__" else None)
            if base.endswith(".__dict__"):
                return f"{base[:-9]}.{key}"
            if base == "builtins":  # __builtins__ is a dict outside __main__
                return f"builtins.{key}"
            return None
        return None

    # --- findings -------------------------------------------------------------------------

    def on_added(self, node: ast.AST) -> bool:
        if self.added is None:
            return True
        first = getattr(node, "lineno", None)
        if first is None:
            return False
        last = getattr(node, "end_lineno", None) or first
        return any(n in self.added for n in range(first, last + 1))

    def add(self, node: ast.AST, what: str) -> None:
        self.found.append(Finding(getattr(node, "lineno", 1), what))

    def run(self) -> list[Finding]:
        self._bind_imports()
        for node in ast.walk(self.tree):
            if not self.on_added(node):
                continue
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                           else [node.target])
                for t in targets:
                    for leaf in _leaves(t):
                        self._target(leaf, node)
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name in EQUALITY and _blind(node):
                    self.add(node, f"defines {node.name} {_BLIND}")
            elif isinstance(node, ast.ClassDef):
                for stmt in node.body:  # __eq__ = lambda self, other: True
                    if not (isinstance(stmt, ast.Assign) and self.on_added(stmt)
                            and isinstance(stmt.value, ast.Lambda) and _blind(stmt.value)):
                        continue
                    for t in stmt.targets:
                        if isinstance(t, ast.Name) and t.id in EQUALITY:
                            self.add(stmt, f"binds {t.id} to a function {_BLIND}")
            elif isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    self.bound.get(node.id) in FRAME_CALLS:
                self.add(node, _uses(self.bound[node.id]))
            elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                self._string(node)
        return self.found

    def _judged(self, name: str | None) -> bool:
        if name is None:
            return False
        root = name.split(".", 1)[0]
        return root in JUDGE_ROOTS or any(
            name == hook or name.startswith(hook + ".") for hook in PROCESS_HOOKS)

    def _target(self, t: ast.AST, stmt: ast.AST) -> None:
        verb = "deletes" if isinstance(stmt, ast.Delete) else "assigns to"
        if isinstance(t, ast.Attribute):
            name = self.dotted(t)
            if self._judged(name):
                self.add(t, f"{verb} {name}")
            elif t.attr in CODE_PARTS:
                self.add(t, f"{verb} an object's {t.attr} (the code it runs)")
            elif t.attr in EQUALITY:
                self.add(t, f"{verb} an object's {t.attr} (how its values compare)")
        elif isinstance(t, ast.Subscript):
            name = self.dotted(t)
            base = self.dotted(t.value)
            key = _literal(t.slice)
            if base == "os.environ" and key is not None and key.upper().startswith(
                    ENV_PREFIXES):
                self.add(t, f"sets the judge's environment ({key})")
            elif name is not None and self._judged(name):
                self.add(t, f"{verb} {name}")
            elif base is not None and ((base.endswith(".__dict__") and self._judged(base[:-9]))
                                       or base == "builtins"):
                self.add(t, f"{verb} an entry of {base}")

    def _call(self, node: ast.Call) -> None:
        func = self.dotted(node.func)
        last = node.func.attr if isinstance(node.func, ast.Attribute) else (
            node.func.id if isinstance(node.func, ast.Name) else "")
        receiver = self.dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None
        if func in FRAME_CALLS:
            self.add(node, _uses(func))
        elif last in PROFILE_CALLS and (
                (func or "").startswith("hypothesis") or _names_settings(node.func)):
            self.add(node, f"calls {func or 'settings.' + last} (a Hypothesis settings profile)")
        elif func in _EVALS and node.args and _literal(node.args[0]) is None:
            self.add(node, f"calls {func[9:]} on a computed string")
        elif func in ("os.kill", "os.killpg") and any(
                isinstance(n, ast.Call) and self.dotted(n.func) == "os.getppid"
                for a in node.args for n in ast.walk(a)):
            self.add(node, f"calls {func} on the parent process (the runner)")
        elif func in _SITE_DIRS:
            self.add(node, f"calls {func} (where interpreter start-up files live)")
        if last in ("setattr", "__setattr__") and len(node.args) > 1 and \
                _literal(node.args[1]) in EQUALITY:
            self.add(node, f"sets an object's {_literal(node.args[1])} through {last}() "
                     "(how its values compare)")
        if last in _PATCHERS and node.args:
            text = _literal(node.args[0])
            name = text if text is not None and "." in text else self.dotted(node.args[0])
            attr = _literal(node.args[1]) if len(node.args) > 1 and text is None else None
            if self._judged(name):
                self.add(node, f"patches {name}{'.' + attr if attr else ''} through {last}()")
        if last in _DICT_WRITES and receiver is not None:
            if receiver.endswith(".__dict__") and self._judged(receiver[:-9]):
                self.add(node, f"writes {receiver} through {last}()")
            elif receiver == "sys.modules" or receiver in IMPORT_HOOKS:
                self.add(node, f"changes {receiver} through {last}()")
            elif receiver == "os.environ":
                self._env(node, _env_keys(node.args[0]) if last == "update" and node.args
                          else [_literal(node.args[0])] if node.args else [])
        if last in ("append", "insert", "extend") and receiver in IMPORT_HOOKS:
            self.add(node, f"installs an import hook ({receiver}.{last})")
        if func == "os.putenv" and node.args:
            self._env(node, [_literal(node.args[0])])
        if any(isinstance(a, (ast.List, ast.Tuple)) and _runs_git_config(a) for a in node.args):
            self.add(node, "runs git config")
        if last in _WRITES or ((func == "builtins.open" or last == "open") and _writing(node)):
            for sub in ast.walk(node):
                text = _literal(sub)
                if text is None:
                    continue
                if _PTH.search(text):
                    self.add(node, f"writes a .pth file ({text[:40]!r})")
                elif text == ".git" or text.endswith(("/.git", "\\.git")):
                    self.add(node, f"writes into a git directory ({text[:40]!r})")

    def _env(self, node: ast.AST, keys: list[str | None]) -> None:
        for key in keys:
            if key is not None and key.upper().startswith(ENV_PREFIXES):
                self.add(node, f"sets the judge's environment ({key})")

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRS:
            self.add(node, f"reads a frame's {node.attr}")
        elif isinstance(node.ctx, ast.Load):
            name = self.dotted(node)
            if name in FRAME_CALLS:
                self.add(node, _uses(name))
            elif name in _SITE_DIRS:
                self.add(node, f"uses {name} (where interpreter start-up files live)")

    def _string(self, node: ast.Constant) -> None:
        value = node.value
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        text = text[:4096]
        if _PROC.search(text):
            self.add(node, f"names /proc ({text[:40]!r})")
        if _STARTUP.search(text):
            self.add(node, f"names an interpreter start-up file or dir ({text[:40]!r})")
        if _GIT_PATH.search(text):
            self.add(node, f"names a git directory or its config ({text[:40]!r})")
        if _GIT_CONFIG.search(text):
            self.add(node, f"runs git config ({text[:40]!r})")


_BLIND = ("that never reads what it is compared with (every comparison gives the same "
          "answer: a wrong value passes an oracle's ==)")


def _blind(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    """An equality that never reads its other operand and answers with a value (not
    only ``NotImplemented``, nor only by raising): ``return True`` whatever it meets."""
    a = fn.args
    params = [*a.posonlyargs, *a.args]
    other = params[1].arg if len(params) > 1 else (a.vararg.arg if a.vararg else None)
    body: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    nodes = [n for b in body for n in ast.walk(b)]
    if other is not None and any(isinstance(n, ast.Name) and n.id == other for n in nodes):
        return False
    if isinstance(fn, ast.Lambda):
        answers: list[ast.AST | None] = [fn.body]
    else:
        answers = [n.value for n in nodes if isinstance(n, ast.Return)]
    return any(v is not None and not (isinstance(v, ast.Name) and v.id == "NotImplemented")
               for v in answers)


def _uses(name: str) -> str:
    return f"uses {name} (reaches the runner's frames or objects)"


def _names_settings(func: ast.AST) -> bool:
    """``settings.register_profile`` or ``x.settings.load_profile``, names unresolved."""
    value = func.value if isinstance(func, ast.Attribute) else None
    return (isinstance(value, ast.Name) and value.id == "settings") or (
        isinstance(value, ast.Attribute) and value.attr == "settings")


def _writing(call: ast.Call) -> bool:
    """Whether an ``open(...)`` call opens for writing (a mode with w, a, x or +)."""
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    text = _literal(mode) if mode is not None else None
    return (text is None and mode is not None) or bool(text and set(text) & set("wax+"))


def _env_keys(node: ast.AST) -> list[str | None]:
    if isinstance(node, ast.Dict):
        return [_literal(k) if k is not None else None for k in node.keys]
    return []


def _leaves(t: ast.AST) -> Iterable[ast.AST]:
    if isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from _leaves(e)
    elif isinstance(t, ast.Starred):
        yield from _leaves(t.value)
    else:
        yield t


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _runs_git_config(seq: ast.List | ast.Tuple) -> bool:
    words = [_literal(e) for e in seq.elts]
    for i, w in enumerate(words):
        if w is not None and (w == "git" or w.endswith("/git")):
            return "config" in words[i + 1:]
    return False


_BUILTIN_NAMES = frozenset({"__import__", "globals", "vars", "getattr", "setattr", "delattr",
                            "exec", "eval", "compile"})

# --- the fallback for text that does not parse --------------------------------------------

_ROOTS = r"(?:pytest|_pytest|pluggy|hypothesis|builtins|__builtins__|ballot_guard)"
_LINE_RULES = [
    (re.compile(r"\b" + _ROOTS + r"\b(?:\.\w+)+\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"),
     "assigns to an attribute of the judge's modules"),
    (re.compile(r"\bos\._exit\s*=(?!=)|\bsys\.(?:exit|excepthook|modules)\s*=(?!=)"),
     "assigns to the process's exits"),
    (re.compile(r"\b(?:set|del)attr\s*\(\s*['\"]?" + _ROOTS + r"\b"),
     "patches the judge's modules through setattr()"),
    (re.compile(r"\b_getframe\b|\bcurrentframe\b|\bgetouterframes\b|\binspect\.stack\b"
                r"|\bgc\.get_(?:objects|referrers|referents)\b|\bf_back\b|\bf_locals\b"
                r"|\bf_globals\b|\bsettrace\b|\bsetprofile\b|\bwalk_stack\b"),
     "reaches the runner's frames or objects"),
    (re.compile(r"\b(?:register|load)_profile\b"), "a Hypothesis settings profile"),
    (re.compile(r"/proc\b"), "names /proc"),
    (_STARTUP, "names an interpreter start-up file"),
    (_GIT_PATH, "names a git directory or its config"),
    (re.compile(r"""['"]git['"]\s*,.*['"]config['"]|\bgit\s+config\b"""), "runs git config"),
    (re.compile(r"\b(?:exec|eval)\s*\((?!\s*['\"])"), "runs a computed string"),
    (re.compile(r"\b__import__\s*\(\s*['\"]" + _ROOTS + r"|\bimport_module\s*\(\s*['\"]"
                + _ROOTS + r"|\bimport\s+" + _ROOTS + r"\b(?:\.\w+)*\s+as\b|\bfrom\s+"
                + _ROOTS + r"(?:\.\w+)*\s+import\b.*\bas\b"),
     "binds the judge's modules under another name"),
]


def scan_lines(lines: Iterable[tuple[int, str]]) -> list[Finding]:
    """The token scan of lines that do not parse as Python: (line number, text)."""
    found = []
    for n, text in lines:
        for rx, what in _LINE_RULES:
            if rx.search(text):
                found.append(Finding(n, what))
    return sorted(set(found))
