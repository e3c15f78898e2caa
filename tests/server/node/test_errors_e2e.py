"""Every stable error code, provoked against a live server; the server and other games go on."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed

from server.node.hub import Hub
from tests.server.servers import Client, Server, play, start_private_game


async def raw(server: Server) -> Client:
    return await server.client()


async def test_decoding_errors_leave_the_connection_open(server: Server) -> None:
    c = await raw(server)
    cases = [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        ('{"t": "dance"}', "unknown_type"),
        ('{"no_t": 1}', "unknown_type"),
        ('{"t": "hello", "name": "a b"}', "bad_name"),
        ('{"t": "hello", "name": "' + "n" * 25 + '"}', "bad_name"),
        ('{"t": "hello", "token": "short"}', "bad_token"),
        ('{"t": "move", "game": "g", "cell": "9z9", "ply": 0}', "bad_cell"),
        ('{"t": "move", "game": "g", "ply": 0}', "bad_message"),
        ('{"t": "move", "game": "g", "cell": "1a1", "ply": "zero"}', "bad_message"),
        ('{"t": "play_ai", "level": 9}', "bad_level"),
        ('{"t": "play_ai", "level": 0}', "bad_level"),
        ('{"t": "seek", "variant": "5x5x5"}', "bad_variant"),
        ('{"t": "seek", "clock": {"initial": 0, "increment": 0}}', "bad_clock"),
        ('{"t": "chat", "game": "g", "text": "' + "x" * 301 + '"}', "bad_chat"),
        ('{"t": "ping", "extra": 1}', "bad_message"),
    ]
    for frame, code in cases:
        await c.ws.send(frame)
        error = await c.expect("error")
        assert error["code"] == code, (frame, error)
    await c.ws.send('{"t": "play_ai", "level": 9, "id": "lv"}')
    assert (await c.expect("error", code="bad_level"))["ref"] == "lv"
    await c.ws.send(b"\x00\x01binary")
    assert (await c.expect("error"))["code"] == "binary_frame"
    assert (await c.request(t="ping"))["t"] == "pong"  # still open


async def test_an_oversized_frame_is_refused_and_closes_with_1009(server: Server) -> None:
    c = await raw(server)
    await c.ws.send(json.dumps({"t": "ping", "id": "x" * 9000}))
    assert (await c.expect("error"))["code"] == "frame_too_large"
    with pytest.raises(ConnectionClosed):
        await c.recv(5)
    assert c.ws.close_code == 1009


async def test_a_text_frame_that_is_not_utf8_fails_the_connection_with_1007(
    server: Server,
) -> None:
    c = await raw(server)
    await c.ws.send(b'{"t": "ping", "id": "\xff"}', text=True)
    with pytest.raises(ConnectionClosed):
        await c.recv(5)
    assert c.ws.close_code == 1007
    other = await server.client("still_here")
    assert (await other.request(t="ping"))["t"] == "pong"


@pytest.mark.parametrize("bad", [
    b'{"t": "ping", "id": "\xff"}',  # not UTF-8 (1007)
    json.dumps({"t": "ping", "id": "x" * 9000}).encode(),  # over the protocol's limit (1009)
])
async def test_a_client_still_sending_when_failed_gets_the_close_frame(
    server: Server, bad: bytes,
) -> None:
    """A client that keeps sending after the frame that fails its connection (it has not read
    the close frame yet) still gets a whole close handshake, never a reset connection, which
    can cost it the close frame and its code (1006). 20 times, 20 frames after the bad one."""
    for _ in range(20):
        c = await raw(server)
        await c.ws.send(bad, text=True)
        with pytest.raises(ConnectionClosed):
            for _ in range(20):
                await c.ws.send('{"t": "ping"}')
            while True:
                await c.ws.recv()
        await c.ws.wait_closed()
        assert c.ws.close_code in (1007, 1009)
        assert c.ws.connection_exc is None  # no ConnectionResetError: the server read to the end


async def test_session_errors(server: Server) -> None:
    c = await raw(server)
    await c.send(t="seek")
    assert (await c.expect("error"))["code"] == "not_authenticated"
    await c.hello("ann")
    await c.send(t="hello", name="ann2")
    assert (await c.expect("error"))["code"] == "already_authenticated"
    for name in ("ann", "ANN"):
        d = await raw(server)
        await d.send(t="hello", name=name)
        assert (await d.expect("error"))["code"] == "name_taken"
    d = await raw(server)
    await d.send(t="hello", token="A" * 43)
    assert (await d.expect("error"))["code"] == "bad_token"
    await d.send(t="hello", name="bob", token=c.token)  # ann's token under another name
    assert (await d.expect("error"))["code"] == "bad_token"


async def test_matchmaking_errors(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    await ann.send(t="accept_seek", seek="s999")
    assert (await ann.expect("error"))["code"] == "no_such_seek"
    seek = (await ann.request(t="seek"))["seek"]["id"]
    await ann.send(t="accept_seek", seek=seek)
    assert (await ann.expect("error"))["code"] == "own_seek"
    await ann.send(t="seek")
    assert (await ann.expect("error"))["code"] == "too_many_seeks"
    await bob.send(t="cancel_seek", seek=seek)
    assert (await bob.expect("error"))["code"] == "not_allowed"
    await bob.send(t="cancel_quick")
    assert (await bob.expect("error"))["code"] == "not_queued"
    await bob.request(t="quick", variant="4x4")
    await bob.send(t="seek")
    assert (await bob.expect("error"))["code"] == "already_queued"
    for guess in ("AAAA-AAAA-AAAA-AAAA", "not-a-code", "ZZZZ-ZZZZ-ZZZZ-ZZZZ"):
        await bob.send(t="private_join", code=guess)
        assert (await bob.expect("error"))["code"] in ("no_such_code", "bad_message")


async def test_room_errors(server: Server) -> None:
    ann, bob, cat = (await server.client(n) for n in ("ann",)), None, None
    ann = await server.client("ann")
    bob = await server.client("bob")
    cat = await server.client("cat")
    game = await start_private_game(server, ann, bob)

    async def refused(client: Client, code: str, **message: object) -> None:
        await client.send(**message)
        error = await client.expect("error")
        assert error["code"] == code, (message, error)

    await refused(cat, "no_such_game", t="watch", game="nonexistent1")
    await refused(bob, "not_your_turn", t="move", game=game, cell="1a1", ply=0)
    await refused(ann, "stale_move", t="move", game=game, cell="1a1", ply=3)
    await refused(ann, "bad_cell", t="move", game=game, cell="5a1", ply=0)
    await refused(ann, "bad_cell", t="move", game=game, cell=64, ply=0)
    await play(ann, game, "1a1", 0)
    await refused(ann, "stale_move", t="move", game=game, cell="1a1", ply=0)  # a duplicate
    await refused(bob, "occupied", t="move", game=game, cell="1a1", ply=1)
    await refused(cat, "not_seated", t="move", game=game, cell="2b2", ply=1)  # someone else's
    await refused(cat, "not_seated", t="chat", game=game, text="hi")
    await cat.request(t="watch", game=game)
    await refused(cat, "spectator", t="move", game=game, cell="2b2", ply=1)
    await refused(cat, "spectator", t="resign", game=game)
    await refused(ann, "game_not_over", t="rematch", game=game)
    await refused(ann, "no_draw_offer", t="draw_accept", game=game)
    await refused(ann, "no_draw_offer", t="draw_decline", game=game)
    await ann.request(t="draw_offer", game=game)
    await refused(ann, "already_offered", t="draw_offer", game=game)
    await refused(ann, "opponent_present", t="claim", game=game)
    await play(bob, game, "4d4", 1)
    await refused(ann, "too_late_to_abort", t="abort", game=game)
    await ann.request(t="resign", game=game)
    await refused(bob, "game_over", t="move", game=game, cell="2b2", ply=2)
    await refused(bob, "game_over", t="resign", game=game)
    await bob.request(t="rematch", game=game)
    await refused(bob, "already_offered", t="rematch", game=game)
    ai = (await cat.request(t="play_ai", level=1, colour="x"))["id"]
    await refused(cat, "not_allowed", t="draw_offer", game=ai)


async def test_abort_before_both_have_moved(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    await bob.send(t="abort", game=game)
    end = await ann.expect("end")
    assert end["result"] == "*" and end["reason"] == "abort"


async def test_a_flood_is_closed_with_1008_while_other_games_go_on(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    flooder = await server.client("flood")
    for _ in range(60):
        try:
            await flooder.ws.send('{"t": "ping"}')
        except ConnectionClosed:
            break
    codes = []
    with pytest.raises(ConnectionClosed):
        while True:
            codes.append((await flooder.recv(5))["t"])
    assert flooder.ws.close_code == 1008
    assert "error" in codes and any(m.get("code") == "rate_limited" for m in flooder.seen)
    await play(ann, game, "1a1", 0)
    assert (await bob.expect("move"))["notation"] == "1a1"


async def test_a_broken_store_is_an_error_not_a_crash(server: Server) -> None:
    ann = await server.client("ann")
    await server.running.store.close()
    late = await raw(server)
    await late.send(t="hello", name="bob")
    assert (await late.expect("error"))["code"] == "store_unavailable"
    await ann.send(t="play_ai", level=1)
    assert (await ann.expect("error"))["code"] == "store_unavailable"
    assert (await ann.request(t="ping"))["t"] == "pong"


async def test_shutting_down_is_said(server: Server) -> None:
    ann = await server.client("ann")
    server.running.hub.rooms.closing = True
    await ann.send(t="seek")
    assert (await ann.expect("error"))["code"] == "shutting_down"
    server.running.hub.rooms.closing = False


async def test_a_bug_costs_one_request_not_the_connection(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann = await server.client("ann")

    async def broken(self: Hub, session: object, message: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Hub, "_ping", broken)
    await ann.send(t="ping")
    assert (await ann.expect("error"))["code"] == "internal"
    monkeypatch.undo()
    assert (await ann.request(t="ping"))["t"] == "pong"


async def test_a_failing_ai_pool_is_reported_and_retried(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.computer.local import ComputerError
    from server.node import computer_turns as computer

    pool = server.running.pool
    real = pool.decide
    failures = []

    async def flaky(job: object) -> object:
        if not failures:
            failures.append(job)
            raise ComputerError("workers keep dying")
        return await real(job)  # type: ignore[arg-type]

    monkeypatch.setattr(pool, "decide", flaky)
    monkeypatch.setattr(computer, "COMPUTER_RETRY_DELAY", 0.05)
    ann = await server.client("ann")
    state = await ann.request(t="play_ai", level=2, colour="o")
    assert (await ann.expect("error"))["code"] == "ai_unavailable"
    assert (await ann.expect("move", ply=1))["side"] == "x"  # the retry got through
    assert state["you"] == "o" and len(failures) == 1
