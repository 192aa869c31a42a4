"""ballot-guard's own invariant: freeze files read and write back unchanged.

The freeze files in ``fixtures/freeze/`` are shaped like real ones (the seed's plain list,
records with owners and notes, a history that runs frozen, assigned, unfrozen); each parses
and is written back byte for byte, and any generated file survives a write and a read.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard import freeze

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "freeze"
FILES = sorted(FIXTURES.glob("*.json"))

names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
stamps = st.builds("2026-{:02d}-{:02d}T{:02d}:00:00Z".format,
                   st.integers(1, 12), st.integers(1, 28), st.integers(0, 23))
records = st.fixed_dictionaries({
    "frozen_at": stamps, "ballots": st.lists(st.sampled_from(["pass", "fail", "timeout"]),
                                             min_size=2, max_size=5),
    "digest": st.just("sha256-v2:" + "ab" * 32), "commit": st.just("c0ffee" * 6 + "beef"),
    "seed": st.integers(0, 2**32 - 1), "owner": st.none() | names,
    "note": st.none() | st.text(max_size=30)})


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_fixture_freeze_file_reads_and_writes_back_unchanged(path: Path) -> None:
    data = path.read_bytes()
    ff = freeze.parse(data, str(path))
    assert freeze.dumps(ff).encode() == data


def test_the_fixtures_hold_every_shape() -> None:
    assert len(FILES) >= 3


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(names, records, max_size=4))
def test_any_freeze_file_survives_a_write_and_a_read(recs: dict[str, dict[str, object]]) -> None:
    history = [{"event": "frozen", "name": n, "at": r["frozen_at"]} for n, r in recs.items()]
    ff = freeze.FreezeFile(tuple(recs), recs, tuple(history))
    again = freeze.parse(freeze.dumps(ff).encode(), "generated")
    assert again.frozen == ff.frozen
    assert again.records == ff.records
    assert list(again.history) == history
    assert freeze.dumps(again) == freeze.dumps(ff)
