"""Where this ballot-guard came from: the repository its hooks and its Action live in.

``init`` writes a ``.pre-commit-config.yaml`` entry and a workflow that point at this
repository.  The installed distribution says where it was installed from (PEP 610's
``direct_url.json``): a git URL and commit, or a local checkout.  Otherwise the
project's home and the tag of this version are used.
"""
from __future__ import annotations

import json
import os
import re
from importlib import metadata
from typing import NamedTuple
from urllib.parse import unquote, urlparse

from ballot_guard import __version__, git
from ballot_guard.errors import CannotJudge

HOME = "https://github.com/ballot-guard/ballot-guard"
TAG = f"v{__version__}"


class Source(NamedTuple):
    repo: str  # what `repo:` in .pre-commit-config.yaml says
    rev: str  # a tag or commit of it
    action: str  # what `uses:` in a workflow says: OWNER/NAME@REF


def _direct_url() -> dict[str, object] | None:
    try:
        text = metadata.distribution("ballot-guard").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _checkout_commit(path: str) -> str | None:
    if not os.path.isdir(path):
        return None
    try:
        top = git.toplevel(path)
    except CannotJudge:  # not a checkout: no commit to point at
        return None
    if os.path.realpath(top) != os.path.realpath(path):
        return None
    return git.head(top)


def action_ref(repo: str, rev: str) -> str:
    """``OWNER/NAME@REV`` for a GitHub URL, else the project's home at this tag."""
    m = re.match(r"^(?:https://github\.com/|git@github\.com:)([\w.-]+)/([\w.-]+?)(?:\.git)?/?$",
                 repo)
    if m:
        return f"{m.group(1)}/{m.group(2)}@{rev}"
    owner, name = HOME.rsplit("/", 2)[-2:]
    return f"{owner}/{name}@{TAG}"


def detect(repo: str | None = None, rev: str | None = None) -> Source:
    """The hooks' repository and revision (``repo``/``rev`` given win)."""
    if repo is None:
        info = _direct_url()
        url = str(info.get("url", "")) if info else ""
        vcs = info.get("vcs_info") if info else None
        if isinstance(vcs, dict) and vcs.get("vcs") == "git" and url:
            repo, rev = url, rev or str(vcs.get("commit_id") or "") or None
        elif url.startswith("file://"):
            path = unquote(urlparse(url).path)
            commit = _checkout_commit(path)
            if commit is not None:
                repo, rev = path, rev or commit
    if repo is None:
        repo = HOME
    if rev is None:
        rev = TAG
    return Source(repo, rev, action_ref(repo, rev))
