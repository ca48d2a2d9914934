"""Every fuzz target under the "ci" profile: no crash, no hang (deadline), no fail-open outcome."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from tests.fuzz.harness import FUZZ
from tests.fuzz.targets import TARGETS, Target


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_target_holds(target: Target) -> None:
    @FUZZ
    @given(target.strategy)
    def run(value: Any) -> None:
        target.check(value)

    run()
