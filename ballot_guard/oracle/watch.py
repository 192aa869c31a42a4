"""Did the oracle change while it voted?  A stat signature of the judge's files.

The properties run the code under test, and a behaviour patch may make that
code write: into the fixtures (so that the next run reads other inputs), into
a property or a conftest (so that the next run is judged by other code).  The
gate takes this signature before the first run and after the last, and a
difference voids the vote.  A signature holds each file's type, size, mtime,
ctime and inode: any write moves the ctime, which no process can set back.
Every file of the properties dir counts (a golden data file beside a property is
as much the judge as the property), and so do the files ``oracle_paths`` names
(among those git tracks).  ``__pycache__`` folders are left out (no run reads
bytecode another run wrote: each has its own bytecode folder), and so are the pin
and the freeze file: no run reads them, and another gate may record a freeze
meanwhile.
"""
from __future__ import annotations

import os

from ballot_guard import git
from ballot_guard.config import Config
from ballot_guard.oracle import tables
from ballot_guard.oracle.names import ANCESTOR_FILES, ORACLE_FILES, ancestors
from ballot_guard.oracle.paths import Judge

Signature = dict[str, tuple[int, int, int, int, int]]


def _stat(full: str) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.lstat(full)
    except OSError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _walk(tree: str, rel_dir: str, into: Signature) -> None:
    top = os.path.join(tree, rel_dir)
    if os.path.islink(top) or not os.path.isdir(top):
        sig = _stat(top)
        if sig is not None:
            into[rel_dir] = sig
        return
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = os.path.relpath(dirpath, tree).replace(os.sep, "/")
        for name in (*filenames, *(d for d in dirnames
                                   if os.path.islink(os.path.join(dirpath, d)))):
            sig = _stat(os.path.join(dirpath, name))
            if sig is not None:
                into[f"{rel}/{name}"] = sig


def signature(tree: str, config: Config) -> Signature:
    """The signature of the judge's files in ``tree`` (a checkout)."""

    found: Signature = {}
    _walk(tree, config.properties_dir, found)  # the judge's code and its data
    _walk(tree, config.fixtures_dir, found)  # every byte of the pinned pack
    singles = [*(f"{a}/{n}" if a else n for a in ancestors(config.properties_dir)
                 for n in (*ANCESTOR_FILES, *tables.TABLE_FILES)), *ORACLE_FILES,
               *_named(tree, config)]
    for rel in singles:
        sig = _stat(os.path.join(tree, rel))
        if sig is not None:
            found[rel] = sig
    return found


def _named(tree: str, config: Config) -> list[str]:
    """The tracked files that ``oracle_paths`` makes oracle."""
    if not config.oracle_paths:
        return []

    res = git.run(["ls-files", "-z", "--full-name"], cwd=tree, check=False)
    if res.code != 0:
        return []
    judge = Judge(tree, config)
    return [p for p in git.split_z(res.stdout) if judge.is_oracle(p)]


def changed(before: Signature, after: Signature) -> list[str]:
    """Every path added, removed or written between two signatures, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
