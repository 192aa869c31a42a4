"""split --head: an unpushed mixed HEAD commit becomes oracle commit + behaviour commit."""
from __future__ import annotations

from pathlib import Path

import pytest

from testing.helpers import Repo, git, run_bg, run_cli
from testing.split_support import NO_HEAD, base_repo, names, on_base, stage, state, tree, unchanged

AGENT = "Code Bot <bot@example.com>"
LOOSENED = {"properties/test_retry.py": "loosened\n", "src/billing.py": "RETRIES = 4\n"}


@pytest.fixture
def mixed_head(repo: Repo) -> Repo:
    base_repo(repo)
    repo.write("properties/test_retry.py", "def test_retry():\n    assert 4 == 4\n")
    repo.write("src/billing.py", "RETRIES = 4\n")
    repo.write("README.md", "# retries are 4\n")
    repo.stage()
    repo.git("commit", "-q", "--no-verify", "--author", AGENT,
             "--date", "2025-06-01T12:34:56+0200",
             "-m", "Raise the retry cap\n\nBody line.\n\nCo-authored-by: Helper <h@example.com>")
    return repo


def test_head_is_rewritten_into_two_commits(mixed_head: Repo) -> None:
    repo = mixed_head
    original = repo.head()
    parent = repo.git("rev-parse", "HEAD^").strip()
    repo.write("src/ledger.py", "LEDGER = ['unstaged']\n")
    repo.write("src/billing.py", "RETRIES = 5\n")
    repo.git("add", "src/billing.py")  # a staged edit on top
    repo.write("notes.txt", "untracked\n")
    before = state(repo)

    r = run_cli(["split", "--head"], repo.path)

    assert r.code == 0, r.err
    behaviour, oracle = repo.head(), repo.git("rev-parse", "HEAD^").strip()
    assert repo.git("rev-parse", "HEAD~2").strip() == parent
    assert names(repo, "diff-tree", "-r", parent, oracle) == {"properties/test_retry.py"}
    assert names(repo, "diff-tree", "-r", oracle, behaviour) == {"src/billing.py", "README.md"}
    assert tree(repo, behaviour) == tree(repo, original)
    for sha in (oracle, behaviour):
        assert repo.git("log", "-1", "--format=%an <%ae>|%ad", "--date=raw", sha).strip() == \
            f"{AGENT}|1748774096 +0200"
    assert repo.git("log", "-1", "--format=%B", behaviour) == \
        repo.git("log", "-1", "--format=%B", original)
    msg = repo.git("log", "-1", "--format=%B", oracle)
    assert msg.startswith("Oracle part of: Raise the retry cap\n\nBody line.")
    assert "Co-authored-by: Helper <h@example.com>" in msg
    after = state(repo)
    assert after["files"] == before["files"] and after["index"] == before["index"]
    assert after["status"] == before["status"]
    assert "oracle commit" in r.out and "behaviour commit" in r.out


def test_head_with_message_keeps_co_authors(mixed_head: Repo) -> None:
    r = run_cli(["split", "--head", "-m", "Tighten the retry property"], mixed_head.path)
    assert r.code == 0, r.err
    msg = mixed_head.git("log", "-1", "--format=%B", "HEAD^")
    assert msg.strip() == "Tighten the retry property\n\nCo-authored-by: Helper <h@example.com>"


def test_each_new_commit_passes_scope(mixed_head: Repo) -> None:
    assert run_cli(["scope", "--commit", "HEAD"], mixed_head.path).code == 1
    assert run_cli(["split", "--head"], mixed_head.path).code == 0
    for rev in ("HEAD^", "HEAD"):
        r = run_cli(["scope", "--commit", rev], mixed_head.path)
        assert r.code == 0, r.out


def refused(repo: Repo, *args: str, code: int = 4) -> str:
    with unchanged(repo):
        r = run_cli(["split", *args], repo.path)
        assert r.code == code, (r.out, r.err)
    return r.err + r.out


def test_pushed_head_is_refused(mixed_head: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    mixed_head.git("remote", "add", "origin", str(remote))
    mixed_head.git("push", "-q", "origin", "main")
    assert "already pushed (origin/main)" in refused(mixed_head, "--head")


def test_root_commit_is_refused(repo: Repo) -> None:
    stage(repo, NO_HEAD)
    repo.commit("everything at once")
    assert "root commit" in refused(repo, "--head")


def test_merge_commit_is_refused(mixed_head: Repo) -> None:
    repo = mixed_head
    repo.git("checkout", "-q", "-b", "side", "HEAD^")
    repo.write("docs/side.md", "side\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    assert "merge commit" in refused(repo, "--head")


def test_no_head_is_refused_for_both_modes(repo: Repo) -> None:
    stage(repo, NO_HEAD)
    assert "no commit yet" in refused(repo)
    assert "no commit yet" in refused(repo, "--head")


def test_not_mixed_head_is_left_alone(repo: Repo) -> None:
    base_repo(repo)
    repo.write("src/billing.py", "RETRIES = 4\n")
    repo.write("README.md", "# neutral\n")
    repo.commit_all("behaviour only")
    assert "nothing to split" in refused(repo, "--head", code=0)


def test_cli_staged_split_as_a_user_types_it(repo: Repo) -> None:
    on_base(repo, {"pyproject.toml": '[project]\nname = "billing"\n'}, "pyproject", {
        "pyproject.toml":
            '[project]\nname = "billing"\nversion = "2"\n\n[tool.ballot_guard]\nrepeats = 3\n',
        "properties/test_retry.py": "def test_retry():\n    assert 9\n",
        "src/billing.py": "RETRIES = 9\n"})
    assert run_bg(["scope"], repo.path).code == 1
    r = run_bg(["split"], repo.path)
    assert r.code == 0, r.err
    assert "pyproject.toml: split by table" in r.out
    assert "src/billing.py" in r.out
    assert names(repo, "diff", "--cached") == {"pyproject.toml", "src/billing.py"}
    assert run_bg(["scope", "--commit", "HEAD"], repo.path).code == 0
    assert run_bg(["scope"], repo.path).code == 0  # the rest, judged by the new HEAD's config


def test_cli_usage_errors(repo: Repo) -> None:
    base_repo(repo)
    assert run_cli(["split", "--bogus"], repo.path).code == 4
    assert run_cli(["split", "-m", " "], repo.path).code == 4
    r = run_cli(["split"], repo.path)
    assert r.code == 0 and "nothing to split" in r.out


def test_agent_commit_touching_the_oracle_is_blocked(repo: Repo) -> None:
    on_base(repo, {"pyproject.toml": '[tool.ballot_guard]\nagents = ["code bot <*>"]\n'},
            "agents", LOOSENED)
    repo.commit("agent patch", author=AGENT)
    assert "rule 2" in refused(repo, "--head", code=1)


def test_agent_flag_blocks_a_staged_split(mixed_head: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = mixed_head
    repo.git("reset", "-q", "--soft", "HEAD^")
    monkeypatch.setenv("BALLOT_GUARD_AGENT", "1")
    out = refused(repo, code=1)
    assert "rule 2" in out and "git restore --staged -- properties/test_retry.py" in out
    monkeypatch.delenv("BALLOT_GUARD_AGENT")
    assert run_cli(["split"], repo.path).code == 0


def test_agent_identity_blocks_a_staged_split(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    on_base(repo, {"pyproject.toml": '[tool.ballot_guard]\nagents = ["*[bot]*"]\n'}, "agents",
            LOOSENED)
    monkeypatch.setenv("GIT_COMMITTER_NAME", "helper[bot]")
    assert "rule 2" in refused(repo, code=1)


def test_a_declared_message_encoding_is_kept(mixed_head: Repo) -> None:
    repo = mixed_head
    repo.git("reset", "-q", "--soft", "HEAD^")
    repo.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "--no-verify", "-F", "-",
             input="Caf\xe9 cap\n".encode("latin-1"))
    original = repo.git("cat-file", "commit", "HEAD").encode("utf-8", "surrogateescape")
    assert b"encoding ISO-8859-1" in original
    assert run_cli(["split", "--head"], repo.path).code == 0
    for rev in ("HEAD", "HEAD^"):
        raw = repo.git("cat-file", "commit", rev).encode("utf-8", "surrogateescape")
        assert b"\nencoding ISO-8859-1\n" in raw and b"Caf\xe9 cap" in raw


def test_run_from_a_subdirectory(mixed_head: Repo) -> None:
    repo = mixed_head
    repo.git("reset", "-q", "--soft", "HEAD^")
    r = run_cli(["split"], repo.path / "src")
    assert r.code == 0, r.err
    assert names(repo, "diff", "--cached") == {"src/billing.py", "README.md"}


def test_unmerged_entries_are_refused(mixed_head: Repo) -> None:
    repo = mixed_head
    repo.git("reset", "-q", "--soft", "HEAD^")
    blob = repo.git("rev-parse", ":src/billing.py").strip()
    repo.git("update-index", "--index-info",
             input=(f"0 {'0' * 40}\tsrc/billing.py\n100644 {blob} 1\tsrc/billing.py\n"
                    f"100644 {blob} 2\tsrc/billing.py\n100644 {blob} 3\tsrc/billing.py\n").encode())
    assert "unmerged" in refused(repo)


def test_a_note_when_the_new_config_blocks_the_rest(repo: Repo) -> None:
    # the oracle part makes docs/ oracle; the rest then mixes docs/ and src/
    on_base(repo, {"pyproject.toml": "[project]\nname = 'billing'\n"}, "pyproject", {
        "pyproject.toml": "[project]\nname = 'billing'\n\n[tool.ballot_guard]\n"
                          "oracle_paths = ['docs/**']\n",
        "docs/guide.md": "new guide\n", "src/billing.py": "RETRIES = 4\n"})
    r = run_cli(["split"], repo.path)
    assert r.code == 0, r.err
    assert names(repo, "diff-tree", "-r", "HEAD^", "HEAD") == {"pyproject.toml"}
    assert "note: under the oracle commit's configuration the behaviour part is blocked " \
           "(rule 1)" in r.out
    r = run_cli(["split"], repo.path)
    assert r.code == 0 and names(repo, "diff", "--cached") == {"src/billing.py"}
    assert "note:" not in r.out


def test_head_with_pyproject_on_both_sides(repo: Repo) -> None:
    on_base(repo, {"pyproject.toml": '[project]\nname = "a"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'},
            "pyproject",
            {"pyproject.toml": '[project]\nname = "b"\n\n[tool.pytest.ini_options]\naddopts = "-x"\n'})
    original = repo.commit("both tables at once")
    r = run_cli(["split", "--head"], repo.path)
    assert r.code == 0, r.err
    assert "pyproject.toml: split by table" in r.out
    assert repo.git("show", "HEAD^:pyproject.toml") == \
        '[project]\nname = "a"\n\n[tool.pytest.ini_options]\naddopts = "-x"\n'
    assert tree(repo, "HEAD") == tree(repo, original)
    assert run_cli(["scope", "--range", "HEAD~2..HEAD"], repo.path).code == 0
