"""A lever reaches everything, and a revoked or banned credential grants nothing (issue 36,
items 2-4): a real server on SQLite, real websocket clients, real HTTP requests.

- ``qubic admin reset-password`` closes every open socket of the player;
- an account request from a session whose device was logged out, or whose player was banned,
  in the window before the lever's control action closes it, is refused and closes it;
- every HTTP route that takes a bearer token (enumerated from the app's router, so a new route
  cannot escape) refuses a revoked token (401 ``token_revoked``) and a banned one (403
  ``banned``), and a route that takes none answers as it does with no token at all;
- a banned player's ``login`` says ``banned`` whatever the password, and ``recover`` is
  refused before the code is spent or anything is changed.
"""

from __future__ import annotations

import re
import time
from typing import Any

import aiohttp
import pytest
from websockets.exceptions import ConnectionClosed

from server.store.lever_records import add_sanction
from tests.server.node.test_accounts_e2e import PASSWORD, closed_as_revoked, login, protect
from tests.server.node.test_levers import admin, closed_with
from tests.server.servers import Client, Server


@pytest.fixture
async def server(tmp_path: Any) -> Any:
    # the HTTP routes' rates out of the way: the route walk asks each several times
    s = Server(tmp_path / "qubic.db", puzzles_rate=1000.0, player_games_rate=1000.0,
               solve_rate=1000.0)
    await s.start()
    yield s
    await s.stop()


async def device_of(client: Client) -> int:
    devices = (await client.request(t="sessions"))["devices"]
    return int(next(d["id"] for d in devices if d["current"]))


async def ban_quietly(server: Server, name: str, reason: str = "cheating") -> None:
    """A ban in the database whose control action has not reached the server yet (the window
    between the lever's commit and the poll that closes the sockets)."""
    assert server.running is not None
    await server.running.store.apply(add_sanction(
        "ban", name=name, reason=reason, now=time.time(), expires=None, by="test"))


async def test_reset_password_closes_every_open_socket_of_the_player(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann", device="laptop")
    bob = await server.client("bob")
    code, out = await admin(server, "reset-password", "ann")
    assert code == 0 and out["devices_logged_out"] == 2
    await closed_as_revoked(ann)
    await closed_as_revoked(laptop)
    assert (await bob.request(t="ping"))["t"] == "pong"  # nobody else is disturbed
    _, log = await admin(server, "audit")
    assert [(e["action"], e["target"]) for e in log] == [("reset-password", "ann")]
    assert (await login(server, "ann", out["password"]))[1]["t"] == "welcome"


async def test_a_logged_out_session_can_neither_list_nor_revoke_and_is_closed(
        server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann", device="laptop")
    assert server.running is not None
    # the laptop is logged out in the database; the lever has not closed its socket yet
    revoked = await server.running.store.revoke("ann", [await device_of(laptop)], keep=None,
                                                now=time.time())
    assert len(revoked) == 1
    refused = await laptop.request(t="revoke", others=True)
    assert refused["code"] == "token_revoked"
    with pytest.raises(ConnectionClosed):
        while True:
            await laptop.recv(10)
    assert laptop.ws.close_code == 4001
    # the owner was not logged out, and nothing the laptop sent was done
    listed = await ann.request(t="sessions")
    assert [d["current"] for d in listed["devices"]] == [True]


@pytest.mark.parametrize("request_", [{"t": "sessions"}, {"t": "revoke", "others": True},
                                      {"t": "set_password", "password": "another secret",
                                       "current": PASSWORD}])
async def test_each_account_request_checks_the_sessions_own_device(
        server: Server, request_: dict[str, Any]) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann", device="laptop")
    assert server.running is not None
    await server.running.store.revoke("ann", [await device_of(laptop)], keep=None,
                                      now=time.time())
    refused = await laptop.request(**request_)
    assert refused["code"] == "token_revoked" and "devices" not in refused
    with pytest.raises(ConnectionClosed):
        while True:
            await laptop.recv(10)
    assert len((await ann.request(t="sessions"))["devices"]) == 1
    assert (await login(server, "ann"))[1]["t"] == "welcome"  # the password is unchanged


async def test_a_banned_session_can_make_no_account_request(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann", device="laptop")
    await ban_quietly(server, "ann", "cheating")
    refused = await laptop.request(t="revoke", others=True)
    assert refused["code"] == "banned" and "cheating" in refused["message"]
    with pytest.raises(ConnectionClosed):
        while True:
            await laptop.recv(10)
    assert laptop.ws.close_code == 1008
    assert server.running is not None
    assert len(await server.running.store.devices("ann")) == 2  # nobody was logged out


async def test_two_devices_cannot_log_each_other_out(server: Server) -> None:
    """The check is in the revoke's own transaction: the second one finds itself out."""
    ann = await server.client("ann")
    await protect(ann)
    laptop, _ = await login(server, "ann", device="laptop")
    assert server.running is not None
    store = server.running.store
    phone, lap = await device_of(ann), await device_of(laptop)
    assert await store.revoke("ann", None, keep=phone, now=time.time()) == [lap]
    with pytest.raises(Exception) as refused:
        await store.revoke("ann", None, keep=lap, now=time.time())
    assert getattr(refused.value, "code", None) == "token_revoked"
    assert [d.id for d in await store.devices("ann")] == [phone]


# -- every HTTP route that takes a token -------------------------------------------------------


def route_urls(server: Server) -> list[tuple[str, str]]:
    """(method, path) of every route of the running app, its parameters filled in."""
    assert server.running is not None
    found = []
    for route in server.running.runner.app.router.routes():
        if route.method in ("HEAD", "OPTIONS", "*"):
            continue
        info = route.resource.get_info() if route.resource is not None else {}
        if "prefix" in info:  # static files
            found.append((route.method, f"{info['prefix']}/nothing-here.js"))
        elif "formatter" in info:
            path = info["formatter"]
            for candidate in ("1", "ann", "yes"):  # (yes: a draw answer's {accept})
                filled = re.sub(r"\{[^}]+\}", candidate, path)
                if info["pattern"].fullmatch(filled):
                    path = filled
                    break
            assert "{" not in path, info
            found.append((route.method, path))
        else:
            found.append((route.method, info["path"]))
    return found


async def answer(http: aiohttp.ClientSession, base: str, method: str, path: str,
                 token: str | None) -> tuple[int, str | None]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with http.request(method, base + path, headers=headers, json={}) as reply:
        code = None
        if reply.content_type == "application/json":
            body = await reply.json()
            code = body.get("code") if isinstance(body, dict) else None
        return reply.status, code


async def test_every_route_that_takes_a_token_refuses_a_revoked_or_banned_one(
        server: Server) -> None:
    ann = await server.client("ann")  # an admin: every route would grant her something
    assert (await admin(server, "grant", "ann", "admin"))[0] == 0
    await protect(ann)
    laptop, welcome = await login(server, "ann", device="laptop")
    revoked_token = welcome["token"]
    assert (await ann.request(t="revoke", device=await device_of(laptop)))["revoked"] == 1
    bob = await server.client("bob")
    assert (await admin(server, "grant", "bob", "admin"))[0] == 0
    assert (await admin(server, "ban", "bob", "--reason", "abuse"))[0] == 0
    await closed_with(bob, "banned")
    assert server.running is not None
    base = server.running.http_url
    taking = []
    async with aiohttp.ClientSession() as http:
        for method, path in route_urls(server):
            anonymous = await answer(http, base, method, path, None)
            nobody = await answer(http, base, method, path, "nobody-has-this-token")
            revoked = await answer(http, base, method, path, revoked_token)
            banned = await answer(http, base, method, path, bob.token)
            if nobody == (401, "bad_token"):  # the route reads tokens
                taking.append(path)
                assert revoked == (401, "token_revoked"), (method, path, revoked)
                assert banned == (403, "banned"), (method, path, banned)
                valid = await answer(http, base, method, path, ann.token)
                assert valid[0] not in (401, 403), (method, path, valid)
            else:  # it reads none: a token changes nothing
                assert nobody[0] == revoked[0] == banned[0] == anonymous[0], (method, path)
    assert {"/api/puzzles/next", "/api/puzzles/history", "/api/puzzles/daily",
            "/api/puzzles/streak", "/api/puzzles/1/attempt", "/api/admin/audit"} <= set(taking)


async def test_a_player_no_longer_admin_is_refused_the_admin_api(server: Server) -> None:
    ann = await server.client("ann")
    await admin(server, "grant", "ann", "admin")
    assert server.running is not None
    url = f"{server.running.http_url}/api/admin/audit"
    async with aiohttp.ClientSession() as http:
        assert (await answer(http, url, "GET", "", ann.token))[0] == 200
        await admin(server, "revoke-role", "ann", "admin")
        assert await answer(http, url, "GET", "", ann.token) == (403, "not_admin")


# -- a banned account is no oracle and does not change ----------------------------------------


async def test_a_banned_login_says_banned_whatever_the_password(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann)
    await admin(server, "ban", "ann", "--reason", "cheating")
    await closed_with(ann, "banned")
    answers = []
    for password in (PASSWORD, "not the password"):
        _, reply = await login(server, "ann", password)
        answers.append((reply["t"], reply.get("code"), reply.get("message")))
    assert answers[0] == answers[1] and answers[0][1] == "banned", answers


async def test_a_banned_recover_spends_nothing_and_changes_nothing(server: Server) -> None:
    ann = await server.client("ann")
    codes = (await protect(ann))["recovery_codes"]
    await admin(server, "ban", "ann", "--reason", "cheating")
    await closed_with(ann, "banned")
    assert server.running is not None
    before = await server.running.store.devices("ann")
    for code in (codes[0], "aaaa-bbbb-cccc-dddd"):
        client = await server.client()
        refused = await client.request(t="recover", name="ann", recovery_code=code,
                                       password="a new one for me")
        assert refused["code"] == "banned", refused
    assert await server.running.store.devices("ann") == before
    assert await server.running.store.recovery_codes_left("ann") == 10
    await admin(server, "unban", "ann")
    assert (await login(server, "ann"))[1]["t"] == "welcome"  # the password is unchanged
    client = await server.client()
    back = await client.request(t="recover", name="ann", recovery_code=codes[0],
                                password="a new one for me")
    assert back["t"] == "welcome"  # the code was not spent


# -- passwords as Unicode text -----------------------------------------------------------------


async def test_a_password_set_in_nfc_opens_typed_in_nfd(server: Server) -> None:
    ann = await server.client("ann")
    await protect(ann, "caf\u00e9 cr\u00e8me")
    _, welcome = await login(server, "ann", "cafe\u0301 cre\u0300me")
    assert welcome["t"] == "welcome", welcome


async def test_a_password_of_invisible_characters_is_refused(server: Server) -> None:
    ann = await server.client("ann")
    refused = await ann.request(t="set_password", password="\u3164" * 8)
    assert refused["code"] == "bad_password", refused
    assert (await ann.request(t="sessions"))["t"] == "devices"  # the session goes on
