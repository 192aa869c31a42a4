"""What the runner loads before any run: Hypothesis only where the checkout names it.

Loading Hypothesis in the fork server (so that every run starts with it, and the
judge's snapshot holds it) takes about a fifth of the runner's start.  A checkout
in which no file says ``hypothesis`` (tracked or not, ignored files aside) has no
property that imports it by name, so the runner skips it; a run that imports it
anyway (through an installed library, or by a computed name) is an error, since
the judge could not watch it (``forkserver._Plugin.late``).
"""
from __future__ import annotations

from ballot_guard import git


def names_hypothesis(tree: str) -> bool:
    """Whether a file of the checkout at ``tree`` holds the word ``hypothesis`` (True
    when git cannot tell: then it is loaded, as a run may need it)."""
    res = git.run(["grep", "-q", "-I", "-F", "--untracked", "-e", "hypothesis", "--", "."],
                  cwd=tree, check=False)
    return res.code != 1
