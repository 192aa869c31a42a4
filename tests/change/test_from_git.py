"""Change records from git: the staged change carries the index's blob ids, and commit
headers are read once, raw, for the scope rules and split alike."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ballot_guard.change.from_git import commit_info, staged_at
from ballot_guard.split.plumbing import read_commit
from testing.helpers import init_repo


def test_the_staged_change_carries_the_index_blob_ids(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r")
    repo.write("kept.py", "k = 1\n")
    repo.write("gone.py", "g = 1\n")
    repo.write("edited.py", "e = 1\n")
    base = repo.commit_all("base")
    old = {p: repo.git("rev-parse", f"HEAD:{p}").strip() for p in ("gone.py", "edited.py")}
    repo.remove("gone.py")
    repo.write("edited.py", "e = 2\n")
    repo.write("new\tname.py", "n = 1\n")
    repo.stage()
    staged = {rec.split("\t", 1)[1]: rec.split(" ")[1]
              for rec in repo.git("ls-files", "-s", "-z").split("\0")[:-1]}
    files = {f.path: f for f in staged_at(str(repo.path), base).files}
    assert sorted(files) == ["edited.py", "gone.py", "new\tname.py"]
    assert (files["gone.py"].old_oid, files["gone.py"].new_oid) == (old["gone.py"], None)
    assert (files["edited.py"].old_oid, files["edited.py"].new_oid) == (
        old["edited.py"], staged["edited.py"])
    assert (files["new\tname.py"].old_oid, files["new\tname.py"].new_oid) == (
        None, staged["new\tname.py"])


def _raw_commit(repo_path: Path, body: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin",
                           "--literally"], cwd=repo_path, input=body, capture_output=True,
                          check=True).stdout.decode().strip()


def test_one_reader_of_commit_headers_for_scope_and_split(tmp_path: Path) -> None:
    """A commit with two parents, a non-UTF-8 author, a declared encoding, a signature
    whose continuation lines look like headers, and a message holding a blank-line
    header lookalike: identities, parents, message bytes and encoding as stored."""
    repo = init_repo(tmp_path / "r")
    repo.write("f", "x\n")
    first = repo.commit_all("one")
    second = repo.commit("two", allow_empty=True)
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    message = b"Subject \xe9\n\nauthor Forged <forged@x> 1 +0000\nCo-authored-by: Bot <b@x>\n"
    body = (f"tree {tree}\nparent {first}\nparent {second}\n".encode()
            + b"author Ren\xe9 Name <rene@x.example> 1700000000 +0100\n"
            + b"committer Com Mitter <c@x.example> 1700000001 -0500\n"
            + b"encoding ISO-8859-1\n"
            + b"gpgsig -----BEGIN PGP SIGNATURE-----\n author Not Me <no@x>\n"
            + b" parent " + b"f" * 40 + b"\n -----END PGP SIGNATURE-----\n"
            + b"\n" + message)
    sha = _raw_commit(repo.path, body)
    info = commit_info(str(repo.path), sha)
    assert (info.tree, info.parents) == (tree, (first, second))
    assert info.author == "Ren\ufffd Name <rene@x.example>"
    assert info.committer == "Com Mitter <c@x.example>"
    assert info.encoding == "ISO-8859-1"
    assert info.raw_message == message
    assert info.message == message.decode("utf-8", "replace")
    author, parents, raw, encoding = read_commit(str(repo.path), sha)
    assert (author.name, author.email, author.date) == (
        os.fsdecode(b"Ren\xe9 Name"), "rene@x.example", "1700000000 +0100")
    assert author.name.encode("utf-8", "surrogateescape") == b"Ren\xe9 Name"
    assert (parents, raw, encoding) == ([first, second], message, "ISO-8859-1")
