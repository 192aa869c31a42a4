"""Every file ballot-guard writes is replaced whole, keeping its permissions."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ballot_guard.atomic import write_bytes, write_text


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    kept = tmp_path / "freeze_set.json"
    kept.write_text("{}\n")
    kept.chmod(0o640)
    write_text(str(kept), '{"frozen": []}\n')
    assert kept.read_text() == '{"frozen": []}\n' and kept.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o027)
    try:
        write_text(str(tmp_path / "deep" / "new.txt"), "x\n")
    finally:
        os.umask(umask)
    assert (tmp_path / "deep" / "new.txt").stat().st_mode & 0o777 == 0o640
    write_bytes(str(tmp_path / "hook"), b"#!/bin/sh\n", mode=0o755)
    assert (tmp_path / "hook").stat().st_mode & 0o777 == 0o755

def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "scorecard.json"
    target.write_text("old\n")

    with pytest.raises(TypeError):
        write_bytes(str(target), "not bytes")  # type: ignore[arg-type]
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scorecard.json"]
