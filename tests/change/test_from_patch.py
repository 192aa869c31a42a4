"""Reading a unified diff from its headers: every path git would touch, and nothing escapes."""
from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ballot_guard.change import patch_bulk
from ballot_guard.change.from_patch import (
    PatchError,
    _numstat_raw_paths,
    files,
    numstat,
    scan,
    unquote,
)
from ballot_guard.change.patch_lines import p0_paths, record_changes, scan_lines
from ballot_guard.change.raw_diff import FileChange
from ballot_guard.errors import CannotJudge
from testing.helpers import Repo, init_repo
from testing.scope_support import adopt, scope_json
from testing.scope_support import scope as run_scope


def _scan(text: str | bytes) -> list[FileChange]:
    return scan(text.encode() if isinstance(text, str) else text)


def test_git_rename_copy_mode_and_new_delete_headers() -> None:
    diff = (
        "diff --git a/src/a.py b/properties/test_a.py\n"
        "similarity index 100%\nrename from src/a.py\nrename to properties/test_a.py\n"
        "diff --git a/x b/y\nsimilarity index 90%\ncopy from x\ncopy to y\n"
        "--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"
        "diff --git a/link b/link\nold mode 100644\nnew mode 120000\n"
    )
    assert _scan(diff) == [
        FileChange("R", "properties/test_a.py", "src/a.py"),
        FileChange("C", "y", "x"),
        FileChange("M", "run.sh", None, "100644", "100755"),
        FileChange("A", "new.txt", None, None, "100644"),
        FileChange("D", "gone.txt", None, "100644", None),
        FileChange("T", "link", None, "100644", "120000"),
    ]


def test_dev_null_sides_make_adds_and_deletes() -> None:
    diff = ("--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+x\n"
            "--- a/removed.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    assert _scan(diff) == [FileChange("A", "added.txt"), FileChange("D", "removed.txt")]


def test_quoted_paths_are_unquoted_to_raw_bytes() -> None:
    diff = ('diff --git "a/caf\\303\\251 menu.txt" "b/caf\\303\\251 menu.txt"\n'
            "old mode 100644\nnew mode 100755\n"
            'diff --git a/plain "b/with\\ttab"\nsimilarity index 100%\n'
            'rename from plain\nrename to "with\\ttab"\n')
    got = _scan(diff)
    assert [f.path for f in got] == ["café menu.txt", "with\ttab"]
    assert got[1].old_path == "plain"
    assert unquote(b'"a\\"b\\\\c\\n" rest') == (b'a"b\\c\n', b" rest")
    with pytest.raises(PatchError):
        unquote(b'"unterminated')
    with pytest.raises(PatchError):
        unquote(b'"bad \\q escape"')


def test_unquoted_names_with_spaces_split_where_both_agree() -> None:
    diff = "diff --git a/my file.txt b/my file.txt\nold mode 100644\nnew mode 100755\n"
    assert [f.path for f in _scan(diff)] == ["my file.txt"]


def test_plain_diff_u_without_git_headers() -> None:
    diff = ("--- old/src/app.py\t2026-01-01 00:00:00.000000000 +0000\n"
            "+++ new/src/app.py\t2026-01-01 00:00:01.000000000 +0000\n"
            "@@ -1,2 +1,2 @@\n context\n-a\n+b\n")
    assert _scan(diff) == [FileChange("M", "src/app.py")]


def test_traditional_diff_naming_two_files_counts_both() -> None:
    diff = "--- a/src/app.py\n+++ b/properties/test_x.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert {f.path for f in _scan(diff)} == {"src/app.py", "properties/test_x.py"}


def test_hunk_bodies_are_skipped_by_their_counts() -> None:
    """A removed line '-- x' and an added '++ y' are content, not headers."""
    diff = ("diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
            "@@ -1,3 +1,3 @@\n"
            "--- a/properties/test_x.py\n"
            "+++ b/properties/test_x.py\n"
            " rename from properties/y\n"
            "\\ No newline at end of file\n"
            "-diff --git a/fixtures/z b/fixtures/z\n")
    # The hunk claims 3 old lines: '---', ' rename', '-diff' and 2... see counts below.
    with pytest.raises(PatchError):
        _scan(diff)  # 3 old + 3 new announced, only 2 new given: malformed
    ok = ("diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
          "@@ -1,2 +1,2 @@\n"
          "--- a/properties/test_x.py\n"
          "+++ b/properties/test_x.py\n"
          " rename from properties/y\n")
    assert [f.path for f in _scan(ok)] == ["notes.txt"]


def test_inconsistent_git_header_names_all_count() -> None:
    diff = ("diff --git a/src/app.py b/src/app.py\n--- a/properties/test_x.py\n"
            "+++ b/properties/test_x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert {f.path for f in _scan(diff)} == {"src/app.py", "properties/test_x.py"}


def test_crlf_patch_headers() -> None:
    diff = "--- a/src/app.py\r\n+++ b/src/app.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"
    assert _scan(diff) == [FileChange("M", "src/app.py")]


@pytest.mark.parametrize("diff, why", [
    ("--- a/src/../../x\n+++ b/src/../../x\n@@ -0,0 +1 @@\n+x\n", "escapes"),
    ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "absolute"),
    ("diff --git a//etc/passwd b//etc/passwd\nold mode 100644\nnew mode 100755\n", "absolute"),
    ("diff --git a/x b/x\nrename from ../outside\nrename to x\n", "escapes"),
    ("diff --git a/x b/x\nrename from /abs\nrename to x\n", "absolute"),
    (("diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nold mode 100644\n"
      "new mode 100755\n"), "invalid"),
    ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n", "ends early"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", ""),  # trailing +c: garbage for us
    ("@@ -1 +1 @@\n-a\n+b\n", "without a file header"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @\n-a\n+b\n", "malformed hunk header"),
    ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n?c\n", "malformed hunk"),
    ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +0,0 @@\n", "/dev/null on both"),
])
def test_malformed_or_escaping_patches_cannot_be_judged(diff: str, why: str) -> None:
    if not why:
        assert _scan(diff) == [FileChange("M", "x")]
        return
    with pytest.raises(PatchError, match=why):
        _scan(diff)


def test_patch_errors_are_exit_4_naming_the_problem(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    cases = {
        "escape.diff": ("--- a/src/../../x\n+++ b/src/../../x\n@@ -0,0 +1 @@\n+x\n", "escapes"),
        "garbage.diff": ("this is not a diff\n", "no diff"),
        "short.diff": ("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,5 +1,5 @@\n-x\n", "ends early"),
    }
    for name, (text, why) in cases.items():
        f = tmp_path / name
        f.write_text(text)
        res = run_scope(repo, "--patch", str(f))
        assert res.code == 4, name
        assert res.err.startswith("ballot-guard: error: ") and why in res.err, res.err
        assert "Traceback" not in res.err


def test_git_parser_failure_is_reported_with_its_reason(repo: Repo, tmp_path: Path) -> None:
    """A git header git itself cannot read: our scan would accept it, git's does not."""
    adopt(repo)
    f = tmp_path / "bad.diff"
    f.write_text("diff --git a/x b/x\nnew file mode 100644\nGIT binary patch\nliteral 5\n"
                 "zzzz\n\n")
    res = run_scope(repo, "--patch", str(f))
    assert res.code == 4 and "malformed patch" in res.err


def test_union_with_gits_own_reading(repo: Repo) -> None:
    """Whatever git's parser names is classified, even a name our scan reads differently."""
    adopt(repo)

    # a traditional name with no slash: ``-p1`` keeps it whole; the ``-p0`` reading of the
    # other side names the property
    data = b"--- x\n+++ properties/test_y.py\n@@ -0,0 +1 @@\n+x\n"
    p0: list[str] = []
    names = {f.path for f in files(str(repo.path), data, p0)}
    assert set(numstat(str(repo.path), data)) == {"test_y.py"}
    assert names == {"test_y.py", "x"} and p0 == ["x", "properties/test_y.py"]
    assert files(str(repo.path), b"") == () and files(str(repo.path), b"\n \n") == ()


def test_blank_lines_and_preamble_of_format_patch_are_ignored(repo: Repo) -> None:
    adopt(repo)
    repo.write("src/app.py", "RETRIES = 4\n")
    sha = repo.commit_all("behaviour\n\n--- not a header, prose\n")
    mail = repo.git("format-patch", "-1", "--stdout", sha)
    assert [f.path for f in files(str(repo.path), mail.encode())] == ["src/app.py"]


# --- Hypothesis: names git writes are read back exactly --------------------------------------

_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0")
_SEGMENT = st.text(_CHARS, min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..") and s.strip() == s and not s.startswith("-"))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join),
                      min_size=1, max_size=4, unique_by=lambda s: s.casefold()))
def test_scan_reads_back_every_name_git_writes(tmp_path_factory: pytest.TempPathFactory,
                                               names: list[str]) -> None:
    repo = init_repo(tmp_path_factory.mktemp("h"))
    (repo.path / "seed").write_text("x")
    repo.commit_all("seed")
    wrote = []
    for i, name in enumerate(names):
        if name.casefold().startswith(".git") or any(
                other != name and (other.startswith(name + "/") or name.startswith(other + "/"))
                for other in names):
            continue
        try:
            repo.write(name, f"{i}\n")
        except OSError:  # a name this filesystem refuses (too long): not a case to check
            continue
        wrote.append(name)
    assume(wrote)
    repo.stage()
    diff = repo.git("diff", "--cached", "--binary").encode("utf-8", "surrogateescape")
    staged = set(repo.git("diff", "--cached", "--name-only", "-z").split("\0")) - {""}
    got = {f.path for f in files(str(repo.path), diff)}
    norm = {unicodedata.normalize("NFC", p) for p in got}
    assert {unicodedata.normalize("NFC", p) for p in staged} <= norm
    with pytest.raises(CannotJudge):
        files(str(repo.path), diff + b"--- a/../up\n+++ b/../up\n@@ -0,0 +1 @@\n+x\n")


def test_patch_scope_json_for_a_plain_diff(repo: Repo, tmp_path: Path) -> None:
    adopt(repo)
    (tmp_path / "old").mkdir()
    f = tmp_path / "plain.diff"
    f.write_text("--- a/src/app.py\t2026-01-01\n+++ b/src/app.py\t2026-01-01\n"
                 "@@ -1 +1 @@\n-RETRIES = 3\n+RETRIES = 4\n")
    assert scope_json(repo, "--patch", str(f)) == (0, {
        "verdict": "ok", "oracle": [], "behavior": ["src/app.py"], "neutral": [], "reasons": []})


# --- the bulk reading of git sections equals the line-by-line reading -------------------------

def _slow(data: bytes, p0: list[str] | None = None) -> list[FileChange]:
    records = scan_lines(data)
    if p0 is not None:
        p0_paths(records, p0)
    return [c for r in records for c in record_changes(r)]


_BODY = st.lists(st.sampled_from([" ctx", "-old", "+new", "", "--- a/properties/x",
                                  "+++ b/properties/x", "-- ../../up", "\\ No newline at end of file",
                                  "diff --git a/properties/x b/properties/x",
                                  "index 1111111..2222222 100644", "@@ -1 +1 @@"]),
                 max_size=6)


# Header blocks of one section, by shape: (extended lines, --- name, +++ name); NAME is
# the file, a None name no ---/+++ pair ("binary": a Binary files line instead).  The
# common shapes (COMMON) are read in one match each, the others section by section.
_SHAPES = {
    "modified": ("index 1111111..2222222 100644\n", "a/NAME", "b/NAME"),
    "executable": ("index 1111111..2222222 100755\n", "a/NAME", "b/NAME"),
    "new": ("new file mode 100644\nindex 0000000..2222222\n", "/dev/null", "b/NAME"),
    "new link": ("new file mode 120000\nindex 0000000..2222222\n", "/dev/null", "b/NAME"),
    "new, no index": ("new file mode 100755\n", "/dev/null", "b/NAME"),
    "deleted": ("deleted file mode 100755\nindex 1111111..0000000\n", "a/NAME", "/dev/null"),
    "deleted, no index": ("deleted file mode 100644\n", "a/NAME", "/dev/null"),
    "no pair": ("index 1111111..2222222 100644\n", None, None),
    "binary": ("index 1111111..2222222 100644\n", None, None),
    "mode change": ("old mode 100644\nnew mode 100755\nindex 1111111..2222222\n",
                    "a/NAME", "b/NAME"),
    "no mode": ("index 1111111..2222222\n", "a/NAME", "b/NAME"),
    "odd mode": ("index 1111111..2222222 1x0644\n", "a/NAME", "b/NAME"),
    "long mode": ("index 1111111..2222222 1006440\n", "a/NAME", "b/NAME"),
    "two index lines": ("index 1111111..2222222 100644\nindex 1111111..2222222 100644\n",
                        "a/NAME", "b/NAME"),
    "new, wrong side": ("new file mode 100644\nindex 0000000..2222222\n", "a/NAME", "b/NAME"),
    "deleted, wrong side": ("deleted file mode 100644\nindex 1111111..0000000\n",
                            "a/NAME", "b/NAME"),
    "other name": ("index 1111111..2222222 100644\n", "a/NAME", "b/properties/other"),
    "other old name": ("index 1111111..2222222 100644\n", "a/properties/other", "b/NAME"),
    "no header": ("", "a/NAME", "b/NAME"),
}
COMMON = {"modified", "executable", "new", "new link", "new, no index", "deleted",
          "deleted, no index", "no pair", "binary"}
# "x b/x" splits one way only; a quote or a dot component is not a plain name
_NAMES = ["src/a.py", "properties/t.py", "b c.txt", "x b/x", "a b/c.py", 'q"x', "src/./y",
          "-p0/z"]


def _patch(sections: list[tuple[str, str, list[tuple[list[str], int]]]], extra: str) -> bytes:
    """git sections of the given shapes; each hunk's header counts its body's lines, its
    old count off by the number given, and names a function after an odd body; ``extra``
    after each section."""
    out = []
    for name, shape, hunks in sections:
        ext, minus, plus = _SHAPES[shape]
        out.append(f"diff --git a/{name} b/{name}\n{ext}")
        if shape == "binary":
            out.append(f"Binary files a/{name} and b/{name} differ\n")
            continue
        if minus is not None and plus is not None:
            out.append(f"--- {minus.replace('NAME', name)}\n+++ {plus.replace('NAME', name)}\n")
        for body, off in hunks:
            old = sum(1 for b in body if b[:1] in (" ", "-", "")) + off
            new = sum(1 for b in body if b[:1] in (" ", "+", ""))
            where = " def f(x):" if len(body) % 2 else ""  # the function a hunk is in
            out.append(f"@@ -1,{old} +1,{new} @@{where}\n" + "".join(f"{b}\n" for b in body))
        out.append(extra)
    return "".join(out).encode()


@settings(max_examples=500, deadline=None)
@given(sections=st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(sorted(_SHAPES)),
                                st.lists(st.tuples(_BODY, st.sampled_from([0, 0, 0, 1, -1])),
                                         max_size=3)), min_size=1, max_size=4),
       extra=st.sampled_from(["", "", "--- a/properties/late\n+++ b/properties/late\n",
                              "rename from properties/old\n", "garbage\n",
                              "index 1111111..2222222 100644\n"]))
def test_bulk_reading_equals_line_reading(
        sections: list[tuple[str, str, list[tuple[list[str], int]]]], extra: str) -> None:
    """Whatever the bulk reading takes, it reads as the line reading does (paths, statuses,
    modes, the ``-p0`` names), or git refuses the patch; and it takes every patch of
    common shapes whose hunks add up, in one match per section.  The rest is read section
    by section or line by line, to the same result."""
    data = _patch(sections, extra)
    p0_slow: list[str] = []
    try:
        slow = _slow(data, p0_slow)
    except PatchError:
        try:
            scan(data)
        except PatchError:
            return
        # hunks that add up only in total are left to git's own parser (patch_bulk's
        # doc), which refuses them, and so the reading of the patch does
        with pytest.raises(PatchError):
            files(tempfile.gettempdir(), data)
        return
    bulk = patch_bulk.read(data)
    if bulk is not None:
        assert bulk == slow
    p0: list[str] = []
    assert scan(data, p0) == slow
    assert p0 == p0_slow
    plain = all(n in ("src/a.py", "properties/t.py", "b c.txt", "x b/x", "a b/c.py")
                for n, _, _ in sections)
    if plain and not extra and all(shape in COMMON for _, shape, _ in sections) \
            and all(off == 0 for _, _, hunks in sections for _, off in hunks) \
            and not any(b.startswith(("diff --git", "index", "@@")) for _, _, hunks in sections
                        for body, _ in hunks for b in body):
        assert bulk is not None, "a clean git diff of common shapes is read in bulk"
        assert patch_bulk.common(data) == slow  # in one match per section


_CLEAN_BODY = st.lists(st.sampled_from([" ctx", "-old", "+new", "", "--- a/properties/x",
                                        "+++ b/properties/x", "-- ../../up",
                                        "\\ No newline at end of file"]), max_size=5)


@settings(max_examples=300, deadline=None)
@given(sections=st.lists(st.tuples(
    st.sampled_from(["src/a.py", "properties/t.py", "b c.txt", "x b/x", "a b/c.py"]),
    st.sampled_from(sorted(COMMON)),
    st.lists(st.tuples(_CLEAN_BODY, st.just(0)), max_size=3)), min_size=1, max_size=6))
def test_common_shapes_are_read_in_one_match_each(
        sections: list[tuple[str, str, list[tuple[list[str], int]]]]) -> None:
    """A clean git diff of common shapes: read in one match per section, as the line
    reading reads it."""
    data = _patch([(n, shape, [] if shape in ("no pair", "binary") else hunks)
                   for n, shape, hunks in sections], "")
    slow = _slow(data)
    assert patch_bulk.common(data) == slow
    assert patch_bulk.read(data) == slow


@pytest.mark.parametrize("header", [
    "index 1111111..2222222 100644\n",  # no ---/+++ pair
    "index 1111111..2222222 100644\n--- a/src/a.py\n+++ b/src/a.py\nold mode 100644\n",
])
def test_a_hunk_that_does_not_follow_its_pair_is_refused_by_every_reading(header: str) -> None:
    """As the line reading refuses it (GNU patch would look for file names there), so do
    the bulk and the section readings: a real git diff never has one."""
    data = f"diff --git a/src/a.py b/src/a.py\n{header}@@ -1 +1 @@\n-a\n+b\n".encode()
    assert patch_bulk.read(data) is None
    with pytest.raises(PatchError, match="a hunk after text"):
        scan(data)


def test_an_empty_name_before_other_sections_is_refused() -> None:
    """git's own reading takes ``diff --git a/ b/`` as an empty path: it cannot be judged."""
    section = "diff --git a/{0} b/{0}\nindex 1111111..2222222 100644\n--- a/{0}\n+++ b/{0}\n" \
              "@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(PatchError, match="line 1: empty or invalid path"):
        scan((section.format("") + section.format("src/a.py")).encode())


def test_a_traditional_header_after_git_hunks_is_read() -> None:
    diff = ("diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
            "@@ -1 +1 @@\n-a\n+b\n"
            "--- a/properties/t.py\n+++ b/properties/t.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert {f.path for f in _scan(diff)} == {"src/a.py", "properties/t.py"}


def test_bulk_reading_of_a_real_git_diff_equals_line_reading(repo: Repo) -> None:
    adopt(repo)
    repo.write("src/new.py", "x\n\ny\n")  # an empty context line inside a later hunk
    repo.write("src/app.py", "RETRIES = 4\n")
    repo.git("rm", "-q", "README.md")
    repo.git("update-index", "--chmod=+x", "properties/test_retry.py")
    repo.git("mv", "fixtures/cases.json", "fixtures/moved.json")
    repo.stage()
    data = repo.git("diff", "--cached", "-M").encode()
    bulk = patch_bulk.read(data)
    assert bulk is not None and bulk == _slow(data)
    assert {f.status for f in bulk} == {"A", "M", "D", "R"}
    edited = repo.git("diff", "--cached", "--", "src/app.py").encode()
    assert patch_bulk.read(edited + b"trailing garbage\n") is None  # read line by line instead
    assert patch_bulk.read(edited.replace(b"@@ -1 +1 @@", b"@@ -1,2 +1 @@")) is None


_LINE = st.one_of(
    st.sampled_from([
        "diff --git a/x b/x", "diff --git a/x b/y", 'diff --git "a/q\\"x" b/q', "diff --git",
        "--- a/x", "+++ b/x", "--- /dev/null", "+++ /dev/null", "--- ", "+++ ",
        "@@ -1 +1 @@", "@@ -0,0 +1,2 @@", "@@ -1,2 +0,0 @@", "@@ -x +y @@", "@@",
        "rename from a", "rename to b", "copy from c", "copy to d", 'rename from "bad\\q"',
        "old mode 100644", "new mode 100755", "new file mode 100644", "deleted file mode 100644",
        "index 1111111..2222222 100644", "index", "Binary files a/x and b/x differ",
        "GIT binary patch", "literal 3", "zzzz", "", " ctx", "-old", "+new", "\\ No newline",
        "similarity index 90%", "--- a/../../up", "+++ /etc/x", "\r", "garbage",
    ]),
    st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
            max_size=12))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_LINE, max_size=14), crlf=st.booleans())
def test_any_input_is_read_or_refused_cleanly(lines: list[str], crlf: bool) -> None:
    """Whatever the bytes, the scan returns files or raises CannotJudge: never a crash."""
    data = ("\r\n" if crlf else "\n").join(lines).encode("utf-8", "surrogateescape")
    try:
        got = scan(data)
    except CannotJudge:
        return
    for f in got:
        assert f.path and not f.path.startswith("/") and not f.path.startswith("../")
        assert f.old_path is None or not f.old_path.startswith(("/", "../"))


@settings(max_examples=300, deadline=None)
@given(records=st.lists(st.text(st.sampled_from("1-\t\tab c"), max_size=8), max_size=5),
       tail=st.sampled_from(["", "", "x", "1\t2\tx"]))
def test_git_numstat_records_are_read_whole_or_refused(records: list[str], tail: str) -> None:
    """git's ``apply --numstat -z`` records (added, deleted, path; the path may hold tabs)
    give their paths; output of any other form is refused, never half read."""
    out = "".join(f"{r}\0" for r in records) + tail
    if tail or any(r.count("\t") < 2 for r in records):
        with pytest.raises(PatchError, match="unexpected git apply --numstat output"):
            _numstat_raw_paths(out.encode())
        return
    assert _numstat_raw_paths(out.encode()) == [r.split("\t", 2)[2] for r in records]


def test_a_patch_whose_numstat_outgrows_a_pipe_is_read_whole(repo: Repo) -> None:
    """git's numstat of 1,500 new files (more than a 64 KiB pipe holds) is read to its end,
    every file named once, as our reading names them."""
    repo.write("seed", "x\n")
    repo.commit_all("seed")
    for i in range(1500):  # numstat records of 53 bytes: 79,500 in all
        repo.write(f"src/many/module_with_a_rather_long_name_{i:05d}.py", f"V = {i}\n")
    repo.stage()
    data = repo.git("diff", "--cached").encode()
    got = files(str(repo.path), data)
    assert len(numstat(str(repo.path), data)) == len(got) == 1500
    assert [f.path for f in got] == [f.path for f in scan(data)]
