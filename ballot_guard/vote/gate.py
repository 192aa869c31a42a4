"""The repeat gate: config (4) -> digest (2, nobody votes) -> runner (4) -> votes -> exit.

Every voter not frozen runs ``repeats`` times, each run in a fresh process
state with identical inputs (environment, PYTHONHASHSEED, one seed for
Hypothesis and pytest-randomly, no pytest cache, no example database,
PYTEST_ADDOPTS cleared, the repository root as cwd).  A mixed result freezes
the voter; a frozen voter abstains.  The scorecard is written on every exit.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, NamedTuple

from ballot_guard import freeze, git
from ballot_guard.atomic import write_text
from ballot_guard.config import Config, ConfigError, load_worktree
from ballot_guard.digest.pin import check_pin
from ballot_guard.errors import CannotJudge, UsageError
from ballot_guard.exit_codes import CANNOT_JUDGE, DRIFT
from ballot_guard.oracle import blobs, links
from ballot_guard.oracle import watch as oracle_watch
from ballot_guard.output import emit_json
from ballot_guard.run import isolation, plugins, schedule
from ballot_guard.run.interpreter import names_hypothesis
from ballot_guard.run.protocol import Isolation
from ballot_guard.run.runner import (
    Run,
    RunnerInfo,
    Session,
    check_not_tracked,
    find_interpreter,
    run_env,
)
from ballot_guard.scratch import new_run_dir, remove_tree, state_dir
from ballot_guard.timestamps import utc_now
from ballot_guard.vote import scorecard as sc
from ballot_guard.vote import worktree
from ballot_guard.vote.ballot import Ballot, decide, exit_code
from ballot_guard.vote.ground import Watch
from ballot_guard.vote.report import Progress, print_report
from ballot_guard.vote.scorecard import Known
from ballot_guard.vote.shard import ShardSpec, assign, load_durations, record, seed_of_commit

if TYPE_CHECKING:
    from ballot_guard.digest.pin import PinCheck

SCORECARD = "scorecard.json"


@dataclass(frozen=True)
class Voter:
    name: str
    path: str      # relative to the tree root, POSIX
    repeats: int


def seed_or_new(seed: int | None) -> int:
    if seed is None:
        return int.from_bytes(os.urandom(4), "big")  # 0 <= seed < 2**32 (no secrets: its
        # import loads hmac and OpenSSL's hashes before the runner starts)
    if seed < 0:
        raise UsageError("--seed must be a non-negative integer")
    return seed


def discover(tree: str, config: Config, only: Sequence[str] = (),
             repeats: int | None = None) -> list[Voter]:
    """The voters: configured names or every ``test_*.py``; ``only`` must name some of them."""
    pdir = os.path.join(tree, config.properties_dir)
    if config.properties is not None:
        names = list(config.properties)
        for name in names:
            if not os.path.isfile(os.path.join(pdir, f"test_{name}.py")):
                raise CannotJudge(f"[tool.ballot_guard] properties: {name!r} has no file "
                                  f"{config.properties_dir}/test_{name}.py")
    else:
        try:
            files = sorted(os.listdir(pdir))
        except OSError:
            files = []
        names = [f[5:-3] for f in files
                 if f.startswith("test_") and f.endswith(".py") and len(f) > 8
                 and os.path.isfile(os.path.join(pdir, f))]
    for extra in config.repeats_for:
        if extra not in names:
            raise ConfigError(f"[tool.ballot_guard] repeats_for.{extra}: names no voter "
                              f"(voters: {', '.join(names) or 'none'})")
    for name in only:
        if name not in names:
            raise UsageError(f"unknown property {name!r} (voters: {', '.join(names) or 'none'})")
    if only:
        names = [n for n in names if n in set(only)]
    if not names:
        raise CannotJudge(f"no properties to vote: no {config.properties_dir}/test_*.py")
    return [Voter(n, f"{config.properties_dir}/test_{n}.py",
                  repeats if repeats is not None else config.repeats_of(n)) for n in names]


def check_digest(root: str, config: Config, rev: str | None, known: Known,
                 out: IO[str], tree: str | None = None, pin: PinCheck | None = None) -> bool:
    """Verify the pin; print the drift and return False when nobody may vote.

    ``tree`` (the checkout the vote runs in; default ``root``) is also searched
    for fixture links that lead out of the oracle: the pin covers a link's
    target string, not what it leads to, so with one nobody votes either.
    ``pin``: the check already made for commit ``rev`` (pre-push and ci check every
    tip's pin before its gate), not made again."""

    pc = pin if pin is not None and rev is not None else check_pin(root, config, rev=rev)
    known.digest = {"pinned": pc.pinned, "actual": pc.actual, "format": pc.format, "ok": pc.ok}
    for w in pc.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not pc.ok:
        problem = pc.problem or "fixture drift"
        print(problem if "nobody votes" in problem else f"{problem}; nobody votes", file=out)
        for line in pc.details:
            print(f"  {line}", file=out)
        return False
    escapes = links.in_fixtures(tree if tree is not None else root, config)
    if escapes:
        known.digest["ok"] = False
        print("the pin cannot cover what a fixture link leads to; nobody votes:", file=out)
        for e in escapes:
            print(f"  {links.describe(e)}", file=out)
        print(f"  next: replace each link with the file it leads to, re-pin "
              f"(`ballot-guard digest --pin`) and commit the fixtures with "
              f"{config.digest_file} in a reviewed commit", file=out)
        return False
    return True


def oracle_moved_message(moved: Sequence[str]) -> str:
    shown = ", ".join(moved[:5]) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
    return (f"the oracle changed while it voted ({shown}): a run wrote into the properties, "
            "the fixtures or the pytest config, so the runs did not see identical inputs and "
            "these ballots do not count (exit 4); nothing was recorded. Find what writes "
            "there (`git status`), restore it, and vote again")


def check_judge_links(tree: str, config: Config) -> None:
    """CannotJudge when a property or pytest config file is a link out of the oracle."""
    escapes = links.in_judge(tree, config)
    if escapes:
        raise CannotJudge(
            "; ".join(links.describe(e) for e in escapes)
            + ": a behaviour edit there would rewrite the judge; replace the link with the "
            "file in a reviewed commit")


def is_dirty(root: str) -> bool:
    res = git.run(["--no-optional-locks", "status", "--porcelain", "-z",
                   "--untracked-files=normal"], cwd=root,
                  check=False)
    return bool(res.stdout.strip(b"\0"))


class Stage:
    """The runner for one gate or unfreeze: interpreter, environment, session, scratch dir."""

    def __init__(self, top: str, tree: str, config: Config, *, rev: str | None, seed: int,
                 jobs: int, environ: Mapping[str, str] | None) -> None:
        self.top, self.tree, self.config, self.rev = top, tree, config, rev
        self.seed, self.jobs = seed, jobs
        self.environ = os.environ if environ is None else environ
        self.session: Session | None = None
        self.workdir: str | None = None
        self.owner: int | None = None  # holds the workdir while this gate lives

    def __enter__(self) -> Stage:
        return self

    def launch(self) -> None:
        """Find the interpreter and start the runners without waiting for them."""
        python = find_interpreter(self.top, self.config, environ=self.environ,
                                  run_root=self.tree)
        check_not_tracked(self.top, python, rev=self.rev,
                          run_root=self.tree if self.tree != self.top else None)
        sdir = state_dir(self.top)
        env = run_env(git.scrubbed_env(self.environ), seed=self.seed)
        self.workdir, self.owner = new_run_dir(sdir)
        sandbox = isolation.policy(self.config, top=self.top, tree=self.tree,
                                   workdir=self.workdir)
        self.session = Session(python, cwd=self.tree, env=env, workdir=self.workdir,
                               seed=self.seed, timeout=self.config.timeout, jobs=self.jobs,
                               top=self.top, sandbox=sandbox)
        self.session.launch()
        self.session.load(names_hypothesis(self.tree),  # while the runner imports pytest
                          self.config.properties_dir)

    def start(self) -> RunnerInfo:
        """The runner is ready: CannotJudge when it cannot run pytest."""
        if self.session is None:
            self.launch()
        assert self.session is not None
        info = self.session.start()
        isolation.check(self.config, self.session.isolation)
        return info

    @property
    def isolation(self) -> Isolation | None:
        """The isolation in force for the runs (once started)."""
        return None if self.session is None else self.session.isolation

    def run_all(self, voters: Sequence[Voter],
                on_run: Callable[[str, Run], None] = lambda n, r: None,
                history: schedule.History | None = None) -> dict[str, list[Run]]:
        """Run every voter ``repeats`` times, the repeats interleaved (``schedule``):
        run 1 of every voter, then run 2, ..., the longest (by ``history``) first."""
        assert self.session is not None
        seen = history or schedule.History({}, {})
        tasks = schedule.rounds([(v.name, v.path, v.repeats) for v in voters], seen.seconds)
        busy = {v.path: seen.busy[v.name] for v in voters if v.name in seen.busy}
        results = self.session.run_all(tasks, lambda key, run: on_run(key[0], run),  # type: ignore[index]
                                       busy)
        return {v.name: [results[(v.name, i)] for i in range(v.repeats)] for v in voters}

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            self.session.close()
        if self.workdir is not None:
            remove_tree(self.workdir)
        if self.owner is not None:
            os.close(self.owner)
            self.owner = None


@contextlib.contextmanager
def _tree(top: str, rev: str | None, environ: Mapping[str, str] | None) -> Iterator[str]:
    if rev is None:
        yield top
    else:
        with worktree.checkout(top, rev, environ=environ) as path:
            yield path


def record_freezes(top: str, config: Config, new: Sequence[Ballot], known: Known,
                   rev_file: str | None, out: IO[str]) -> None:
    """Add newly frozen names (and, for --rev, REV's records) to the working tree's file."""
    path = os.path.join(top, config.freeze_file)
    theirs = freeze.load(rev_file) if rev_file is not None else None
    at = utc_now()
    pinned = known.pinned

    def change(ff: freeze.FreezeFile) -> freeze.FreezeFile:
        if theirs is not None:
            ff = freeze.merge(ff, theirs)
        for b in new:
            ff = freeze.add_frozen(ff, b.name, {
                "ballots": [r.outcome for r in b.runs], "digest": pinned,
                "commit": known.commit, "seed": known.seed}, at)
        return ff

    before = freeze.load(path)
    after = freeze.update(path, os.path.join(state_dir(top), "freeze.lock"), change)
    if after != before or new:
        names = ", ".join(b.name for b in new)
        what = f"froze {names}" if new else "merged freeze records"
        print(f"{what}: recorded in {config.freeze_file}; commit that file alone "
              f"(git add {config.freeze_file} && git commit -m 'Freeze ...' -- "
              f"{config.freeze_file})", file=out)


class GateResult(NamedTuple):
    """What one gate decided: its exit code and its scorecard (as written to disk)."""
    code: int
    card: sc.Scorecard


def run_gate(root: str, *, rev: str | None = None, repeats: int | None = None,
             properties: Sequence[str] = (), jobs: int = 1, seed: int | None = None,
             scorecard: str | None = None, junit_xml: str | None = None, as_json: bool = False,
             environ: Mapping[str, str] | None = None, shard: ShardSpec | None = None,
             durations: str | None = None, pin: PinCheck | None = None) -> GateResult:
    """The whole ``gate`` command; prints the report and returns its result.

    With ``shard`` only that shard's voters run, and no freeze is recorded:
    ``gate --merge`` of every shard's scorecard is the one writer of the verdict.
    ``pin``: the pin check already made for ``rev`` (see ``check_digest``)."""
    out = sys.stderr if as_json else sys.stdout
    known = Known()
    top: str | None = None
    code = CANNOT_JUDGE
    try:
        if repeats is not None and repeats < 2:
            raise UsageError("--repeats must be at least 2")
        if jobs < 1:
            raise UsageError("--jobs must be at least 1")
        if durations is not None and shard is None:
            raise UsageError("--durations goes with --shard K/N")
        top = git.toplevel(root)
        sha = git.resolve(top, rev) if rev is not None else git.head(top)
        known.seed = seed_or_new(seed) if shard is None or seed is not None \
            else seed_of_commit(sha)
        known.commit = sha
        with _tree(top, sha if rev is not None else None, environ) as tree:
            history = schedule.history_from(
                scorecard or os.path.join(state_dir(top), SCORECARD))
            code = _vote(top, tree, rev and sha, known, repeats=repeats, properties=properties,
                         jobs=jobs, environ=environ, out=out, shard=shard, durations=durations,
                         history=history, pin=pin)
    except CannotJudge as exc:
        known.error = str(exc)
        if top is not None:
            _write(top, sc.build(known, CANNOT_JUDGE), scorecard, junit_xml, as_json)
        raise
    card = sc.build(known, code)
    _write(top, card, scorecard, junit_xml, as_json)
    return GateResult(code, card)


def _write(top: str, card: sc.Scorecard, scorecard: str | None, junit_xml: str | None,
           as_json: bool) -> None:

    path = scorecard or os.path.join(state_dir(top), SCORECARD)
    sc.write(path, card)
    if junit_xml:
        write_text(junit_xml, sc.junit(card), errors="replace")
    if as_json:
        emit_json(card)


@contextlib.contextmanager
def watched(top: str, environ: Mapping[str, str] | None,
            out: IO[str]) -> Iterator[Watch]:
    """The repository's git directory watched from before any project code runs (the
    runner starts inside) to after the last run; a change not yet told is printed (and
    put back) when the vote ends, however it ends."""
    watch = Watch(top, environ)
    try:
        yield watch
    finally:
        problem = watch.finish()
        if problem is not None and not watch.told:
            print(problem, file=out)
            watch.told = True


def _vote(top: str, tree: str, rev: str | None, known: Known, *, repeats: int | None,
          properties: Sequence[str], jobs: int, environ: Mapping[str, str] | None,
          out: IO[str], shard: ShardSpec | None = None, durations: str | None = None,
          history: schedule.History | None = None, pin: PinCheck | None = None) -> int:
    """The vote, its git directory watched: a change there is put back and 4."""
    with watched(top, environ, out) as watch:
        code = _cast(top, tree, rev, known, watch, repeats=repeats, properties=properties,
                     jobs=jobs, environ=environ, out=out, shard=shard, durations=durations,
                     history=history, pin=pin)
    return CANNOT_JUDGE if watch.finish() is not None else code


class Cast(NamedTuple):
    """The runs of one vote, before they are judged."""
    info: RunnerInfo
    runs: dict[str, list[Run]]
    moved: list[str]  # oracle files that changed while it voted


def cast(stage: Stage, voters: Sequence[Voter], frozen: set[str], watch: Watch,
         known: Known, history: schedule.History | None = None) -> Cast:
    """The vote core, shared by gate and unfreeze: start the runner (its isolation is
    recorded even when it refuses), run every voter not frozen ``repeats`` times with
    the git directory checked after each run, and see whether the oracle moved."""
    try:
        info = stage.start()
    finally:
        known.isolation = stage.isolation
    known.python, known.pytest = info.python, info.pytest
    active = [v for v in voters if v.name not in frozen]
    progress = Progress(sum(v.repeats for v in active))
    before = oracle_watch.signature(stage.tree, stage.config)

    def ran(name: str, run: Run) -> None:
        watch.after_run(run)
        progress.step(name, run.outcome)

    try:
        runs = stage.run_all(active, ran, history)
    finally:
        progress.close()
    return Cast(info, runs, oracle_watch.changed(before, oracle_watch.signature(stage.tree,
                                                                                 stage.config)))


def ballots_of(got: Cast, voters: Sequence[Voter], frozen: set[str], stage: Stage,
               watch: Watch) -> tuple[list[Ballot], str | None]:
    """Each voter's ballot once the runner has closed, and what changed in the git
    directory (put back), if anything: runs after which it moved, or that loaded
    behaviour code as a plugin, are ``error`` runs."""
    ground = watch.finish()
    roots = tuple(dict.fromkeys((stage.tree, stage.top)))
    runs = plugins.judge_runs(ground_errors(got.runs, watch), roots, stage.config,
                                  stage.tree)
    return [Ballot(v.name, "frozen", v.repeats) if v.name in frozen
            else Ballot(v.name, decide(runs[v.name]), v.repeats, tuple(runs[v.name]))
            for v in voters], ground


def spoiled(ground: str | None, moved: Sequence[str], watch: Watch,
            out: IO[str]) -> bool:
    """Print why the ballots do not count, if they do not (the git directory or the
    oracle changed while they were cast): then the exit is 4 and nothing is recorded."""
    if ground is not None:
        print(ground, file=out)
        watch.told = True
        return True
    if moved:
        print(oracle_moved_message(moved), file=out)
        return True
    return False


def ground_errors(runs: Mapping[str, list[Run]],
                  watch: Watch) -> dict[str, list[Run]]:
    """Runs after which the git directory had moved become ``error`` runs naming it."""
    return {name: [dataclasses.replace(
        r, outcome="error", detail="the repository's git directory changed during this run: "
        + ", ".join(watch.flagged[id(r)][:4])) if id(r) in watch.flagged else r for r in rs]
        for name, rs in runs.items()}


def _cast(top: str, tree: str, rev: str | None, known: Known, watch: Watch, *,
          repeats: int | None, properties: Sequence[str], jobs: int,
          environ: Mapping[str, str] | None, out: IO[str], shard: ShardSpec | None,
          durations: str | None, history: schedule.History | None,
          pin: PinCheck | None) -> int:

    config = load_worktree(tree)
    assert known.seed is not None
    with Stage(top, tree, config, rev=rev, seed=known.seed, jobs=jobs,
               environ=environ) as stage:
        runner_problem: CannotJudge | None = None
        try:  # the runners start while the voters are found and the pin is checked;
            stage.launch()  # nothing runs before all of it
        except CannotJudge as exc:
            runner_problem = exc
        voters = discover(tree, config, properties, repeats)
        if shard is not None:
            names = [v.name for v in voters]
            weights = load_durations(durations, names) if durations is not None else \
                {v.name: float(v.repeats) for v in voters}
            plan = assign(names, shard.n, weights)
            known.shard = record(shard, names, plan, config)
            mine = set(plan[shard.k - 1])
            voters = [v for v in voters if v.name in mine]
        known.dirty = rev is None and is_dirty(top)
        if not check_digest(top, config, rev, known, out, tree, pin):
            return DRIFT
        if runner_problem is not None:
            raise runner_problem
        check_judge_links(tree, config)
        if rev is not None:  # the checkout is the commit's: its judge too, byte for byte
            found = blobs.mismatches(tree, top, rev, config)
            if found:
                raise CannotJudge(blobs.message(found, f"the checkout of {rev[:12]}"))
        else:  # the working tree, as it is; but not as a filter driver rewrote it
            found = blobs.filtered(tree, config)
            if found:
                raise CannotJudge(blobs.filtered_message(found))
        freeze_path = os.path.join(tree, config.freeze_file)
        frozen = set(freeze.load(freeze_path).frozen)
        got = cast(stage, voters, frozen, watch, known, history)
    ballots, ground = ballots_of(got, voters, frozen, stage, watch)
    info = got.info
    known.ballots = {b.name: b for b in ballots}
    where = f"rev {rev[:12]}" if rev else \
        f"working tree at {known.commit[:12] if known.commit else '(no commit)'}" + \
        (" (dirty)" if known.dirty else "")
    extras = f", hypothesis {info.hypothesis}" if info.hypothesis else ""
    header = (f"ballot-guard gate: {where}; python {info.python} (pytest {info.pytest}{extras}); "
              f"seed {known.seed}; {isolation.describe(known.isolation)}")
    if shard is not None and known.shard is not None:
        header += (f"; shard {shard}: {len(voters)} of {len(known.shard['all_voters'])} "
                   "voters")
    print_report(ballots, seed=known.seed, header=header, stream=out, environ=environ)
    if spoiled(ground, got.moved, watch, out):
        return CANNOT_JUDGE
    new = [b for b in ballots if b.ballot == "freeze"]
    if shard is not None:
        if new:
            print(f"shard {shard}: {', '.join(b.name for b in new)} flipped; the freeze is "
                  "recorded by `ballot-guard gate --merge` of every shard's scorecard", file=out)
    elif new or rev is not None:
        record_freezes(top, config, new, known, freeze_path if rev is not None else None, out)
    return exit_code(ballots)
