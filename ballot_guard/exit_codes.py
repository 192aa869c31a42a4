"""The contract's five exit codes, named."""
from __future__ import annotations

CLEAN = 0  # every check held, every voter voted pass, none abstained
BLOCKED = 1  # scope violation, stable property failure, failed review
DRIFT = 2  # fixture drift or no valid pinned digest: nobody votes
ABSTAIN = 3  # a property is frozen or was frozen in this run
CANNOT_JUDGE = 4  # bad arguments, bad config, not a repo, runner broken

# When several verdicts apply, the first reached in this order wins:
# 4 (config) -> 2 (digest) -> 4 (runner) -> 1 -> 3 -> 0.

def worst(*codes: int) -> int:
    """Combine verdicts that were all reached (no short-circuit): 4 > 2 > 1 > 3 > 0."""
    for code in (CANNOT_JUDGE, DRIFT, BLOCKED, ABSTAIN):
        if code in codes:
            return code
    return CLEAN
