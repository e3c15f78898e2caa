"""Passwords and recovery codes, pure (issue 27): the stored form, constant-time checks, the
dummy hash when there is nothing to check against, the codes' form."""

from __future__ import annotations

import hashlib

import pytest

from server import passwords
from server.passwords import (
    SCRYPT_N,
    hash_password,
    hash_recovery_code,
    new_recovery_codes,
    password_problem,
    verify_password,
)


def test_a_password_is_stored_salted_with_its_parameters() -> None:
    one, two = hash_password("a long secret"), hash_password("a long secret")
    assert one != two  # a salt each
    kind, n, r, p, salt, key = one.split("$")
    assert (kind, int(n), int(r), int(p)) == ("scrypt", SCRYPT_N, 8, 1)
    assert "a long secret" not in one
    assert verify_password("a long secret", one) and verify_password("a long secret", two)
    assert not verify_password("a long secreT", one)


def test_no_password_stored_costs_a_hash_all_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing to check against, a dummy hash is computed (so the answer takes as long
    as a wrong password's) and the answer is no."""
    calls = []
    real = hashlib.scrypt

    def counted(*args: object, **kwargs: object) -> bytes:
        calls.append(kwargs["n"])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(passwords.hashlib, "scrypt", counted)
    assert not verify_password("anything", None)
    stored = hash_password("anything")
    assert not verify_password("something else", stored)
    assert calls == [SCRYPT_N] * 3


def test_recovery_codes() -> None:
    codes = new_recovery_codes()
    assert len(set(codes)) == 10
    assert all(len(code) == 19 and code.count("-") == 3 for code in codes)
    code = codes[0]
    assert hash_recovery_code(code) == hash_recovery_code(code.upper().replace("-", " "))
    assert hash_recovery_code(code) != hash_recovery_code(codes[1])


def test_the_password_may_not_be_the_name() -> None:
    assert password_problem("Ann_player", "ann_PLAYER") is not None
    assert password_problem("something else", "ann") is None


async def test_a_flood_of_hashes_is_refused_not_queued() -> None:
    """Past ``max_queued`` hashes waiting, a request is refused at once (``unavailable``,
    ``retry_in``) instead of holding more CPU and memory; the ones queued still finish."""
    import asyncio

    from server.errors import LimitReached
    from server.passwords import PasswordHasher

    hasher = PasswordHasher(threads=1, max_queued=2)
    try:
        queued = [asyncio.ensure_future(hasher.hash("a long secret")) for _ in range(2)]
        await asyncio.sleep(0)  # both have started waiting
        with pytest.raises(LimitReached) as refused:
            await hasher.verify("a long secret", None)
        assert (refused.value.code, refused.value.retry_in) == ("unavailable", 1.0)
        assert all(verify_password("a long secret", h) for h in await asyncio.gather(*queued))
        assert not await hasher.verify("a long secret", None)  # room again
    finally:
        hasher.close()


NFC, NFD = "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e", "cafe\u0301 cre\u0300me bru\u0302le\u0301e"


def test_a_password_is_the_same_in_any_unicode_form() -> None:
    assert NFC != NFD
    assert verify_password(NFD, hash_password(NFC)) and verify_password(NFC, hash_password(NFD))


def test_a_hash_made_before_normalising_still_opens_typed_as_it_was_set() -> None:
    salt = b"0123456789abcdef"
    key = passwords._scrypt(NFD, salt, SCRYPT_N, 8, 1)  # as hash_password made it before
    old = f"scrypt${SCRYPT_N}$8$1${passwords._b64(salt)}${passwords._b64(key)}"
    assert verify_password(NFD, old)
    assert not verify_password("cafe creme brulee", old)


@pytest.mark.parametrize("password", [
    "\u3164" * 8,  # Hangul filler
    "\u2800" * 8,  # the blank Braille pattern
    "\u200b" * 8,  # zero-width spaces
    "\u00a0\u3000" * 4,  # no-break and ideographic spaces
    "a" + "\u0301" * 20,  # one letter under accents
    "abc\u3164\u3164\u3164\u3164\u3164",
])
def test_a_password_needs_eight_characters_you_can_see(password: str) -> None:
    problem = password_problem(password, "ann")
    assert problem is not None and "you can see" in problem


def test_spaces_and_accents_are_allowed_beside_eight_visible_characters() -> None:
    assert password_problem("a b c d e f g h", "ann") is None
    assert password_problem(NFD, "ann") is None
