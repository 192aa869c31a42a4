"""git's raw diff records are read the same by the bulk reading and the record-by-record one."""
from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from ballot_guard.change.from_git import FileChange, _parse_raw_slow, parse_raw

_MODE = st.sampled_from(["000000", "100644", "100755", "120000", "160000"])
_STATUS = st.sampled_from("AMDTUX")
_PATH = st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b)
_SHA = st.sampled_from(["0" * 40, "a" * 40, "b" * 64])


def _record(old: str, new: str, sha: str, status: str, path: bytes) -> bytes:
    return f":{old} {new} {sha} {sha} {status}".encode() + b"\0" + path + b"\0"


@given(st.lists(st.tuples(_MODE, _MODE, _SHA, _STATUS, _PATH), max_size=8))
def test_bulk_and_record_readings_agree(records: list[tuple[str, str, str, str, bytes]]) -> None:
    data = b"".join(_record(*r) for r in records)
    parts = data.split(b"\0")[:-1]
    slow = _parse_raw_slow(parts, "utf-8", "surrogateescape")
    assert parse_raw(data) == slow
    assert [f.path for f in slow] == [os.fsdecode(r[4]) for r in records]
    assert all(type(f) is FileChange for f in parse_raw(data))


def test_scored_and_odd_records_are_read_one_by_one() -> None:
    renamed = b":100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" R100\0old\0new\0"
    assert parse_raw(renamed) == (FileChange("R", "new", "old", "100644", "100644"),)
    assert parse_raw(b"") == ()
