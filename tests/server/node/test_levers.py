"""The host's levers (issue 27, items 6-9) end to end on one server (SQLite): ``qubic admin``
run on the database while the server runs, moderators' requests from real websocket clients,
reports, the audit log and ``/api/admin/audit``. Each lever reaches the running server through
the control channel without a restart; refusals carry stable codes and disturb nothing else."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from qubic_cli.main import main
from tests.eventually import eventually
from tests.server.servers import Client, Server, play, start_private_game


async def admin(server: Server, *argv: str) -> tuple[int, Any]:
    """Run ``qubic admin ARGV --db <the server's file> --json``; its exit code and output."""
    out, err = io.StringIO(), io.StringIO()

    def run() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return main(["admin", *argv, "--db", str(server.path), "--json"])

    code = await asyncio.to_thread(run)
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else err.getvalue()


async def closed_with(client: Client, code: str) -> dict[str, Any]:
    """The ``error`` that ``client`` is told before its connection closes (1008)."""
    told = await client.error(code)
    with pytest.raises(ConnectionClosed):
        while True:
            await client.recv(10)
    assert client.ws.close_code == 1008
    return told


async def connected_moderator(server: Server, name: str = "marta") -> Client:
    first = await server.client(name)
    assert (await admin(server, "grant", name, "moderator"))[0] == 0
    again = await server.client()
    welcome = await again.hello(token=first.token)
    assert welcome["roles"] == ["moderator"]
    return again


def fetch(url: str, token: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


async def get(url: str, token: str | None = None) -> tuple[int, Any]:
    """``fetch`` off the event loop, which serves the request."""
    return await asyncio.to_thread(fetch, url, token)


async def test_a_ban_by_name_closes_the_players_sockets_and_refuses_them_from_anywhere(
    server: Server,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    code, out = await admin(server, "ban", "bob", "--for", "2h", "--reason", "spam in chat")
    assert code == 0 and out["banned"]["name"] == "bob" and out["banned"]["expires"]
    told = await closed_with(bob, "banned")
    assert "spam in chat" in told["message"]
    again = await server.client()  # the token, from a new connection (any address)
    refused = await again.request(t="hello", token=bob.token)
    assert refused["t"] == "error" and refused["code"] == "banned"
    assert "spam in chat" in refused["message"]
    assert (await again.request(t="ping"))["t"] == "pong"  # the connection itself stays
    assert (await ann.request(t="ping"))["t"] == "pong"  # nobody else is disturbed
    assert (await admin(server, "unban", "bob"))[1]["bans lifted"] == 1
    back = await server.client()
    assert (await back.hello(token=bob.token))["name"] == "bob"


async def test_a_ban_read_after_its_unban_spares_the_connections_opened_since(
    server: Server,
) -> None:
    """A node reads the control table four times a second (a cluster's others too): a ban
    the host lifted at once may be read after its unban, when the player is back. It closes
    nothing then (the simulation saw the admin's new socket closed ``banned``); a ban in
    force closes as ever."""
    from server.node.control_actions import Disconnect

    bob = await server.client("bob")
    control = server.running.hub.control  # type: ignore[union-attr]
    await control.act(Disconnect(name="bob", code="banned", reason="lifted already"))
    assert (await bob.request(t="ping"))["t"] == "pong"
    assert (await admin(server, "ban", "bob", "--reason", "spam"))[0] == 0
    await closed_with(bob, "banned")


async def test_an_address_ban_refuses_new_players_and_closes_connections_from_it(
    server: Server,
) -> None:
    ann = await server.client("ann")
    code, out = await admin(server, "ban", "127.0.0.0/8", "--reason", "a flood of names")
    assert code == 0 and out["banned"]["address"] == "127.0.0.0/8"
    await closed_with(ann, "banned")
    fresh = await server.client()
    refused = await fresh.request(t="hello", name="newcomer")
    assert refused["code"] == "banned" and "a flood of names" in refused["message"]
    assert (await admin(server, "unban", "127.0.0.0/8"))[1]["bans lifted"] == 1
    assert (await (await server.client()).hello("newcomer"))["name"] == "newcomer"


async def test_kick_closes_the_connections_and_the_player_may_come_back(server: Server) -> None:
    ann, ann_too = await server.client("ann"), await server.client()
    await ann_too.hello(token=ann.token)
    bob = await server.client("bob")
    code, _ = await admin(server, "kick", "ann", "--reason", "cool off")
    assert code == 0
    for connection in (ann, ann_too):
        assert "cool off" in (await closed_with(connection, "kicked"))["message"]
    assert (await bob.request(t="ping"))["t"] == "pong"
    assert (await (await server.client()).hello(token=ann.token))["name"] == "ann"


async def test_announce_reaches_every_connection(server: Server) -> None:
    clients = [await server.client(name) for name in ("ann", "bob")] + [await server.client()]
    assert (await admin(server, "announce", "restarting at 18:00"))[0] == 0
    for client in clients:
        assert (await client.expect("announce"))["text"] == "restarting at 18:00"


async def test_end_game_ends_a_running_game_for_its_players(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    code, out = await admin(server, "end-game", game, "--result", "draw", "--reason", "stuck")
    assert code == 0 and out["how"] == "ended by the server holding it"
    for client in (ann, bob):
        end = await client.expect("end", game=game)
        assert end["result"] == "1/2-1/2" and end["reason"] == "host"
    record = await server.running.store.get_game(game)  # type: ignore[union-attr]
    assert record is not None and record.result == "1/2-1/2" and record.reason == "host"
    again = await admin(server, "end-game", game, "--result", "x")
    assert again[0] == 2 and "already finished" in again[1]


async def test_end_game_with_no_server_running_ends_it_in_the_database(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await server.stop()
    code, out = await admin(server, "end-game", game, "--result", "abort")
    assert code == 0 and out["how"].startswith("ended in the database")
    await server.start()
    assert (await (await server.client("carl")).request(t="watch", game=game))["status"] == "over"


async def test_a_moderator_mutes_and_unmutes_and_a_muted_players_chat_is_refused(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    assert (await mod.request(t="mute", name="bob", minutes=30, reason="shouting"))["t"] == "ack"

    async def refused() -> bool:
        reply = await bob.request(t="chat", game=game, text="hello?")
        return reply["t"] == "error" and reply["code"] == "muted"

    await eventually(refused, "bob is muted")
    assert (await ann.request(t="chat", game=game, text="I may"))["t"] == "ack"
    assert (await mod.request(t="unmute", name="bob"))["t"] == "ack"

    async def allowed() -> bool:
        return (await bob.request(t="chat", game=game, text="back"))["t"] == "ack"

    await eventually(allowed, "bob is unmuted")
    # a mute from the command line is found at the next hello too
    assert (await admin(server, "mute", "bob", "--for", "1h"))[0] == 0
    await bob.ws.close()
    bob_again = await server.client()
    await bob_again.hello(token=bob.token)
    await bob_again.request(t="watch", game=game)
    assert (await bob_again.request(t="chat", game=game, text="x"))["code"] == "muted"


async def test_a_moderator_removes_a_chat_line_from_every_screen_and_from_the_record(
    server: Server,
) -> None:
    """A line of the players' chat and one of the spectators' chat: each is gone from the
    screens of its own chat, and from what a screen opened later is shown."""
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    carl = await server.client("carl")
    await carl.request(t="watch", game=game)
    await ann.request(t="chat", game=game, text="something nasty")
    line = (await bob.expect("chat", text="something nasty"))["line"]
    await ann.request(t="chat", game=game, text="sorry")
    await carl.request(t="chat", game=game, text="spam from the stands")
    spam = (await carl.expect("chat", text="spam from the stands"))["line"]
    reply = await mod.request(t="remove_chat", game=game, line=line, reason="abuse")
    assert reply["t"] == "ack"
    for client in (ann, bob):
        assert (await client.expect("chat_removed", game=game))["line"] == line
    assert (await mod.request(t="remove_chat", game=game, line=spam))["t"] == "ack"
    assert (await carl.expect("chat_removed", game=game))["line"] == spam
    ann_again = await server.client()
    await ann_again.hello(token=ann.token)
    state = await ann_again.request(t="watch", game=game)
    assert [said["text"] for said in state["chat"]] == ["sorry"]
    dora = await server.client("dora")
    assert (await dora.request(t="watch", game=game))["chat"] == []


async def test_a_player_who_is_not_a_moderator_is_refused_and_nothing_happens(
    server: Server,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    for request in ({"t": "mute", "name": "bob"}, {"t": "kick", "name": "bob"},
                    {"t": "ban", "name": "bob", "reason": "x"}, {"t": "reports"},
                    {"t": "remove_chat", "game": game, "line": 1},
                    {"t": "unban", "name": "bob"}, {"t": "resolve_report", "report": 1}):
        reply = await ann.request(**request)
        assert reply["t"] == "error" and reply["code"] == "not_moderator", (request, reply)
    assert (await bob.request(t="chat", game=game, text="still here"))["t"] == "ack"
    _, log = await admin(server, "audit")
    assert log == []


async def test_a_moderator_cannot_act_on_an_admin_but_an_admin_can(server: Server) -> None:
    mod = await connected_moderator(server)
    boss = await server.client("boss")
    assert (await admin(server, "grant", "boss", "admin"))[0] == 0
    reply = await mod.request(t="kick", name="boss")
    assert reply["code"] == "not_moderator"
    boss_again = await server.client()
    assert (await boss_again.hello(token=boss.token))["roles"] == ["admin"]
    assert (await boss_again.request(t="kick", name="marta"))["t"] == "ack"
    await closed_with(mod, "kicked")


async def test_reports_reach_the_moderators_queue_and_resolving_is_audited(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann = await server.client("ann")
    await server.client("bob")
    assert (await ann.request(t="report", name="bob", reason="rude"))["t"] == "ack"
    assert (await ann.request(t="report", name="nobody", reason="x"))["code"] == \
        "no_such_player"
    queue = await mod.request(t="reports")
    assert queue["t"] == "reports"
    assert [(r["by"], r["name"], r["reason"]) for r in queue["reports"]] == \
        [("ann", "bob", "rude")]
    report = queue["reports"][0]["id"]
    assert (await mod.request(t="resolve_report", report=report, reason="warned"))["t"] == "ack"
    assert (await mod.request(t="resolve_report", report=report))["code"] == "no_such_report"
    assert (await mod.request(t="reports"))["reports"] == []
    _, log = await admin(server, "audit")
    assert (log[0]["actor"], log[0]["action"], log[0]["target"], log[0]["reason"]) == \
        ("marta", "resolve-report", str(report), "warned")


async def test_every_action_is_audited_and_the_admin_api_wants_an_admins_token(
    server: Server,
) -> None:
    ann = await server.client("ann")
    await server.client("bob")
    await admin(server, "grant", "ann", "moderator")
    await admin(server, "mute", "bob", "--for", "10m", "--reason", "caps")
    _, log = await admin(server, "audit")
    assert [(e["action"], e["target"], e["reason"], e["detail"]) for e in log] == [
        ("mute", "bob", "caps", "for 600 s"), ("grant", "ann", None, "moderator")]
    assert all(e["actor"].startswith("cli") and e["at"] > 0 for e in log)
    url = f"{server.running.http_url}/api/admin/audit"  # type: ignore[union-attr]
    assert await get(url) == (401, {"code": "not_authenticated", "message": "send an admin's "
                                                                      "token: Authorization: "
                                                                      "Bearer <token>"})
    assert (await get(url, "not-a-token"))[1]["code"] == "bad_token"
    assert await get(url, ann.token) == (403, {"code": "not_admin",
                                              "message": "only an admin may read this"})
    await admin(server, "grant", "ann", "admin")
    status, page = await get(url + "?limit=2", ann.token)
    assert status == 200 and [e["action"] for e in page["entries"]] == ["grant", "mute"]
    status, rest = await get(f"{url}?limit=2&before={page['before']}", ann.token)
    assert [e["action"] for e in rest["entries"]] == ["grant"] and rest["before"] is None
    assert (await get(url + "?limit=0", ann.token))[1]["code"] == "bad_message"
    spec = (await get(f"{server.running.http_url}/api/openapi.json"))[1]  # type: ignore[union-attr]
    assert "401" in spec["paths"]["/api/admin/audit"]["get"]["responses"]


async def test_rename_and_delete_keep_the_games_and_send_the_player_away(
    server: Server,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    refused = await admin(server, "rename", "ann", "anna")
    assert refused[0] == 2 and "end it first" in refused[1]
    await ann.request(t="resign", game=game)
    await ann.expect("end", game=game)
    code, out = await admin(server, "rename", "ann", "anna")
    assert code == 0 and out == {"renamed": "ann", "to": "anna"}
    await closed_with(ann, "kicked")
    assert (await (await server.client()).hello(token=ann.token))["name"] == "anna"
    assert (await admin(server, "rename", "anna", "bob"))[0] == 2  # taken
    exported = (await admin(server, "export-player", "bob"))[1]
    assert exported["player"]["name"] == "bob" and exported["games"][0]["id"] == game
    assert exported["games"][0]["x"] == "anna"
    code, out = await admin(server, "delete-player", "bob")
    assert code == 0 and out["games now under"].startswith("deleted-")
    await closed_with(bob, "kicked")
    gone = await (await server.client()).request(t="hello", token=bob.token)
    assert gone["code"] == "bad_token"
    api = (await get(f"{server.running.http_url}/api/games/{game}"))[1]  # type: ignore[union-attr]
    assert (api["x"], api["o"]) == ("anna", out["games now under"])
    assert (await admin(server, "export-player", "bob"))[0] == 2
