"""Passwords and recovery codes: how each is hashed, checked and made.

A password is hashed with scrypt (salted, in its NFC form, in a ``PasswordHasher``'s threads,
never on the event loop) and checked in constant time, against a dummy hash when there is
none; a recovery code is 80 random bits stored as a SHA-256. docs/security.md, "Passwords" and
"Recovery codes", says what each rule protects against."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from server.errors import LimitReached

SCRYPT_N = 2**14  # CPU/memory cost
SCRYPT_R = 8  # block size
SCRYPT_P = 1  # parallelism
SCRYPT_MEMORY = 128 * SCRYPT_R * SCRYPT_N  # bytes one hash takes: 16 MiB
SALT_BYTES = 16
KEY_BYTES = 32
RECOVERY_CODES = 10  # given when a password is set
MIN_VISIBLE = 8  # characters of a new password that show (see the module docstring)
_UNSEEN_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Cn", "Mn", "Me"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")  # show nothing
_CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i to misread
_CODE_LENGTH = 16  # 16 letters of 31: 79 random bits, shown as four groups of four

T = TypeVar("T")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=KEY_BYTES,
                          maxmem=2 * 128 * r * n)


def normalised(password: str) -> str:
    """``password`` as it is hashed: its NFC form."""
    return unicodedata.normalize("NFC", password)


def hash_password(password: str) -> str:
    """``password`` as it is stored: scrypt of its NFC form with a fresh salt, parameters
    included."""
    salt = secrets.token_bytes(SALT_BYTES)
    key = _scrypt(normalised(password), salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(key)}"


_DUMMY = hash_password(secrets.token_urlsafe(16))  # checked against when there is no hash


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` is the one ``stored`` was made from; with nothing stored, a dummy
    hash is checked instead (as slow) and the answer is False."""
    kind, n, r, p, salt, key = (stored or _DUMMY).split("$")
    if kind != "scrypt":
        raise ValueError(f"unknown password hash {kind!r}")
    matched = False
    # its NFC form, and as typed when that differs (a hash made before normalising): how many
    # hashes are computed depends on the text typed only, never on the account
    for form in dict.fromkeys((normalised(password), password)):
        found = _scrypt(form, _unb64(salt), int(n), int(r), int(p))
        matched |= hmac.compare_digest(found, _unb64(key))
    return matched and stored is not None


def new_recovery_codes(count: int = RECOVERY_CODES) -> list[str]:
    """``count`` fresh codes, each written ``abcd-efgh-jkmn-pqrs``."""
    codes = []
    for _ in range(count):
        letters = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
        codes.append("-".join(letters[i:i + 4] for i in range(0, _CODE_LENGTH, 4)))
    return codes


def hash_recovery_code(code: str) -> bytes:
    """The stored form of a recovery code, as typed in any case, with or without its dashes
    and spaces."""
    letters = "".join(code.split()).replace("-", "").lower()
    return hashlib.sha256(letters.encode()).digest()


def visible_characters(password: str) -> int:
    """How many characters of ``password`` (in NFC) show when written."""
    return sum(1 for c in normalised(password)
               if unicodedata.category(c) not in _UNSEEN_CATEGORIES and c not in _BLANK_LETTERS)


def password_problem(password: str, name: str) -> str | None:
    """What is wrong with ``password`` for the player ``name`` beyond the protocol's rule
    (8 to 128 characters, no control characters), or None."""
    if normalised(password).casefold() == name.casefold():
        return "the password may not be your name"
    if visible_characters(password) < MIN_VISIBLE:
        return (f"a password needs at least {MIN_VISIBLE} characters you can see (spaces, "
                "accents alone and invisible characters do not count)")
    return None


class PasswordHasher:
    """Hashes and checks passwords on ``threads`` threads of its own, at most ``max_queued``
    waiting: past that a request is refused at once (``unavailable`` with ``retry_in``)
    instead of queueing CPU and memory for a flood."""

    def __init__(self, threads: int = 2, max_queued: int = 64) -> None:
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="password-hash")
        self.max_queued = max_queued
        self.pending = 0  # hashes asked for and not done

    async def hash(self, password: str) -> str:
        return await self._run(hash_password, password)

    async def verify(self, password: str, stored: str | None) -> bool:
        return await self._run(verify_password, password, stored)

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        if self.pending >= self.max_queued:
            raise LimitReached("the server is checking too many passwords just now",
                               "unavailable", 1.0)
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, function, *args)
        finally:
            self.pending -= 1

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
