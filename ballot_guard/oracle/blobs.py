"""The judge a vote reads is the commit's, byte for byte: oracle files against their blobs.

The pin and the scope rules read git objects; the runs read files on disk.  A
smudge filter, an ``eol`` or ``working-tree-encoding`` conversion, or anything
that writes a checkout between git and the vote would make the two differ
unseen.  So before the vote every oracle file of the checkout (the properties
dir, the fixtures dir, the conftest and pytest config files above the
properties) is hashed as git hashes a blob (``blob <size>\\0`` and the bytes,
with the repository's object format: ``git hash-object --no-filters``) and
compared with the blob the commit holds there, kind and executable bit
included; an oracle file on disk that the commit does not hold (bytecode
caches aside) counts too.
"""
from __future__ import annotations

import os

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.oracle import tables
from ballot_guard.oracle.names import ANCESTOR_FILES, ancestors


def _singles(config: Config) -> list[str]:

    return [f"{a}/{n}" if a else n for a in ancestors(config.properties_dir)
            for n in (*ANCESTOR_FILES, *tables.TABLE_FILES)]


def _differs(full: str, mode: str, oid: str, algo: str) -> str | None:
    """Why the file at ``full`` is not the blob ``oid`` (with ``mode``), or None."""
    if not os.path.lexists(full):
        return "missing"
    if mode == "120000":
        if not os.path.islink(full):
            return "not the symlink the commit holds"
        target = os.fsencode(os.readlink(full))
        return None if git.blob_id(target, algo) == oid else "a symlink to another target"
    got = git.file_blob_id(full, algo)
    if got is None:
        return "not a regular file"
    if got[0] != oid:
        return "other bytes than its blob"
    if got[1] != (mode == "100755"):
        return "another executable bit"
    return None


def mismatches(tree: str, root: str, sha: str, config: Config) -> list[str]:
    """Every oracle path of the checkout ``tree`` that is not what commit ``sha`` holds,
    each with why (``root``: the repository, for git)."""
    singles = _singles(config)
    dirs = [config.properties_dir, config.fixtures_dir]
    env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
    data = git.out(["ls-tree", "-r", "-z", "--full-tree", sha, "--", *dirs, *singles],
                   cwd=root, env=env)
    algo = git.object_format(root)
    held: set[str] = set()
    found: list[str] = []
    for rec in git.split_z(data):
        meta, _, path = rec.partition("\t")
        mode, _kind, oid = meta.split(" ")
        held.add(path)
        if mode == "160000":
            continue
        why = _differs(os.path.join(tree, path), mode, oid, algo)
        if why is not None:
            found.append(f"{path} ({why})")
    for path in _on_disk(tree, config, singles):
        if path not in held:
            found.append(f"{path} (not in the commit)")
    return found


def _on_disk(tree: str, config: Config, singles: list[str]) -> list[str]:
    """The oracle files on disk: every file of the fixtures, the properties dir's Python
    files, the single files that exist."""
    found = [rel for rel in singles if os.path.lexists(os.path.join(tree, rel))]
    for rel_dir, suffix in ((config.fixtures_dir, ""), (config.properties_dir, ".py")):
        top = os.path.join(tree, rel_dir)
        if os.path.islink(top) or not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, tree).replace(os.sep, "/")
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            found += [f"{rel}/{name}" for name in (*filenames, *links) if name.endswith(suffix)]
    return found


def message(found: list[str], where: str) -> str:
    shown = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    return (f"the oracle files of {where} are not the commit's: {shown}. Something between "
            "git and the vote rewrote them (a smudge or clean filter in .git/config or "
            ".git/info/attributes, an eol or encoding conversion, an edit): nobody votes "
            "on a judge the pin and the scope rules did not see")


def filter_drivers(root: str) -> set[str]:
    """The filter drivers git's configuration defines (a smudge, clean or process command:
    code git runs on checkout), by name."""
    res = git.run(["config", "--null", "--get-regexp", r"^filter\..*\.(smudge|clean|process)$"],
                  cwd=root, check=False)
    names = set()
    for rec in git.split_z(res.stdout):
        key, _, value = rec.partition("\n")
        name = key[len("filter."):key.rfind(".")]
        if value.strip():
            names.add(name)
    return names


def filtered(root: str, config: Config) -> list[str]:
    """Oracle files of the working tree ``root`` that a configured filter driver wrote
    (their ``filter`` attribute names one) and that are not their index blob, each with
    the driver's name.  git runs those drivers on checkout: what they wrote is not what
    the pin, the scope rules and the index hold.  (An uncommitted edit of an unfiltered
    oracle file is the user's own, and a plain gate votes on it, as it always did.)"""
    drivers = filter_drivers(root)
    if not drivers:
        return []
    env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
    data = git.out(["ls-files", "-s", "-z", "--", config.properties_dir, config.fixtures_dir,
                    *_singles(config)], cwd=root, env=env)
    staged: dict[str, tuple[str, str]] = {}
    for rec in git.split_z(data):
        meta, _, path = rec.partition("\t")
        mode, oid, _stage = meta.split(" ")
        staged[path] = (mode, oid)
    if not staged:
        return []
    attrs = git.out(["check-attr", "-z", "--stdin", "filter"], cwd=root,
                    input=b"".join(os.fsencode(p) + b"\0" for p in staged))
    fields = git.split_z(attrs)
    algo = git.object_format(root)
    found = []
    for path, _attr, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=True):
        if value not in drivers or path not in staged:
            continue
        mode, oid = staged[path]
        why = _differs(os.path.join(root, path), mode, oid, algo)
        if why is not None:
            found.append(f"{path} (filter={value}: {why})")
    return found


def filtered_message(found: list[str]) -> str:
    shown = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    return (f"oracle files of the working tree were written by a filter, not as committed: "
            f"{shown}. A filter driver (filter.NAME in .git/config) is code git runs on "
            "checkout, between the commit and the vote; nobody votes on a judge the pin and "
            "the scope rules did not see: remove the filter attribute (.git/info/attributes, "
            ".gitattributes) or the driver, check the files out again (git checkout -- PATH), "
            "or vote on the commit with `ballot-guard gate --rev HEAD`")
