"""``qubic admin reset-password`` (issue 27) on a real SQLite database and on PostgreSQL: the
printed password logs the player in, every device is logged out, the codes are gone."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qubic_cli.main import main
from server.errors import StoreError
from server.passwords import hash_password, verify_password
from server.store.factory import open_store


async def _protected_player(database: str) -> str:
    store = await open_store(database)
    try:
        first = await store.register("Ann", 1.0)
        await store.add_device("ann", "laptop", 2.0)
        await store.set_password("ann", hash_password("the old one"), [b"code"],
                                 keep=first.device, now=3.0)
        return first.token
    finally:
        await store.close()


async def _after(database: str, token: str) -> tuple[str | None, int, str]:
    store = await open_store(database)
    try:
        found = await store.password_of("ann")
        assert found is not None
        with pytest.raises(StoreError) as refused:
            await store.open_session(token, None, 4.0)
        return found[1], await store.recovery_codes_left("ann"), refused.value.code
    finally:
        await store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "qubic.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_reset_password_prints_a_new_one_and_logs_every_device_out(
        database: str, capsys: pytest.CaptureFixture[str]) -> None:
    token = asyncio.run(_protected_player(database))
    assert main(["admin", "reset-password", "ANN", "--db", database]) == 0
    out = capsys.readouterr().out
    password = out.split("is now: ")[1].split()[0]
    assert "The password of Ann is now" in out and "0 devices" not in out
    stored, codes_left, refused = asyncio.run(_after(database, token))
    assert verify_password(password, stored) and not verify_password("the old one", stored)
    assert (codes_left, refused) == (0, "token_revoked")


def test_reset_password_of_nobody_says_so(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    database = str(tmp_path / "qubic.db")
    asyncio.run(_protected_player(database))
    assert main(["admin", "reset-password", "nobody", "--db", database, "--json"]) == 1
    assert "no player is called 'nobody'" in capsys.readouterr().out


def test_reset_password_takes_a_reason_for_the_audit_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/admin.md: every lever takes ``--reason``, reset-password too."""
    import json

    database = str(tmp_path / "qubic.db")
    asyncio.run(_protected_player(database))
    assert main(["admin", "reset-password", "ann", "--reason", "lost laptop",
                 "--db", database]) == 0
    capsys.readouterr()
    assert main(["admin", "audit", "--db", database, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [(e["action"], e["target"], e["reason"]) for e in entries] == [
        ("reset-password", "Ann", "lost laptop")]
