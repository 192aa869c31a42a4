"""``ScopeRule`` prints as its number wherever a user sees a rule."""
from __future__ import annotations

import json

import pytest

from ballot_guard.scope.verdict import ScopeRule


@pytest.mark.parametrize("rule", list(ScopeRule), ids=lambda r: f"rule-{int(r)}")
def test_a_rule_prints_as_its_number(rule: ScopeRule) -> None:
    n = int(rule)
    assert str(rule) == f"{rule}" == "%s" % rule == "%d" % rule == str(n)  # noqa: UP031
    assert f"rule {rule}: x" == f"rule {n}: x"
    assert f"{rule:>3}|{rule:03d}" == f"{n:>3}|{n:03d}"
    assert ", ".join(map(str, [rule, rule])) == f"{n}, {n}"
    assert json.dumps({"rule": rule, "rules": [rule]}) == f'{{"rule": {n}, "rules": [{n}]}}'
    assert json.dumps(rule, indent=2) == str(n)


def test_a_rule_is_its_number() -> None:
    assert ScopeRule(3) is ScopeRule.PIN
    assert ScopeRule.PIN == 3 and sorted([ScopeRule.TAMPER, ScopeRule.MIXED]) == [1, 5]
    with pytest.raises(ValueError, match="6"):
        ScopeRule(6)
