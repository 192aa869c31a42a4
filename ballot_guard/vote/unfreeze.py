"""``unfreeze``: a frozen voter returns only after N stable passing runs.

The runs happen under the gate's conditions (pin verified first, the
project's interpreter, fresh process states, one seed).  Refused: 1 when
every run failed, 3 when the runs flipped, 4 when the runner broke; there is
no waiver and no force.  The ``unfrozen`` event records the runs, the pin
they ran against, the seed and the commit.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from ballot_guard import freeze, git
from ballot_guard.config import load_worktree
from ballot_guard.errors import CannotJudge, UsageError
from ballot_guard.exit_codes import ABSTAIN, BLOCKED, CANNOT_JUDGE, CLEAN, DRIFT
from ballot_guard.oracle import blobs
from ballot_guard.scratch import state_dir
from ballot_guard.timestamps import utc_now
from ballot_guard.vote.gate import (
    Stage,
    ballots_of,
    cast,
    check_digest,
    check_judge_links,
    discover,
    seed_or_new,
    spoiled,
    watched,
)
from ballot_guard.vote.report import print_report
from ballot_guard.vote.scorecard import Known

# Runs an unfreeze makes by default, whatever the configured repeats: a voter still
# flipping half the time passes 7 independent runs in a row only 1 time in 128.
UNFREEZE_RUNS = 7


def runs_needed(name: str, configured: int, asked: int | None) -> int:
    """``max(repeats, 7)`` by default; ``--repeats`` may ask for more, never fewer than 2,
    and never fewer than the configured repeats: scope rule 4 accepts the ``unfrozen``
    record only with at least that many passing runs."""
    if asked is None:
        return max(configured, UNFREEZE_RUNS)
    if asked < 2:
        raise UsageError("--repeats must be at least 2")
    if asked < configured:
        raise UsageError(f"--repeats {asked} is fewer than the {configured} repeats configured "
                         f"for {name}: the freeze file's `unfrozen` record must carry at least "
                         "that many passing runs (scope rule 4)")
    return asked


def unfreeze_name(root: str, name: str, *, repeats: int | None = None, seed: int | None = None,
                  environ: Mapping[str, str] | None = None) -> int:
    top = git.toplevel(root)
    config = load_worktree(top)
    path = os.path.join(top, config.freeze_file)
    if name not in freeze.load(path).frozen:
        raise CannotJudge(f"{name!r} is not frozen in {config.freeze_file}")
    voter = discover(top, config, [name], runs_needed(name, config.repeats_of(name), repeats))[0]
    known = Known(seed=seed_or_new(seed), commit=git.head(top))
    out = sys.stdout
    if not check_digest(top, config, None, known, out):
        return DRIFT
    check_judge_links(top, config)
    if known.commit is not None:  # the runs vote for this commit: they read its judge
        found = blobs.mismatches(top, top, known.commit, config)
        if found:
            raise CannotJudge(blobs.message(found, "the working tree")
                              + f"; commit the repair, then unfreeze {name}")
    assert known.seed is not None
    with watched(top, environ, out) as watch:  # before the runner starts: before project code
        with Stage(top, top, config, rev=None, seed=known.seed, jobs=1,
                   environ=environ) as stage:
            got = cast(stage, [voter], set(), watch, known)
        (ballot,), ground = ballots_of(got, [voter], set(), stage, watch)
        print_report([ballot], seed=known.seed, stream=out, environ=environ,
                     header=f"ballot-guard unfreeze {name}: python {got.info.python}; "
                            f"seed {known.seed}")
        if spoiled(ground, got.moved, watch, out):
            return CANNOT_JUDGE
    runs = ballot.runs
    if ballot.ballot == "error":
        print(f"unfreeze refused: the runner broke while running {name}", file=out)
        return CANNOT_JUDGE
    if ballot.ballot == "fail":
        print(f"unfreeze refused: {name} failed every run; it stays frozen", file=out)
        return BLOCKED
    if ballot.ballot != "pass":
        print(f"unfreeze refused: {name} still flips on identical inputs; it stays frozen",
              file=out)
        return ABSTAIN
    event = {"at": utc_now(), "runs": [r.outcome for r in runs],
             "digest": known.pinned, "seed": known.seed,
             "commit": known.commit}
    freeze.update(path, os.path.join(state_dir(top), "freeze.lock"),
                  lambda ff: freeze.unfreeze(ff, name, event))
    print(f"unfroze {name} after {len(runs)} stable passing runs; commit "
          f"{config.freeze_file} alone in a reviewed repair commit", file=out)
    return CLEAN
