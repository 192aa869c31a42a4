"""Rule 5's reading of Python source: each technique found, on its line; ordinary code not."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.scope.tamper import Finding, findings

# (source, line of the finding, words its description must hold)
TECHNIQUES: dict[str, tuple[str, int, str]] = {
    "builtins attribute": ("import builtins\nbuiltins.sorted = lambda x: x\n", 2,
                           "assigns to builtins.sorted"),
    "import alias": ("import builtins as b\nx = 1\nb.sorted = 1\n", 3, "builtins.sorted"),
    "from-import alias": ("from _pytest import python as p\np.Function._getobj = None\n", 2,
                          "_pytest.python.Function._getobj"),
    "__import__": ("__import__('builtins').sorted = 1\n", 1, "builtins.sorted"),
    "import_module": ("import importlib\nm = importlib.import_module('pytest')\nm.fail = 1\n",
                      3, "pytest.fail"),
    "alias of an alias": ("import builtins\nb = builtins\nc = b\nc.sorted = 1\n", 4,
                          "builtins.sorted"),
    "globals __builtins__": ("globals()['__builtins__']['sorted'] = 1\n", 1, "builtins.sorted"),
    "__builtins__ dict": ("__builtins__['sorted'] = 1\n", 1, "builtins.sorted"),
    "vars()": ("import builtins\nvars(builtins)['len'] = 1\n", 2, "builtins.len"),
    "__dict__ update": ("import pytest\npytest.__dict__.update(fail=None)\n", 2,
                        "pytest.__dict__"),
    "sys.modules": ("import sys\nsys.modules['builtins'].sorted = 1\n", 2, "builtins.sorted"),
    "sys.modules entry": ("import sys\nsys.modules['pytest'] = object()\n", 2, "pytest"),
    "getattr chain": ("import _pytest\ngetattr(_pytest, 'runner').call_and_report = 1\n", 2,
                      "_pytest.runner.call_and_report"),
    "setattr": ("import builtins\nsetattr(builtins, 'sorted', 1)\n", 2,
                "patches builtins.sorted through setattr()"),
    "setattr via __import__": ("setattr(__import__('hypothesis').strategies, 'lists', 1)\n", 1,
                               "hypothesis.strategies.lists"),
    "monkeypatch string": ("def t(monkeypatch):\n    monkeypatch.setattr('builtins.sorted', 1)\n",
                           2, "builtins.sorted"),
    "mock.patch": ("from unittest import mock\nmock.patch('pluggy.HookCaller.__call__').start()\n",
                   2, "pluggy.HookCaller.__call__"),
    "delattr": ("import pytest\ndelattr(pytest, 'fail')\n", 2, "pytest"),
    "del": ("import pytest\ndel pytest.fail\n", 2, "deletes pytest.fail"),
    "strategies": ("import hypothesis.strategies as st\nst.lists = None\n", 2,
                   "hypothesis.strategies.lists"),
    "settings attribute": ("from hypothesis import settings\nsettings._current_profile = 'x'\n",
                           2, "hypothesis.settings._current_profile"),
    "ballot_guard": ("import ballot_guard.run.forkserver as z\nz.report = print\n", 2,
                     "ballot_guard.run.forkserver.report"),
    "os._exit": ("import os\nos._exit = lambda code: None\n", 2, "os._exit"),
    "sys.exit": ("import sys\nsys.exit = print\n", 2, "sys.exit"),
    "augmented": ("import pytest\npytest.x += 1\n", 2, "pytest.x"),
    "tuple target": ("import os\nos._exit, a = print, 1\n", 2, "os._exit"),
    "sys._getframe": ("import sys\nf = sys._getframe(2)\n", 2, "sys._getframe"),
    "f_back": ("def f(frame):\n    return frame.f_back\n", 2, "f_back"),
    "__code__": ("def f(t):\n    t.__code__ = (lambda: None).__code__\n", 2, "__code__"),
    "__defaults__": ("import m\nm.check.__defaults__ = (0,)\n", 2, "__defaults__"),
    "module __builtins__": ("import sys\nsys.modules['p'].__builtins__ = {}\n", 2,
                            "__builtins__"),
    "f_locals via traceback": (("try:\n    1 / 0\nexcept Exception as e:\n"
                                "    x = e.__traceback__.tb_frame.f_locals\n"), 4, "f_locals"),
    "inspect.stack": ("import inspect\nfor fr in inspect.stack():\n    pass\n", 2,
                      "inspect.stack"),
    "inspect.currentframe": ("import inspect\nf = inspect.currentframe()\n", 2,
                             "inspect.currentframe"),
    "getouterframes": ("from inspect import getouterframes as g\nx = 1\ng(None)\n", 3,
                       "inspect.getouterframes"),
    "gc.get_objects": ("import gc\nfor o in gc.get_objects():\n    pass\n", 2,
                       "gc.get_objects"),
    "gc.get_referrers": ("import gc as g\ng.get_referrers(1)\n", 2, "gc.get_referrers"),
    "settrace": ("import sys\nsys.settrace(lambda *a: None)\n", 2, "sys.settrace"),
    "a frame function passed on": ("import sys\nx = sys._getframe\n", 2, "sys._getframe"),
    "an imported frame function passed on": ("from inspect import stack\nhook(stack)\n", 2,
                                             "inspect.stack"),
    "/proc": ("fds = open('/proc/self/fd')\n", 1, "/proc"),
    "/proc f-string": ("def f(pid):\n    return open(f'/proc/{pid}/fd')\n", 2, "/proc"),
    "register_profile": (("from hypothesis import settings\n"
                          "settings.register_profile('x', max_examples=1)\n"), 2,
                         "register_profile"),
    "load_profile": ("import hypothesis\nhypothesis.settings.load_profile('x')\n", 2,
                     "load_profile"),
    "load_profile unresolved": ("settings.load_profile('fast')\n", 1, "load_profile"),
    ".pth write": ("open('/venv/lib/site/evil.pth', 'w').write('import x')\n", 1, ".pth"),
    ".pth Path write": ("from pathlib import Path\nPath(d, 'x.pth').write_text('import y')\n",
                        2, ".pth"),
    "site-packages": ("import site\nd = site.getsitepackages()[0]\n", 2, "site.getsitepackages"),
    "sitecustomize": ("name = 'sitecustomize.py'\n", 1, "start-up"),
    "usercustomize": ("open(p + '/usercustomize.py', 'w')\n", 1, "start-up"),
    ".git path": ("open('.git/hooks/pre-commit', 'w')\n", 1, "git directory"),
    ".git joined": ("import os\nopen(os.path.join(root, '.git', 'config'), 'a')\n", 2,
                    "git directory"),
    ".git Path": ("from pathlib import Path\n(Path(r) / '.git' / 'config').write_text('x')\n", 2,
                  "git directory"),
    "GIT_DIR": ("import os\nd = os.environ['GIT_DIR']\n", 2, "GIT_DIR"),
    "git config list": ("import subprocess\nsubprocess.run(['git', 'config', 'a.b', 'c'])\n", 2,
                        "git config"),
    "git -C config": ("import subprocess\nsubprocess.call(('git', '-C', d, 'config', 'x', 'y'))\n",
                      2, "git config"),
    "git config string": ("import os\nos.system('git config core.hooksPath /dev/null')\n", 2,
                          "git config"),
    "smudge filter key": ("cfg = 'filter.fmt.smudge'\n", 1, "git"),
    "env PYTEST_ADDOPTS": ("import os\nos.environ['PYTEST_ADDOPTS'] = '-p no:x'\n", 2,
                           "PYTEST_ADDOPTS"),
    "env setdefault": ("import os\nos.environ.setdefault('HYPOTHESIS_PROFILE', 'x')\n", 2,
                       "HYPOTHESIS_PROFILE"),
    "exec computed": ("import base64\nexec(base64.b64decode(s))\n", 2, "exec"),
    "eval computed": ("x = eval(text)\n", 1, "eval"),
    "compile computed": ("code = compile(src, 'f', 'exec')\n", 1, "compile"),
    "meta_path": ("import sys\nsys.meta_path.insert(0, Finder())\n", 2, "import hook"),
    "equals anything": ("class Money:\n    def __eq__(self, other): return True\n",
                        2, "defines __eq__ that never reads what it is compared with"),
    "differs from nothing": ("class M:\n    def __ne__(self, *others): return self.never\n",
                             2, "defines __ne__"),
    "equals anything, a lambda": ("class Money:\n    __eq__ = lambda self, other: True\n", 2,
                                  "binds __eq__ to a function that never reads"),
    "equality set on a class": ("import billing\nbilling.Money.__eq__ = same\n", 2,
                                "assigns to an object's __eq__"),
    "equality set through setattr": ("setattr(Money, '__eq__', lambda a, b: True)\n", 1,
                                     "sets an object's __eq__ through setattr()"),
    "kill parent": ("import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n", 2,
                    "parent process"),
}


@pytest.mark.parametrize("name", sorted(TECHNIQUES))
def test_each_technique_is_found_on_its_line(name: str) -> None:
    source, line, words = TECHNIQUES[name]
    got = findings(source)
    assert any(f.line == line and words in f.what for f in got), got
    # and only when that line is added
    others = set(range(1, source.count("\n") + 2)) - {line}
    assert not any(f.line == line for f in findings(source, others)), name


ORDINARY = [
    "obj.attr = 1\n",
    "self.x = 2\nself.items[0] = 3\n",
    "import os\nhome = os.environ.get('HOME')\npath = os.environ['PATH']\n",
    "y = sorted([3, 1, 2])\n",
    "import re\nr = re.compile('x+')\n",
    "import json\njson.loads('{}')\n",
    "import logging\nlog = logging.getLogger(__name__)\nlog.level = 10\n",
    "if name == '.git':\n    pass\n",
    "import torch\nm = torch.load('model.pth')\n",
    "x = eval('1 + 1')\n",
    "import os\nos.environ['APP_MODE'] = 'test'\n",
    "import sys\nsys.path.insert(0, 'lib')\nprint(sys.argv)\n",
    "import collections\ncollections.OrderedDict()\n",
    "class A:\n    def compile(self):\n        return 1\n\nA().compile()\n",
    "def setattr_all(o, d):\n    for k, v in d.items():\n        setattr(o, k, v)\n",
    "import subprocess\nsubprocess.run(['git', 'status'])\n",
    "with open('data.txt', 'w') as f:\n    f.write('.pth is a word here')\n",
    "import gc\ngc.collect()\n",
    "import inspect\ninspect.signature(len)\n",
    "import os\nos.getpid()\n",
    "d = {'.gitignore': 1}\n",
    ("class M:\n    def __eq__(self, other):\n        return isinstance(other, M) and "
    "self.v == other.v\n"),
    "class M:\n    def __eq__(self, other):\n        return NotImplemented\n",
    "class M:\n    def __eq__(self, other):\n        raise TypeError('not comparable')\n",
    "class M:\n    __hash__ = None\n    __eq__ = object.__eq__\n",
    "class M:\n    __ne__ = lambda self, other: not self == other\n",
    "class Top:\n    def __lt__(self, other):\n        return False\n",
]


@pytest.mark.parametrize("source", ORDINARY)
def test_ordinary_code_is_not_flagged(source: str) -> None:
    assert findings(source) == []


def test_an_equality_made_blind_by_an_added_line_of_its_body_is_found() -> None:
    source = ("class Money:\n    def __eq__(self, other):\n"
              "        return self.cents == other.cents\n")
    assert findings(source) == []
    blind = source.replace("self.cents == other.cents", "True")
    assert [f.line for f in findings(blind, {3})] == [2]


def test_unparseable_source_falls_back_to_a_line_scan() -> None:
    source = "def broken(:\n    builtins.sorted = 1\n    f = sys._getframe()\n    ok = 1\n"
    got = findings(source)
    assert [f.line for f in got] == [2, 3]
    assert findings(source, {4}) == []


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(TECHNIQUES)), pad=st.integers(0, 5),
       indent=st.booleans())
def test_a_technique_is_found_wherever_it_stands(name: str, pad: int, indent: bool) -> None:
    """Shifted down by ordinary lines, or moved into a function body, it is still found
    on its new line."""
    source, line, words = TECHNIQUES[name]
    prefix = "value = 1\n" * pad
    body = source
    if indent:
        body = "def hidden():\n" + "".join("    " + ln + "\n" for ln in source.splitlines())
        line += 1
    got = findings(prefix + body, {pad + line})
    assert any(f == Finding(pad + line, f.what) and words in f.what for f in got), got
