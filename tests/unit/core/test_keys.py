"""API keys and the Bearer header (contract section 5)."""

from __future__ import annotations

import pytest

from printjob_core.errors import AccountDisabled, Unauthenticated
from printjob_core.fakes import FakeIds
from printjob_core.keys import (
    KEY_LENGTH,
    KEY_PREFIX,
    bearer_token,
    hash_key,
    key_hint,
    looks_like_key,
    same_hash,
)

from .conftest import World

KEY = KEY_PREFIX + "A" * 19 + "z" * 19


def test_key_constants():
    assert len(KEY_PREFIX) == 5 and KEY_LENGTH == 43
    assert len(KEY) == 43


def test_fake_ids_make_keys_of_the_right_shape():
    ids = FakeIds()
    keys = {ids.api_key() for _ in range(50)}
    assert len(keys) == 50
    assert all(looks_like_key(k) and len(k) == 43 for k in keys)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("   ", None),
        (f"Bearer {KEY}", KEY),
        (f"bearer {KEY}", KEY),
        (f"BEARER {KEY}", KEY),
        (f"Bearer   {KEY}", KEY),
        (f"Bearer {KEY}  ", KEY),
        ("Bearer", ""),
        ("Bearer ", ""),
        (f"Basic {KEY}", ""),
        (f"Token {KEY}", ""),
        (f"Bearer {KEY} extra", ""),
        (f"Bearer\t{KEY}", ""),
        (f" Bearer {KEY}", ""),
        (f"Bearer{KEY}", ""),
        ("Bearer ключ", ""),
    ],
)
def test_bearer_token(header: str | None, token: str | None):
    assert bearer_token(header) == token


def test_hash_and_compare():
    assert hash_key(KEY) == hash_key(KEY)
    assert len(hash_key(KEY)) == 64
    assert hash_key(KEY) != hash_key(KEY[:-1] + "y")
    assert KEY not in hash_key(KEY)
    assert same_hash(hash_key(KEY), hash_key(KEY))
    assert not same_hash(hash_key(KEY), hash_key("x"))


@pytest.mark.parametrize(
    ("candidate", "ok"),
    [
        (KEY, True),
        (KEY[:-1], False),
        (KEY + "a", False),
        ("pjk2_" + KEY[5:], False),
        (KEY[:-1] + "-", False),
        (KEY[:-1] + "é", False),
        ("", False),
        (KEY_PREFIX, False),
    ],
)
def test_looks_like_key(candidate: str, ok: bool):
    assert looks_like_key(candidate) is ok


def test_key_hint_shows_only_the_start():
    hint = key_hint(KEY)
    assert hint.startswith(KEY_PREFIX) and len(hint) < 12
    assert KEY not in hint


def test_authenticate_with_a_live_key(world: World):
    account = world.account()
    _, secret = world.operator.create_key(account.id)
    assert world.api.authenticate(f"Bearer {secret}", "192.0.2.1").id == account.id
    assert world.api.authenticate(f"bearer {secret}", "192.0.2.1").id == account.id


def test_only_the_hash_is_stored(world: World):
    account = world.account()
    key, secret = world.operator.create_key(account.id)
    assert key.key_hash == hash_key(secret)
    stored = world.store.state.keys[key.id]
    assert secret not in repr(stored)


@pytest.mark.parametrize("header", [None, "", "  "])
def test_missing_key_is_unauthenticated_without_key_sent(world: World, header):
    with pytest.raises(Unauthenticated) as info:
        world.api.authenticate(header, "192.0.2.1")
    assert info.value.key_sent is False
    assert info.value.status == 401 and info.value.code == "unauthenticated"


@pytest.mark.parametrize("header", ["Bearer", "Basic dXNlcjpwYXNz", "Bearer nope", "Bearer " + KEY])
def test_wrong_or_malformed_key_is_unauthenticated_with_key_sent(world: World, header):
    with pytest.raises(Unauthenticated) as info:
        world.api.authenticate(header, "192.0.2.1")
    assert info.value.key_sent is True


def test_revoked_key_stops_working_at_once(world: World):
    account = world.account()
    key, secret = world.operator.create_key(account.id)
    world.api.authenticate(f"Bearer {secret}", "192.0.2.1")
    world.operator.revoke_key(key.id)
    with pytest.raises(Unauthenticated):
        world.api.authenticate(f"Bearer {secret}", "192.0.2.1")


def test_other_keys_of_the_account_keep_working_after_a_revoke(world: World):
    account = world.account()
    first, first_secret = world.operator.create_key(account.id)
    _, second_secret = world.operator.create_key(account.id)
    world.operator.revoke_key(first.id)
    assert world.api.authenticate(f"Bearer {second_secret}", "192.0.2.1").id == account.id
    with pytest.raises(Unauthenticated):
        world.api.authenticate(f"Bearer {first_secret}", "192.0.2.1")


def test_disabled_accounts_key_is_403(world: World):
    account = world.account()
    _, secret = world.operator.create_key(account.id)
    world.operator.disable_account(account.id)
    with pytest.raises(AccountDisabled) as info:
        world.api.authenticate(f"Bearer {secret}", "192.0.2.1")
    assert info.value.status == 403


def test_disabled_accounts_key_does_not_count_as_wrong(world: World):
    account = world.account()
    _, secret = world.operator.create_key(account.id)
    world.operator.disable_account(account.id)
    for _ in range(40):
        with pytest.raises(AccountDisabled):
            world.api.authenticate(f"Bearer {secret}", "192.0.2.1")
