"""Patch files judged against what real GNU ``patch`` and ``git apply`` would change.

For every shape below (and for generated ones that hide a second section after a
legit one), the patch is applied for real, with ``/usr/bin/patch`` (``-p1`` and
``-p0``) and ``git apply``, to copies of the repository; every file either of them
changes must be among the paths of ballot-guard's verdict, or ballot-guard must
refuse the patch (exit 4, naming the line).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing.helpers import Repo, init_repo, run_cli
from testing.scope_support import adopt

PATCH = "/usr/bin/patch"
FIVE = "a\nb\nc\nd\ne\n"
PROP = "properties/test_five.py"
LIB = "src/lib.py"

pytestmark = pytest.mark.skipif(not Path(PATCH).exists(), reason="GNU patch not installed")

LEGIT = ("diff --git a/src/lib.py b/src/lib.py\nindex 1111111..2222222 100644\n"
         "--- a/src/lib.py\n+++ b/src/lib.py\n@@ -1 +1 @@\n-a\n+A\n")
PROP_HUNK = "@@ -4 +4 @@\n-d\n+D\n"
NORMAL = "4c4\n< d\n---\n> D\n"
ED = "4c\nD\n.\n"
CONTEXT = ("*** a/properties/test_five.py\n--- b/properties/test_five.py\n"
           "***************\n*** 4 ****\n! d\n--- 4 ----\n! D\n")
UNI = f"--- a/{PROP}\n+++ b/{PROP}\n{PROP_HUNK}"
MAIL = ("From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n"
        "From: Test Person <test@example.com>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        "Subject: [PATCH] tune the retry\n\nA message, with a line of its own:\n"
        "--- not a header, prose\n\n---\n src/lib.py | 2 +-\n"
        " 1 file changed, 1 insertion(+), 1 deletion(-)\n\n")
SIGNATURE = "-- \n2.39.5\n\n"


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


def _rfc934(text: str) -> str:
    """The ``---`` name line encapsulated (``- --- ...``): GNU patch unencapsulates that
    line (an encapsulated hunk line is not applied, so none is here)."""
    return text.replace("--- ", "- --- ", 1)


# A second section, aimed at the property, in every disguise GNU patch sees through.
DISGUISES: dict[str, str] = {
    "indented two spaces": _indent(UNI, "  "),
    "indented a tab": _indent(UNI, "\t"),
    "X-prefixed": _indent(UNI, "X"),
    "rfc 934": _rfc934(UNI),
    "index + normal": f"Index: {PROP}\n{NORMAL}",
    "index + ed": f"Index: {PROP}\n{ED}",
    "index + normal, indented": _indent(f"Index: {PROP}\n{NORMAL}", "  "),
    "context": CONTEXT,
    "context, indented": _indent(CONTEXT, "  "),
    "context, rfc 934": _rfc934(CONTEXT),
    "reversed +++/---": f"+++ b/{PROP}\n--- a/{PROP}\n{PROP_HUNK}",
    "names after the hunk's text": f"junk\n--- a/{PROP}\n{PROP_HUNK}",
    "git rename, indented": _indent(
        f"diff --git a/{PROP} b/properties/test_six.py\nsimilarity index 100%\n"
        f"rename from {PROP}\nrename to properties/test_six.py\n", "  "),
    "unified after the signature, indented": SIGNATURE + _indent(UNI, " "),
}


def _project(tmp: Path) -> Repo:
    repo = init_repo(tmp / "repo")
    adopt(repo)
    repo.write(LIB, FIVE)
    repo.write(PROP, FIVE)
    repo.commit_all("five-line files")
    return repo


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for p in root.rglob("*"):
        if ".git" in p.relative_to(root).parts or not p.is_file():
            continue
        out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    names = set(before) | set(after)
    return {n for n in names if before.get(n) != after.get(n) and not n.endswith(
        (".orig", ".rej"))}


def _gnu_patch(repo: Repo, data: bytes, strip: int, where: Path) -> set[str]:
    """The files real GNU patch changes (applied to a copy of the tree)."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(repo.path, where, ignore=shutil.ignore_patterns(".git"))
    before = _tree(where)
    subprocess.run([PATCH, f"-p{strip}", "-f", "-s", "--no-backup-if-mismatch"], cwd=where,
                   input=data, capture_output=True, check=False, timeout=30)
    return _changed(before, _tree(where))


def _git_apply(repo: Repo, data: bytes) -> set[str]:
    proc = subprocess.run(["git", "apply", "--numstat", "-z", "-"], cwd=repo.path, input=data,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        return set()
    return {rec.split(b"\t", 2)[2].decode() for rec in proc.stdout.split(b"\0") if rec}


def _judged(repo: Repo, tmp: Path, data: bytes) -> tuple[int, set[str], str]:
    f = tmp / "in.diff"
    f.write_bytes(data)
    res = run_cli(["scope", "--patch", str(f), "--json"], repo.path)
    if res.code == 4:
        assert res.err.startswith("ballot-guard: error: ") and "Traceback" not in res.err
        return 4, set(), res.err
    doc = res.json()
    return res.code, set(doc["oracle"]) | set(doc["behavior"]) | set(doc["neutral"]), ""


def _check(repo: Repo, tmp: Path, data: bytes) -> tuple[int, set[str], set[str], str]:
    """Judge ``data``; unless refused, every file patch -p1/-p0 or git apply changes is
    judged.  Returns (exit, judged paths, files patch -p1 changes, error text)."""
    code, judged, err = _judged(repo, tmp, data)
    p1 = _gnu_patch(repo, data, 1, tmp / "p1")
    p0 = _gnu_patch(repo, data, 0, tmp / "p0")
    if code != 4:
        assert p1 <= judged, (p1, judged)
        assert {p for p in p0 if p.startswith("properties/")} <= judged, (p0, judged)
        assert _git_apply(repo, data) <= judged
    return code, judged, p1, err


@pytest.mark.parametrize("name", sorted(DISGUISES))
def test_a_hidden_second_section_is_refused_naming_its_line(name: str, tmp_path: Path) -> None:
    repo = _project(tmp_path)
    data = (LEGIT + DISGUISES[name]).encode()
    code, _, _p1, err = _check(repo, tmp_path, data)
    assert code == 4, (name, err)
    first_hidden = LEGIT.count("\n") + 1
    line = int(err.split("line ", 1)[1].split(":", 1)[0])
    assert line >= first_hidden, err
    assert "GNU patch" in err


@pytest.mark.parametrize("name", ["indented two spaces", "index + normal", "context",
                                  "X-prefixed", "git rename, indented"])
def test_a_section_hidden_in_a_mail_message_is_refused(name: str, tmp_path: Path) -> None:
    """Before the first section: in the text of a ``git format-patch`` mail."""
    repo = _project(tmp_path)
    head, _, rest = MAIL.partition("\n---\n")
    data = (head + "\n" + DISGUISES[name] + "\n---\n" + rest + LEGIT + SIGNATURE).encode()
    code, _, _, err = _check(repo, tmp_path, data)
    assert code == 4 and "GNU patch" in err, err
    line = int(err.split("line ", 1)[1].split(":", 1)[0])
    assert head.count("\n") < line <= head.count("\n") + 1 + DISGUISES[name].count("\n")


def test_the_disguises_are_real_patch_sections(tmp_path: Path) -> None:
    """The table is not vacuous: GNU patch does apply each disguise to the property (with
    -p1, or -p0 for the Index: ones), or renames it."""
    repo = _project(tmp_path)
    for name, hidden in DISGUISES.items():
        data = (LEGIT + hidden).encode()
        strip = 0 if name.startswith("index") else 1
        touched = _gnu_patch(repo, data, strip, tmp_path / "probe")
        assert PROP in touched, (name, touched)


READ_SHAPES: dict[str, tuple[str, set[str]]] = {
    "git diff": (LEGIT, {LIB}),
    "format-patch": (MAIL + LEGIT + SIGNATURE, {LIB}),
    "diff -u": (("--- src/lib.py\t2026-01-01 00:00:00\n+++ src/lib.py\t2026-01-01 00:00:01\n"
                 "@@ -1,2 +1,2 @@\n-a\n+A\n b\n"), {"lib.py"}),
    "svn diff with Index:": (
        "Index: src/lib.py\n" + "=" * 67 + "\n--- src/lib.py\t(revision 1)\n"
        "+++ src/lib.py\t(working copy)\n@@ -1 +1 @@\n-a\n+A\n", {"lib.py"}),
    "two sections, no newline mark": (
        LEGIT + "\\ No newline at end of file\n" + UNI, {LIB, PROP}),
    "hunk count that lies, trailing text": (LEGIT + "-b\n+B\n", {LIB}),
    "Prereq line": ("Prereq: 1.0\n" + LEGIT, {LIB}),
}


@pytest.mark.parametrize("name", sorted(READ_SHAPES))
def test_ordinary_shapes_are_read(name: str, tmp_path: Path) -> None:
    repo = _project(tmp_path)
    text, want = READ_SHAPES[name]
    code, judged, _p1, err = _check(repo, tmp_path, text.encode())
    assert code != 4, err
    assert want <= judged, judged


def test_an_index_line_names_a_path_that_counts(tmp_path: Path) -> None:
    """``Index:`` names are read: patch may take its file name from them."""
    repo = _project(tmp_path)
    text = f"Index: {PROP}\n--- {LIB}\n+++ {LIB}\n@@ -1 +1 @@\n-a\n+A\n"
    code, judged, _, _ = _check(repo, tmp_path, text.encode())
    assert code == 1 and PROP in judged  # the property and lib.py together: mixed


# --- generated: a legit section, then a second one in a random disguise ------------------------

_WRAPS = st.sampled_from(["", "  ", "\t", "X", " X\t", "- "])
_BODIES = st.sampled_from([UNI, f"Index: {PROP}\n{NORMAL}", f"Index: {PROP}\n{ED}", CONTEXT])
_GAPS = st.sampled_from(["", "\n", "some words\n", SIGNATURE, "\\ No newline at end of file\n"])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_BODIES, wrap=_WRAPS, gap=_GAPS, rfc934=st.booleans(), mail=st.booleans(),
       crlf=st.booleans())
def test_a_generated_hidden_section_is_judged_or_refused(
        tmp_path_factory: pytest.TempPathFactory, body: str, wrap: str, gap: str,
        rfc934: bool, mail: bool, crlf: bool) -> None:
    tmp = tmp_path_factory.mktemp("gen")
    repo = _project(tmp)
    hidden = _indent(_rfc934(body) if rfc934 else body, wrap) if wrap != "- " else \
        _indent(body, "- ")
    if crlf:
        hidden = hidden.replace("\n", "\r\n")
    text = (MAIL if mail else "") + LEGIT + gap + hidden
    code, judged, p1, err = _check(repo, tmp, text.encode())
    if PROP in p1:
        assert code == 4 or PROP in judged, (code, judged, err)
