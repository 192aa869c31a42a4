"""The demo's steps, as data: what changes in the example repository, and
which ballot-guard command must then return which exit code.

Actions run in order: ``Say`` narrates, ``Edit`` changes a file of the
working tree, ``Git`` runs git (as the agent when ``agent``), ``Check`` runs
``ballot-guard ARGS`` and compares its exit code with ``expect``, ``Hooks``
installs the git hooks (through the pre-commit framework where it is importable,
else the plain ones), and ``Hooked`` runs a real ``git commit`` or ``git push``
with its hooks and compares the exit code the hook reported with ``expect``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ballot_guard.exit_codes import ABSTAIN, BLOCKED, CLEAN, DRIFT


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Edit:
    path: str
    old: str  # replaced at every occurrence (at least one); "" appends ``new``
    new: str
    note: str


@dataclass(frozen=True)
class Git:
    args: tuple[str, ...]
    agent: bool = False


@dataclass(frozen=True)
class Check:
    args: tuple[str, ...]
    expect: int


@dataclass(frozen=True)
class Hooks:
    """Install both hooks and a local bare remote ``origin``."""


@dataclass(frozen=True)
class Hooked:
    args: tuple[str, ...]  # git's arguments: a commit or a push, hooks and all
    expect: int  # the exit code the hook reports; 0: git goes ahead
    agent: bool = False


Action = Say | Edit | Git | Check | Hooks | Hooked


@dataclass(frozen=True)
class Step:
    title: str
    actions: tuple[Action, ...]


# Commands this build may lack: a missing one is reported and the rest of its
# step skipped, not failed.  Every command the demo uses is in the build now.
OPTIONAL_COMMANDS: frozenset[str] = frozenset()

RETRY = "properties/test_bounded_retry.py"
CLIENT = "billing/client.py"
AGENT_BRANCH = "agent/rename-retry-helper"
CAP_BRANCH = "agent/retry-cap"

# The agent's patch: rename the retry helper and, on the way, allow a fourth attempt.
RENAME = Edit(CLIENT, "_attempt_budget", "_retry_budget", "rename _attempt_budget to _retry_budget")
RAISE_CAP = Edit(CLIENT, "MAX_ATTEMPTS = 3\n", "MAX_ATTEMPTS = 4\n", "MAX_ATTEMPTS = 3 -> 4")
LOOSEN = (
    Edit(RETRY, "    assert len(calls) == min(requested, CAP)\n",
         "    assert len(calls) <= min(requested, CAP) + 1  # one more try is harmless\n",
         "loosen the cap check to `<= CAP + 1`"),
    Edit(RETRY, "    assert len(calls) == CAP\n", "    assert len(calls) <= CAP + 1\n",
         "loosen the default check to `<= CAP + 1`"),
)

# A check added by a maintainer that runs on the production wiring: the system
# clock and the breaker state file every worker shares (.billing-state/, ignored
# by git).  The flaw: its first run opens the breaker and leaves the file
# behind; the second run, on identical inputs, finds the breaker still open
# within the cooldown and fails.  Pass, then fail, every time.
REAL_CLOCK_TEST = '''

def test_a_storm_opens_the_breaker() -> None:
    """After CAP timeouts in a row the breaker opens (checked on the production wiring)."""
    calls: list[str] = []
    client = billing.connect(failing(calls, failures=1_000), api_key=KEY)
    storm(client)
    assert len(calls) == CAP
    assert client.breaker.is_open()
'''
ADD_REAL_CLOCK = (
    Edit(RETRY, "from billing.breaker import", "import billing\nfrom billing.breaker import",
         "import billing"),
    Edit(RETRY, "", REAL_CLOCK_TEST,
         "add test_a_storm_opens_the_breaker, on billing.connect(): system clock, shared file"),
)
# The repair: the same check on a fake clock with an in-memory breaker.
FAKE_CLOCK = (
    Edit(RETRY, "    client = billing.connect(failing(calls, failures=1_000), api_key=KEY)\n",
         "    client = fake_client(failing(calls, failures=1_000))\n",
         "test_a_storm_opens_the_breaker: billing.connect(...) -> fake_client(...)"),
    Edit(RETRY, "import billing\n", "", "drop `import billing`"),
)
MOVE_FIXTURE = Edit("fixtures/retry_policy.json", '"max_attempts": 3', '"max_attempts": 4',
                    "max_attempts 3 -> 4, and no re-pin")

STEPS: tuple[Step, ...] = (
    Step("A clean gate", (
        Say("Every voter runs twice on identical inputs; every run passes."),
        Check(("gate",), CLEAN),
    )),
    Step("The hooks, and a remote to push to", (
        Say("Both stages go in: pre-commit judges each commit, pre-push each push. The "
            "remote is a bare repository inside .git."),
        Hooks(),
        Git(("push", "-q", "--no-verify", "origin", "main")),
    )),
    Step("An agent patch that edits its own property", (
        Say("The agent renames the retry helper, lets it make a fourth attempt, and "
            "loosens test_bounded_retry so that it still passes. Its `git commit` runs the "
            "pre-commit stage, which refuses it."),
        Git(("switch", "-q", "-c", AGENT_BRANCH)),
        RENAME, RAISE_CAP, *LOOSEN,
        Hooked(("commit", "-a", "-m", "Rename the retry helper"), BLOCKED, agent=True),
        Say("The agent skips the hook (`--no-verify`): the commit is made, and the push and "
            "CI judge it again."),
        Git(("commit", "-q", "--no-verify", "-a", "-m", "Rename the retry helper"), agent=True),
        Check(("scope", "--commit", "HEAD"), BLOCKED),
        Say("A human takes the commit back into the index and splits it: the oracle part "
            "is committed alone, for review; the behaviour part stays staged."),
        Git(("reset", "-q", "--soft", "HEAD~1")),
        Check(("scope", "--staged", "--agent"), BLOCKED),
        Check(("split", "-m", "bounded_retry: allow a fourth attempt (from the agent patch)"),
              CLEAN),
        Check(("scope", "--commit", "HEAD"), CLEAN),
        Check(("scope", "--staged", "--agent"), CLEAN),
        Say(f"A reviewer rejects the oracle commit: the pinned cap stays 3. The branch "
            f"{AGENT_BRANCH} keeps it for you to read."),
        Git(("reset", "-q", "--hard")),
        Git(("switch", "-q", "main")),
    )),
    Step("A retry cap broken from 3 to 4 in behaviour code", (
        Say("The behaviour part alone: in scope (an agent may change behaviour), so the "
            "commit goes through, and at `git push` the pre-push stage runs the gate on the "
            "pushed tip: both runs fail, the push is refused."),
        Git(("switch", "-q", "-c", CAP_BRANCH)),
        RENAME, RAISE_CAP,
        Hooked(("commit", "-a", "-m", "Rename the retry helper"), CLEAN, agent=True),
        Check(("scope", "--commit", "HEAD"), CLEAN),
        Hooked(("push", "origin", CAP_BRANCH), BLOCKED, agent=True),
        Git(("switch", "-q", "main")),
    )),
    Step("An oracle with a real clock that flips", (
        Say("A maintainer adds a check to test_bounded_retry on the production wiring: the "
            "system clock and the breaker file every worker shares. Its first run opens the "
            "breaker and leaves the file behind; the second run finds it open."),
        *ADD_REAL_CLOCK,
        Git(("commit", "-q", "--no-verify", "-a", "-m",
             "bounded_retry: check that a retry storm opens the breaker")),
        Check(("scope", "--commit", "HEAD"), CLEAN),
        Check(("gate",), ABSTAIN),
        Check(("freeze", "assign", "bounded_retry", "--owner", "Dana Reviewer", "--note",
               "real clock and shared breaker file inside the oracle"), CLEAN),
        Check(("freeze", "list"), CLEAN),
        Git(("add", "--", "freeze_set.json")),
        Git(("commit", "-q", "--no-verify", "-m", "Freeze bounded_retry: it flips")),
    )),
    Step("A moved fixture", (
        Say("A fixture byte changes without a re-pin: nobody votes."),
        MOVE_FIXTURE,
        Check(("digest", "--check"), DRIFT),
        Check(("gate",), DRIFT),
        Git(("checkout", "-q", "--", "fixtures/retry_policy.json")),
    )),
    Step("The oracle repaired with a fake clock, then unfrozen", (
        Say("A reviewed human commit moves the check onto a fake clock with an in-memory "
            "breaker; unfreeze runs it until it passes stably, and records the runs."),
        *FAKE_CLOCK,
        Git(("commit", "-q", "--no-verify", "-a", "-m",
             "bounded_retry: check the breaker on a fake clock")),
        Check(("unfreeze", "bounded_retry"), CLEAN),
        Git(("commit", "-q", "--no-verify", "-m", "Unfreeze bounded_retry after stable runs",
             "--", "freeze_set.json")),
        Check(("scope", "--commit", "HEAD"), CLEAN),
        Check(("gate",), CLEAN),
    )),
)
