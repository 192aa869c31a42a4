"""The order of a gate's runs: repeats spread in time, so one burst of load cannot
decide every run of a voter.

Runs come in rounds (run 1 of every voter, then run 2, ...), the longest voters
first within a round (by the durations of the last scorecard; voters it does not
know, or every voter when there is none, in the voter order).  A job slot takes
the first run whose voter has nothing going (running or prepared) and did not
start the run just before; when only such a voter is left, it waits for the other
runs going to end, and when nothing else is going (a single voter, or the last
runs of the one with the most repeats) it waits about as long as that voter's last
run took (at most ``SPACING_CAP`` seconds) before starting the next one.
"""
from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

SPACING_CAP = 10.0  # seconds: the longest pause between two runs of a lone voter

Task = tuple[Hashable, str]  # (key, what groups it: the property's path)


def rounds(voters: Sequence[tuple[str, str, int]],
           durations: Mapping[str, float] | None = None) -> list[tuple[tuple[str, int], str]]:
    """Tasks ``((name, i), path)`` for ``(name, path, repeats)`` voters, interleaved."""
    known = durations or {}
    order = sorted(range(len(voters)),
                   key=lambda i: (voters[i][0] in known, -known.get(voters[i][0], 0.0), i))
    most = max((v[2] for v in voters), default=0)
    return [((voters[i][0], r), voters[i][1]) for r in range(most) for i in order
            if r < voters[i][2]]


class History(NamedTuple):
    """What the last scorecard says of each property's runs."""

    seconds: dict[str, float]  # mean seconds a run
    busy: dict[str, float]     # mean share of a run's time on a CPU (runs that say it)


def history_from(path: str) -> History:
    """The ``History`` in a scorecard; empty when it cannot be read."""
    seconds: dict[str, float] = {}
    busy: dict[str, float] = {}
    try:
        with open(path, encoding="utf-8") as f:
            card = json.load(f)
        for name, prop in card["properties"].items():
            runs = prop.get("runs", [])
            secs = [float(r["seconds"]) for r in runs]
            if secs:
                seconds[str(name)] = sum(secs) / len(secs)
            shares = [float(r["cpu"]) / float(r["seconds"]) for r in runs
                      if r.get("cpu") is not None and float(r["seconds"]) > 0]
            if shares:
                busy[str(name)] = sum(shares) / len(shares)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return History({}, {})
    return History(seconds, busy)


class Scheduler:
    """Hands tasks out to job slots in order, keeping one voter's runs apart."""

    def __init__(self, tasks: Sequence[Task], *, cap: float = SPACING_CAP) -> None:
        self.queue: list[Task] = list(tasks)
        self.cap = cap
        self.cond = threading.Condition()
        self.going: collections.Counter[str] = collections.Counter()
        self.last: str | None = None             # the group of the last task handed out
        self.took: dict[str, float] = {}         # group -> seconds its last run took
        self.ended: dict[str, float] = {}        # group -> when its last run ended
        self.stopped = False

    def _pick(self, *, repeat: bool) -> int | None:
        for i, (_, group) in enumerate(self.queue):
            if not self.going[group] and (repeat or group != self.last):
                return i
        return None

    def _hand(self, i: int) -> Task:
        task = self.queue.pop(i)
        self.going[task[1]] += 1
        self.last = task[1]
        return task

    def take(self, *, wait: bool = True) -> Task | None:
        """The next task; None when none is left (or, with ``wait=False``, none is
        ready now: nothing is prepared ahead that would sit beside its own voter)."""
        with self.cond:
            while not self.stopped and self.queue:
                i = self._pick(repeat=False)
                if i is not None:
                    return self._hand(i)
                if not wait:
                    return None
                j = self._pick(repeat=True)
                if j is None or any(self.going.values()):
                    self.cond.wait()  # another voter's run is going: let it end first
                    continue
                group = self.queue[j][1]
                pause = min(self.took.get(group, 0.0), self.cap) - \
                    (time.monotonic() - self.ended.get(group, 0.0))
                if pause > 0:
                    self.cond.wait(pause)  # a lone voter: spread its runs in time
                    continue
                return self._hand(j)
            return None

    def done(self, task: Task, seconds: float) -> None:
        with self.cond:
            group = task[1]
            self.going[group] -= 1
            self.took[group] = seconds
            self.ended[group] = time.monotonic()
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
