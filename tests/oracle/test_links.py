"""Links into the oracle: a link that leads in is oracle, a path through one is its target."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballot_guard.oracle.links import Links
from testing.helpers import Repo, run_cli
from testing.scope_support import BOT, adopt

PROP = "properties/test_retry.py"
AGENTS = "[tool.ballot_guard]\nagents = ['*[bot]*']\n"
PATCH = """\
--- a/src/props/test_retry.py
+++ b/src/props/test_retry.py
@@ -1,2 +1,2 @@
 def test_retry():
-    assert True
+    assert 1 == 1
"""
BEHAVIOUR_HUNK = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1 +1 @@
-RETRIES = 3
+RETRIES = 4
"""


@pytest.fixture
def linked(repo: Repo) -> Repo:
    """An adopted project with a committed ``src/props -> ../properties`` (its adoption
    commit is not judged, as a first import mixes everything)."""
    repo.symlink("src/props", "../properties")
    adopt(repo, AGENTS)
    return repo


def _patch(tmp_path: Path, text: str, name: str = "change.diff") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


def test_gnu_patch_writes_through_the_link_into_the_property(linked: Repo,
                                                             tmp_path: Path) -> None:
    f = _patch(tmp_path, PATCH)
    copy = tmp_path / "copy"
    shutil.copytree(linked.path, copy, symlinks=True)
    subprocess.run(["/usr/bin/patch", "-p1", "-i", str(f)], cwd=copy, check=True,
                   capture_output=True)
    assert (copy / PROP).read_text() == "def test_retry():\n    assert 1 == 1\n"
    assert (copy / "src/props").is_symlink()
    # ... so ballot-guard judges the patch as an edit of the property
    res = run_cli(["scope", "--patch", str(f), "--agent", "--json"], linked.path)
    assert res.code == 1, res.out + res.err
    out = res.json()
    assert out["oracle"] == [PROP] and out["behavior"] == []
    assert [r["rule"] for r in out["reasons"]] == [2]
    mixed = _patch(tmp_path, PATCH + BEHAVIOUR_HUNK, "mixed.diff")
    res = run_cli(["scope", "--patch", str(mixed), "--json"], linked.path)
    assert res.code == 1, res.out + res.err
    out = res.json()
    assert out["oracle"] == [PROP] and out["behavior"] == ["src/app.py"]
    assert [r["rule"] for r in out["reasons"]] == [1]
    res = run_cli(["scope", "--patch", str(f), "--json"], linked.path)
    assert res.code == 0 and res.json()["oracle"] == [PROP]  # a human's, alone: ok


def test_a_patch_through_a_link_to_a_link_is_judged_too(repo: Repo, tmp_path: Path) -> None:
    repo.symlink("lib/judge", "../properties")
    repo.symlink("src/props", "../lib/./judge")
    adopt(repo, AGENTS)
    res = run_cli(["scope", "--patch", str(_patch(tmp_path, PATCH)), "--agent", "--json"],
                  repo.path)
    assert res.code == 1 and res.json()["oracle"] == [PROP]


def test_a_patch_through_a_link_into_the_fixtures_is_never_clean(repo: Repo,
                                                              tmp_path: Path) -> None:
    repo.symlink("data", "fixtures")
    adopt(repo, AGENTS)
    text = "--- a/data/cases.json\n+++ b/data/cases.json\n@@ -1 +1 @@\n-[1, 2, 3]\n+[1]\n"
    f = _patch(tmp_path, text)
    copy = tmp_path / "copy"
    shutil.copytree(repo.path, copy, symlinks=True)
    subprocess.run(["/usr/bin/patch", "-p1", "-i", str(f)], cwd=copy, check=True,
                   capture_output=True)
    assert (copy / "fixtures/cases.json").read_text() == "[1]\n"  # the pack moved
    # rule 3 needs the patch applied, and git will not apply it beyond a link: 4, not 0
    res = run_cli(["scope", "--patch", str(f)], repo.path)
    assert res.code == 4, res.out + res.err
    assert "the patch does not apply to HEAD" in res.err and "data/cases.json" in res.err


@pytest.mark.parametrize("link, target", [
    ("src/props", "../properties"),
    ("src/prop.py", "../properties/test_retry.py"),
    ("src/deep/er/p", "../../../properties"),
    ("src/all", ".."),
    ("src/pin", "../fixture_digest.txt"),
    ("src/cases", "../fixtures/cases.json"),
    ("src/Props", "../PROPERTIES"),
    ("src/dots", "./../src/../properties/./"),
])
def test_an_agent_may_not_add_a_link_into_the_oracle(repo: Repo, link: str,
                                                     target: str) -> None:
    adopt(repo, AGENTS)
    repo.symlink(link, target)
    repo.stage()
    res = run_cli(["scope", "--agent", "--json"], repo.path)
    assert res.code == 1, res.out
    out = res.json()
    assert out["oracle"] == [link] and out["behavior"] == []
    assert [r["rule"] for r in out["reasons"]] == [2]
    sha = repo.commit("link", author=BOT)
    res = run_cli(["scope", "--commit", sha, "--json"], repo.path)
    assert res.code == 1 and res.json()["oracle"] == [link]
    res = run_cli(["scope", "--range", f"{sha}~1..{sha}", "--json"], repo.path)
    assert res.code == 1 and res.json()["commits"][0]["oracle"] == [link]


def test_an_absolute_link_into_the_repository_is_resolved_within_it(repo: Repo) -> None:
    adopt(repo, AGENTS)
    repo.symlink("src/props", str(repo.path / "properties"))
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.stage()
    res = run_cli(["scope", "--json"], repo.path)
    assert res.code == 1, res.out
    assert res.json()["oracle"] == ["src/props"] and res.json()["behavior"] == ["src/app.py"]
    assert [r["rule"] for r in res.json()["reasons"]] == [1]


def test_a_link_to_a_link_into_the_oracle_is_oracle(repo: Repo) -> None:
    repo.symlink("lib/judge", "../properties")
    adopt(repo, AGENTS)
    repo.symlink("src/props", "../lib/judge")
    repo.stage()
    res = run_cli(["scope", "--agent", "--json"], repo.path)
    assert res.code == 1 and res.json()["oracle"] == ["src/props"]


def test_deleting_a_link_into_the_oracle_is_an_oracle_change(linked: Repo) -> None:
    linked.git("rm", "-q", "src/props")
    sha = linked.commit("drop the alias", author=BOT)
    res = run_cli(["scope", "--commit", sha, "--json"], linked.path)
    assert res.code == 1 and res.json()["oracle"] == ["src/props"]


@pytest.mark.parametrize("link, target", [
    ("src/alias.py", "app.py"),
    ("src/etc", "/etc"),
    ("src/up", "../../outside"),
    ("src/loop", "loop"),
    ("src/props-ish", "../propertiesx"),
])
def test_links_that_lead_elsewhere_stay_behaviour(repo: Repo, link: str, target: str) -> None:
    adopt(repo, AGENTS)
    repo.symlink(link, target)
    repo.stage()
    res = run_cli(["scope", "--agent", "--json"], repo.path)
    assert res.code == 0, res.out
    assert res.json()["behavior"] == [link]


def test_a_patch_that_adds_a_link_into_the_oracle_is_oracle(repo: Repo, tmp_path: Path) -> None:
    adopt(repo, AGENTS)
    repo.symlink("src/props", "../properties")
    repo.stage()
    text = repo.git("diff", "--cached")
    assert "new file mode 120000" in text
    repo.git("reset", "-q", "--hard")
    res = run_cli(["scope", "--patch", str(_patch(tmp_path, text)), "--agent", "--json"],
                  repo.path)
    assert res.code == 1, res.out + res.err
    assert res.json()["oracle"] == ["src/props"]


@pytest.mark.parametrize("links, path, last, want", [
    ({"a": "b", "b": "c"}, "a/x", False, "c/x"),
    ({"a": "../q"}, "a/x", False, None),
    ({"d/a": "../q"}, "d/a/x", False, "q/x"),
    ({"d/a": ".."}, "d/a/d/a/p", False, "p"),
    ({"l": "l"}, "l/x", False, None),
    ({"a": "b"}, "a", True, "b"),
    ({"a": "b"}, "a", False, "a"),
    ({"a": "/ROOT/p"}, "a/x", False, "p/x"),
    ({"a": "/elsewhere/p"}, "a/x", False, None),
    ({"s/a": "x/.."}, "s/a/q", False, "s/q"),
])
def test_resolution_within_the_tree(tmp_path: Path, links: dict[str, str], path: str,
                                    last: bool, want: str | None) -> None:
    root = str(tmp_path)
    side = Links(root, {k: v.replace("/ROOT", root) for k, v in links.items()})
    assert side.resolve(path, last=last) == want


# --- Hypothesis: resolution in git's tree is what the kernel does in a checkout -------------

_NAMES = st.sampled_from(["a", "b", "c"])
_TARGETS = st.lists(st.sampled_from(["a", "b", "c", "..", "."]), min_size=1,
                    max_size=4).map("/".join)


@settings(max_examples=150, deadline=None)
@given(links=st.dictionaries(st.lists(_NAMES, min_size=1, max_size=3).map("/".join),
                             _TARGETS, max_size=4),
       path=st.lists(_NAMES, min_size=1, max_size=4).map("/".join))
def test_resolution_agrees_with_the_filesystem(tmp_path_factory: pytest.TempPathFactory,
                                               links: dict[str, str], path: str) -> None:
    """Materialise the links in a directory (real dirs for every other prefix) and ask
    the kernel: where it resolves inside the root, ``Links.resolve`` says the same."""
    root = tmp_path_factory.mktemp("tree")
    made: dict[str, str] = {}
    for link, target in sorted(links.items(), key=lambda kv: kv[0].count("/")):
        parts = link.split("/")
        if any("/".join(parts[:i]) in made for i in range(1, len(parts))):
            continue  # a link below a link: git's tree cannot hold both
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        if (root / link).exists() or (root / link).is_symlink():
            continue
        (root / link).symlink_to(target)
        made[link] = target
    real_root = os.path.realpath(root)
    try:
        real = os.path.realpath(root / path, strict=False)
    except OSError:
        return  # a loop the kernel refuses: resolve() says None or a path; nothing to compare
    ours = Links(str(root), made).resolve(path)
    inside = real == real_root or real.startswith(real_root + "/")
    if _loops(root, path):
        return
    if ours is None:  # leads nowhere: out of the tree, or nowhere the kernel reaches either
        assert not inside or _unreachable(root / path)
    elif inside:
        want = os.path.relpath(real, real_root).replace(os.sep, "/")
        assert ours == ("" if want == "." else want)
    else:
        raise AssertionError(f"{path} leaves the tree ({real}) but resolved to {ours!r}")


def _unreachable(where: Path) -> bool:
    try:
        os.stat(where)
    except OSError:
        return True
    return False


def _loops(root: Path, path: str) -> bool:
    try:
        os.stat(root / path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
