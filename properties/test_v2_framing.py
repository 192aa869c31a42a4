"""ballot-guard's own invariant: the v2 framing of a fixture pack is injective.

Two packs that differ in any entry (kind, path or content) get different v2 digests (a file
turned executable or into a link included), in
particular where the seed's v1 framing collides: a byte moved from a file's content to the
end of its path, or from one file to the next.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballot_guard.digest.framing import framing

Entry = tuple[bytes, bytes, bytes]

entries = st.tuples(st.sampled_from([b"f", b"x", b"l"]), st.binary(min_size=1, max_size=10),
                    st.binary(max_size=20))
packs = st.lists(entries, max_size=5, unique_by=lambda e: e[1]).map(
    lambda es: sorted(es, key=lambda e: e[1]))


def digest(pack: list[Entry], fmt: str = "v2") -> str:
    frame = framing(fmt)
    for kind, path, data in pack:
        frame.add_small(kind, path, data)
    return str(frame.digest())


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packs, packs)
def test_different_packs_have_different_digests(a: list[Entry], b: list[Entry]) -> None:
    assert (digest(a) == digest(b)) == (a == b)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packs.filter(lambda p: any(data for _, _, data in p)))
def test_a_byte_moved_from_content_to_path_changes_the_digest(pack: list[Entry]) -> None:
    i = next(i for i, (_, _, data) in enumerate(pack) if data)
    kind, path, data = pack[i]
    moved = sorted([*pack[:i], (kind, path + data[:1], data[1:]), *pack[i + 1:]],
                   key=lambda e: e[1])
    if len({e[1] for e in moved}) == len(moved):
        assert digest(moved) != digest(pack)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packs.filter(bool), st.data())
def test_an_entry_of_another_kind_changes_the_digest(pack: list[Entry],
                                                     data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(pack) - 1))
    kind, path, content = pack[i]
    other = data.draw(st.sampled_from([k for k in (b"f", b"x", b"l") if k != kind]))
    changed = [*pack[:i], (other, path, content), *pack[i + 1:]]
    assert digest(changed) != digest(pack)
