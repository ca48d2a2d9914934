"""Who calls (app/core/principals.py): the role order, the actor recorded for a token holder's acts, the digest."""

from __future__ import annotations

import hashlib

from app.core.principals import ROLES, Principal, digest


def test_each_role_may_do_what_the_ones_before_it_may() -> None:
    for i, role in enumerate(ROLES):
        who = Principal("ci", role)
        assert [who.may(other) for other in ROLES] == [j <= i for j in range(len(ROLES))]


def test_a_token_holder_acts_as_token_name() -> None:
    assert Principal("ci", "vetter").actor == "token:ci"


def test_the_digest_is_the_secrets_sha256() -> None:
    assert digest("hfv_x") == hashlib.sha256(b"hfv_x").hexdigest()
