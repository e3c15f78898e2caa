"""Accounts end to end (issue 27, items 1-3): a real server on SQLite and real websocket
clients protect a name, log in from another device, list and revoke devices, recover with a
one-time code; every bad input is refused with its stable code, and none says whether a name
has a password."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from tests.server.servers import Client, Server

PASSWORD = "correct horse battery"


async def protect(client: Client, password: str = PASSWORD, **fields: Any) -> dict[str, Any]:
    reply = await client.request(t="set_password", password=password, **fields)
    assert reply["t"] == "password_set", reply
    return reply


async def login(server: Server, name: str, password: str = PASSWORD,
                **fields: Any) -> tuple[Client, dict[str, Any]]:
    client = await server.client()
    reply = await client.request(t="login", name=name, password=password, **fields)
    return client, reply


async def closed_as_revoked(client: Client) -> None:
    """``client``'s socket is told ``token_revoked`` and closed with 4001."""
    await client.error("token_revoked")
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await client.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001


async def test_a_protected_name_logs_in_from_another_device(server: Server) -> None:
    ann = await server.client("ann")
    reply = await protect(ann)
    codes = reply["recovery_codes"]
    assert len(codes) == 10 and len(set(codes)) == 10 and reply["revoked"] == 0
    laptop, welcome = await login(server, "ANN", device="laptop")
    assert welcome["t"] == "welcome" and welcome["name"] == "ann"
    assert welcome["token"] != ann.token
    # both devices are the player; each token opens a session
    again = await server.client()
    assert (await again.hello(token=welcome["token"]))["name"] == "ann"
    listed = await ann.request(t="sessions")
    assert listed["t"] == "devices"
    devices = listed["devices"]
    assert [d["label"] for d in devices] == [None, "laptop"]
    assert [d["current"] for d in devices] == [True, False]
    assert all(d["address"] == "127.0.0.1" for d in devices)
    # the laptop's session can play as ann
    assert (await laptop.request(t="lobby_sub"))["t"] == "lobby"


async def test_wrong_password_and_unknown_name_say_the_same(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    await server.client("bob")  # a name without a password
    answers = []
    for name, password in (("ann", "not the password"), ("nobody", PASSWORD),
                           ("bob", PASSWORD)):
        client, reply = await login(server, name, password)
        assert reply["t"] == "error", reply
        answers.append((reply["code"], reply["message"]))
        assert (await client.request(t="lobby_sub"))["code"] == "not_authenticated"
    assert answers == [("bad_credentials", "wrong name or password")] * 3


async def test_revoking_one_device_closes_it_and_refuses_its_token(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, welcome = await login(server, "ann", device="laptop")
    devices = (await ann.request(t="sessions"))["devices"]
    laptop_id = next(d["id"] for d in devices if d["label"] == "laptop")
    reply = await ann.request(t="revoke", device=laptop_id)
    assert reply["t"] == "devices" and reply["revoked"] == 1
    assert [d["label"] for d in reply["devices"]] == [None]
    await closed_as_revoked(laptop)
    later = await server.client()
    refused = await later.request(t="hello", token=welcome["token"])
    assert refused["code"] == "token_revoked"
    # the first device is untouched; an unknown device is refused
    assert (await ann.request(t="revoke", device=laptop_id))["code"] == "no_such_device"
    assert (await ann.request(t="revoke", device=10**9))["code"] == "no_such_device"
    assert (await ann.request(t="sessions"))["devices"][0]["current"] is True


async def test_log_out_everywhere_else(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    others = [(await login(server, "ann", device=f"d{i}"))[0] for i in range(2)]
    reply = await ann.request(t="revoke", others=True)
    assert reply["revoked"] == 2 and [d["current"] for d in reply["devices"]] == [True]
    for other in others:
        await closed_as_revoked(other)


async def test_a_password_change_needs_the_current_one_and_logs_out_every_other_device(
        server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann")
    refused = await ann.request(t="set_password", password="a new password")
    assert refused["code"] == "bad_credentials"
    refused = await ann.request(t="set_password", password="a new password",
                                current="not it at all")
    assert refused["code"] == "bad_credentials"
    changed = await protect(ann, "a new password", current=PASSWORD)
    assert changed["revoked"] == 1
    await closed_as_revoked(laptop)
    assert (await login(server, "ann"))[1]["code"] == "bad_credentials"
    assert (await login(server, "ann", "a new password"))[1]["t"] == "welcome"


async def test_a_recovery_code_works_once(server: Server) -> None:
    ann = await server.client("ann")
    codes = (await protect(ann))["recovery_codes"]
    typed = codes[3].upper().replace("-", " ")  # as a person may type it
    rescuer = await server.client()
    welcome = await rescuer.request(t="recover", name="ann", recovery_code=typed,
                                    password="brand new secret", device="phone")
    assert welcome["t"] == "welcome" and welcome["name"] == "ann"
    await closed_as_revoked(ann)  # every other device is logged out
    assert (await login(server, "ann"))[1]["code"] == "bad_credentials"
    assert (await login(server, "ann", "brand new secret"))[1]["t"] == "welcome"
    for name, code in (("ann", codes[3]),  # used already
                       ("ann", "aaaa-bbbb-cccc-dddd"),  # guessed
                       ("nobody", codes[4])):  # no such player
        client = await server.client()
        refused = await client.request(t="recover", name=name, recovery_code=code,
                                       password="another new one")
        assert (refused["code"], refused["message"]) == (
            "bad_recovery_code", "no such name and recovery code")
    # the other codes still work
    client = await server.client()
    assert (await client.request(t="recover", name="ann", recovery_code=codes[4],
                                 password="another new one"))["t"] == "welcome"


async def test_password_guesses_are_limited_per_name_and_per_address(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    client = await server.client()
    codes = [(await client.request(t="login", name="ann", password=f"guess {i}"))["code"]
             for i in range(11)]
    assert codes == ["bad_credentials"] * 10 + ["too_many_attempts"]
    refused = await client.request(t="login", name="ann", password=PASSWORD)
    assert refused["code"] == "too_many_attempts" and refused["retry_in"] > 0
    recover = await client.request(t="recover", name="ann", recovery_code="x" * 16,
                                   password="whatever it is")
    assert recover["code"] == "too_many_attempts"
    # the address has used 10 of its 30 (a refused attempt takes nothing): about 20 more on
    # other names (a few more as its bucket refills meanwhile), then it is refused too
    replies = []
    while len(replies) < 40 and (not replies or replies[-1]["code"] == "bad_credentials"):
        replies.append(await client.request(t="login", name=f"other{len(replies)}",
                                            password="guess"))
    assert 20 <= len(replies) - 1 < 30, len(replies)
    assert replies[-1]["code"] == "too_many_attempts" and replies[-1]["retry_in"] > 0
    # nothing else was disturbed: ann plays on
    assert (await ann.request(t="lobby_sub"))["t"] == "lobby"


@pytest.mark.parametrize(("password", "code"), [
    ("short", "bad_password"),
    ("x" * 129, "bad_password"),
    ("tab\there inside", "bad_password"),
    ("         ", "bad_password"),
    ("Ann_the_player", "bad_password"),  # the name itself, in any case
])
async def test_a_password_against_the_rule_is_refused(server: Server, password: str,
                                                      code: str) -> None:
    ann = await server.client("ann_the_player")
    reply = await ann.request(t="set_password", password=password)
    assert reply["code"] == code, reply
    assert (await ann.request(t="sessions"))["t"] == "devices"  # the session goes on


async def test_account_requests_need_the_right_session(server: Server) -> None:
    stranger = await server.client()
    for request in ({"t": "set_password", "password": PASSWORD}, {"t": "sessions"},
                    {"t": "revoke", "others": True}):
        assert (await stranger.request(**request))["code"] == "not_authenticated"
    ann = await server.client("ann")
    await protect(ann)
    again = await ann.request(t="login", name="ann", password=PASSWORD)
    assert again["code"] == "already_authenticated"
    assert (await ann.request(t="revoke"))["code"] == "bad_message"


async def test_devices_and_passwords_survive_a_restart(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    _, welcome = await login(server, "ann", device="laptop")
    await server.stop()
    await server.start()
    again = await server.client()
    assert (await again.hello(token=welcome["token"]))["name"] == "ann"
    _, relogin = await login(server, "ann")
    assert relogin["t"] == "welcome"
