"""Bad input in volume against a live server: random and mutated messages (hypothesis), garbage
frames, illegal moves, floods, wrong tokens and guessed private codes. After each, the server
answers, no request cost it an internal error, and the games it hosts are as they were.

test_errors_e2e.py provokes every error code once; these add volume, mutation and the check
that every other game goes on intact. Most servers here raise the rate limit
(``ServerConfig(rate=..., burst=...)``) so thousands of messages fit in a few seconds; the
limit itself is tested with its real values below.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import string
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from server.game.room import GameRoom
from server.http.app import RunningServer
from tests.server.servers import Client, ClusterServer, Server, play, start_private_game

FAST = {"rate": 1e6, "burst": 1_000_000}  # no rate limit to speak of
# examples, each a batch of 34-40 frames: more than 10,000 frames in CI; more with
# QUBIC_FUZZ_BATCHES=3000 (about 110,000 frames)
FUZZ_BATCHES = int(os.environ.get("QUBIC_FUZZ_BATCHES", "300"))
# Seconds a fuzz connection waits for the server's close frame, and the fuzzed server for the
# client's answer to its own (ServerConfig.close_wait). Client and server share this test's
# event loop, which a loaded CI machine can stall: neither side should give up on a goodbye
# first and turn a close the server chose rightly into 1006. (CI's 1006 itself was the reset
# after bad UTF-8: tests/server/node/test_errors_e2e.py, a client still sending when failed.)
CLOSE_TIMEOUT = 10.0
GAME, OTHER = "<game>", "<other>"  # replaced by the real game ids when a frame is sent


# -- the strategies --------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4),
    max_leaves=8,
)
request_ids = st.none() | st.integers(-(2**60), 2**60) | st.text(max_size=70)
game_ids = st.sampled_from([GAME, GAME, OTHER, "nonexistent1", ""]) | st.text(max_size=40)
cells = (st.integers(-3, 70) | st.sampled_from(["1a1", "4d4", "2B3", "5a1", "a1", "4d5", ""])
         | st.text(max_size=5))
plies = st.integers(-2, 70) | st.integers()
names = st.sampled_from(["ann", "BOB", "fuzz", "a" * 25]) | st.text(max_size=30)
tokens = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=130)
clocks = (st.none() | st.fixed_dictionaries({"initial": st.integers(-5, 20_000),
                                             "increment": st.integers(-5, 300)}) | json_values)
colours = st.sampled_from(["x", "o", "random", "X", ""]) | st.text(max_size=3)
variants = st.sampled_from(["4x4x4", "3x3x3", "4x4", "5x5x5"]) | st.text(max_size=6)
in_game = {"game": game_ids}
TEMPLATES: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "hello": {"name": names, "token": tokens},
    "lobby_sub": {},
    "lobby_unsub": {},
    "seek": {"variant": variants, "clock": clocks, "rated": st.booleans(), "colour": colours},
    "cancel_seek": {"seek": st.text(max_size=10)},
    "accept_seek": {"seek": st.text(max_size=10)},
    "quick": {"variant": variants, "clock": clocks},
    "cancel_quick": {},
    "private_create": {"variant": variants, "clock": clocks, "colour": colours},
    "private_join": {"code": st.text(max_size=40)},
    "private_cancel": {},
    "play_ai": {"level": st.integers(-1, 10), "variant": variants, "colour": colours},
    "watch": {"game": game_ids, "since": st.none() | st.integers()},
    "unwatch": in_game,
    "move": {"game": game_ids, "cell": cells, "ply": plies},
    "resign": in_game, "draw_offer": in_game, "draw_accept": in_game, "draw_decline": in_game,
    "abort": in_game, "rematch": in_game, "claim": in_game,
    "chat": {"game": game_ids, "text": st.text(max_size=320)},
    "ping": {},
}
messages = st.one_of(*(
    st.fixed_dictionaries({"t": st.just(t)}, optional={**fields, "id": request_ids})
    for t, fields in TEMPLATES.items()
))


def mutate(message: dict[str, Any], how: int, value: Any, key: str) -> dict[str, Any]:
    """One mutation of a message: drop a field, add an unknown one, retype one, rename t."""
    out = dict(message)
    keys = sorted(out)
    if how == 0 and len(keys) > 1:
        del out[keys[hash(key) % len(keys)]]
    elif how == 1:
        out[key or "extra"] = value
    elif how == 2:
        out[keys[hash(key) % len(keys)]] = value
    else:
        out["t"] = key
    return out


mutated = st.builds(mutate, messages, st.integers(0, 3), json_values, st.text(max_size=8))


def scramble(text: str, at: int, how: int) -> str:
    """Text-level damage to a JSON frame: cut it, or put a stray character in it."""
    at %= len(text) + 1
    return text[:at] if how == 0 else text[:at] + "\"{}[],:\\\x00"[how % 9] + text[at:]


@dataclass(frozen=True)
class Frame:
    """One frame to send, on fuzz connection ``conn``."""

    conn: int
    kind: str  # "text", "binary" or "bad_utf8"
    payload: str | bytes


def text_frames(conn: st.SearchStrategy[int]) -> st.SearchStrategy[Frame]:
    dumped = st.one_of(messages, messages, mutated, mutated, json_values).map(json.dumps)
    damaged = st.builds(scramble, messages.map(json.dumps), st.integers(0, 10_000),
                        st.integers(0, 8))
    huge = st.integers(8193, 12_000).map(lambda n: json.dumps({"t": "ping", "id": "x" * n}))
    return st.one_of(
        st.builds(Frame, conn, st.just("text"), dumped),
        st.builds(Frame, conn, st.just("text"), damaged),
        st.builds(Frame, conn, st.just("text"), st.text(max_size=60)),
        st.builds(Frame, conn, st.just("binary"), st.binary(max_size=64)),
    ) | st.sampled_from([0] * 60 + [1, 2]).flatmap(lambda rare: (
        st.builds(Frame, conn, st.just("text"), dumped) if rare == 0
        else st.builds(Frame, conn, st.just("text"), huge) if rare == 1
        else st.builds(Frame, conn, st.just("bad_utf8"), st.just(b'{"t": "ping", "id": "\xff"}'))
    ))


frames = text_frames(st.integers(0, 3))


# -- the arena: a game in progress, and the connections that throw things at it --------------

AnyServer = Server | ClusterServer  # one node, or a cluster (cluster/test_cluster_fuzz.py)


def running(server: AnyServer) -> list[RunningServer]:
    """The server's running nodes: one, or each node of a cluster."""
    if isinstance(server, ClusterServer):
        return list(server.nodes.running.values())
    assert server.running is not None
    return [server.running]


def ws_url(server: AnyServer, i: int) -> str:
    """Where connection ``i`` goes: on a cluster, each to the next node in turn."""
    nodes = running(server)
    return nodes[i % len(nodes)].ws_url


def errors(server: AnyServer) -> Counter[str]:
    """The error replies sent, by code, on every node."""
    counted: Counter[str] = Counter()
    for node in running(server):
        for code, count in node.hub.metrics.errors.items():
            counted[getattr(code, "value", code)] += count
    return counted


@dataclass
class Arena:
    server: AnyServer
    ann: Client
    bob: Client
    cat: Client  # a spectator of the game
    game: str
    other: str  # a finished game
    before: tuple[Any, ...] = ()
    sent: int = 0
    closes: Counter[int | None] = field(default_factory=Counter)
    abnormal: list[str] = field(default_factory=list)  # where each unexpected close was seen

    def record(self, ws: ClientConnection, where: str) -> None:
        self.closes[ws.close_code] += 1
        if ws.close_code not in {1000, 1007, 1009}:
            protocol, lost = ws.protocol, getattr(ws, "connection_exc", None)
            self.abnormal.append(
                f"{ws.close_code} {ws.close_reason!r} when {where}: sent {protocol.close_sent}, "
                f"received {protocol.close_rcvd}, lost with {lost!r}")

    @property
    def room(self) -> GameRoom:
        """The game's room on its node (on a cluster, the owner's)."""
        rooms = [r.hub.rooms.held[self.game] for r in running(self.server)
                 if self.game in r.hub.rooms.held
                 and (r.hub.cluster is None or self.game in r.hub.cluster.ownership.held)]
        assert len(rooms) == 1, f"{len(rooms)} nodes hold {self.game}"
        return rooms[0]

    def state(self) -> tuple[Any, ...]:
        """What no outsider may change: the moves, seats, result, offers and version of
        everything but chat."""
        room = self.room
        return (tuple(room.board.moves), room.seats, room.end, room.draw_offer,
                frozenset(room.rematch), tuple(p.online for p in room._presence))

    def internal_errors(self) -> int:
        """Requests that failed for the server's sake: ``internal``, and on a cluster
        ``unavailable`` (a node that could not reach another: none is down here)."""
        counted = errors(self.server)
        return counted["internal"] + counted["unavailable"]

    async def intact(self) -> None:
        """The server answers, raised no internal error, and the game is as it was."""
        assert (await self.cat.request(t="ping"))["t"] == "pong"
        assert self.internal_errors() == 0, dict(errors(self.server))
        assert self.state() == self.before


async def make_arena(server: AnyServer) -> Arena:
    ann, bob, cat = [await server.client(n) for n in ("ann", "bob", "cat")]
    other = await start_private_game(server, ann, bob)
    await ann.request(t="resign", game=other)
    game = await start_private_game(server, ann, bob)
    for ply, cell in enumerate(["1a1", "4d4", "2b2", "3c3"]):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    await cat.request(t="watch", game=game)
    arena = Arena(server, ann, bob, cat, game, other)
    arena.before = arena.state()
    return arena


@pytest_asyncio.fixture
async def fast(tmp_path: Path) -> AsyncIterator[Server]:
    server = Server(tmp_path / "q.db", **FAST, close_wait=CLOSE_TIMEOUT)
    await server.start()
    yield server
    await server.stop()


class Thrower:
    """A connection that sends whatever it is given and reads (and drops) everything that
    comes back, so it is never a slow consumer; reconnects when the server hangs up."""

    def __init__(self, url: str, name: str | None, arena: Arena) -> None:
        self.url = url
        self.name = name
        self.arena = arena
        self.ws: ClientConnection | None = None
        self.reader: asyncio.Task[None] | None = None

    async def open(self) -> ClientConnection:
        if self.ws is not None and self.ws.close_code is None:
            return self.ws
        if self.ws is not None:
            self.arena.record(self.ws, "reconnecting")
        # a generous close_timeout: on a loaded CI machine the server's answer to a close can
        # take more than a second, and a client that gives up first records 1006 (abnormal)
        self.ws = await websockets.connect(self.url, max_size=None,
                                           close_timeout=CLOSE_TIMEOUT)
        self.reader = asyncio.create_task(self._drain(self.ws))
        if self.name is not None:
            await self.ws.send(json.dumps({"t": "hello", "name": self.name}))
        return self.ws

    async def _drain(self, ws: ClientConnection) -> None:
        with pytest.raises(ConnectionClosed):
            while True:
                await ws.recv()

    async def send(self, frame: Frame) -> None:
        ws = await self.open()
        try:
            if frame.kind == "binary":
                await ws.send(frame.payload)
            elif frame.kind == "bad_utf8":
                await ws.send(frame.payload, text=True)
            else:
                assert isinstance(frame.payload, str)
                text = frame.payload.replace(GAME, self.arena.game)
                await ws.send(text.replace(OTHER, self.arena.other))
        except ConnectionClosed:
            pass
        self.arena.sent += 1

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.arena.record(self.ws, "closing")
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


# -- the fuzz --------------------------------------------------------------------------------


async def test_random_and_mutated_messages_leave_the_server_and_its_games_intact(
    fast: Server,
) -> None:
    await fuzz_the_arena(fast, FUZZ_BATCHES)


async def fuzz_the_arena(server: AnyServer, batches: int) -> None:
    """``batches`` batches of random and mutated frames from four connections (on a cluster,
    spread over its nodes), the arena checked intact after each."""
    arena = await make_arena(server)
    throwers = [Thrower(ws_url(server, i), name, arena)
                for i, name in enumerate(("fz0", "fz1", None, None))]
    loop = asyncio.get_running_loop()

    async def batch(frames_: list[Frame]) -> None:
        for frame in frames_:
            await throwers[frame.conn].send(frame)
        await arena.intact()

    @settings(max_examples=batches, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(frames, min_size=34, max_size=40))
    def fuzz(frames_: list[Frame]) -> None:
        asyncio.run_coroutine_threadsafe(batch(frames_), loop).result(60)

    await asyncio.to_thread(fuzz)  # hypothesis in a thread; the frames go out on this loop
    for thrower in throwers:
        await thrower.close()
    assert arena.sent >= 34 * batches, arena.sent
    print(f"fuzz: {arena.sent} frames, connections closed by code: {dict(arena.closes)}; "
          f"errors by code: {dict(errors(server))}")
    cut_short = sum(r.hub.metrics.counters["closes_cut_short"] for r in running(server))
    assert set(arena.closes) <= {1000, 1007, 1009}, (arena.abnormal, cut_short)  # as they must
    await arena.intact()
    # the game goes on, and the players see exactly what they saw before, plus the new move
    state = await arena.ann.request(t="watch", game=arena.game)
    assert state["moves"] == [0, 63, 21, 42] and state["status"] == "playing"
    await play(arena.ann, arena.game, "1b1", 4)
    assert (await arena.bob.expect("move", game=arena.game, ply=5))["notation"] == "1b1"
    assert (await arena.cat.expect("move", game=arena.game, ply=5))["notation"] == "1b1"


# -- garbage frames, illegal moves, floods, tokens, codes: in volume -------------------------


async def test_garbage_frames_from_many_connections_at_once(fast: AnyServer) -> None:
    arena = await make_arena(fast)

    async def one(i: int) -> int | None:
        # i // 4: on a cluster, every kind of garbage reaches every node
        async with websockets.connect(ws_url(fast, i // 4), max_size=None,
                                      close_timeout=1) as ws:
            kind = i % 4
            if kind == 0:  # over 8 KiB: error frame_too_large, close 1009
                await ws.send(json.dumps({"t": "ping", "id": "x" * (8193 + i)}))
                assert json.loads(await ws.recv())["code"] == "frame_too_large"
            elif kind == 1:  # over 64 KiB: cut off by the websocket layer, close 1009
                await ws.send("x" * (70_000 + i))
            elif kind == 2:  # not UTF-8: close 1007
                await ws.send(b"\xc3\x28 not utf-8", text=True)
            else:  # binary frames: an error each, and the connection stays open
                for _ in range(20):
                    await ws.send(secrets.token_bytes(16))
                codes = {json.loads(await ws.recv())["code"] for _ in range(20)}
                assert codes == {"binary_frame"}
                await ws.send('{"t": "ping", "id": 1}')
                assert json.loads(await ws.recv())["t"] == "pong"
                return None
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return ws.close_code

    codes = await asyncio.gather(*(one(i) for i in range(80)))
    assert Counter(codes) == {1009: 40, 1007: 20, None: 20}
    await arena.intact()


async def test_illegal_moves_in_volume_change_nothing(fast: AnyServer) -> None:
    arena = await make_arena(fast)
    ann, bob, cat = arena.ann, arena.bob, arena.cat
    dan = await fast.client("dan")
    rng = random.Random(3)
    occupied = [0, 63, 21, 42]
    attempts: list[tuple[Client, dict[str, Any], set[str]]] = []
    for _ in range(100):
        cell = rng.randrange(64)
        attempts += [
            (bob, {"cell": cell, "ply": 4}, {"not_your_turn"}),  # out of turn
            (ann, {"cell": rng.choice(occupied), "ply": 4}, {"occupied"}),
            (ann, {"cell": cell, "ply": rng.choice([0, 1, 2, 3, 5, 9])}, {"stale_move"}),
            (ann, {"cell": cell, "ply": rng.choice([-1, 2**53, "4"])}, {"bad_message"}),
            (ann, {"cell": rng.choice([64, 99, "5a1", "1e1", "zz"]), "ply": 4},
             {"bad_cell", "bad_message"}),
            (cat, {"cell": cell, "ply": 4}, {"spectator"}),  # a spectator
            (dan, {"cell": cell, "ply": 4}, {"not_seated"}),  # someone else's game
        ]
    rng.shuffle(attempts)
    for client, fields, codes in attempts:  # one at a time: a decoding error has no ref
        await client.send(t="move", game=arena.game, **fields)
        error = await client.expect("error")
        assert error["code"] in codes, (fields, error)
    await arena.intact()
    await play(ann, arena.game, "1b1", 4)  # and the real move is still the one that counts
    await bob.expect("move", game=arena.game, ply=5)


async def test_floods_past_the_rate_limit_close_only_the_flooders(
    server: AnyServer, floods: tuple[str, ...] = ('{"t": "ping"}',),
) -> None:
    """Ten connections flood (flooder i sends ``floods[i % len(floods)]``, ``<game>`` its
    game's id) while the game's players go on."""
    arena = await make_arena(server)  # the real limits: a burst of 30, then 10 frames/s
    flooders = [await server.client(f"flood{i}") for i in range(10)]

    async def flood(client: Client, frame: str) -> int | None:
        with pytest.raises(ConnectionClosed):
            for _ in range(200):
                await client.ws.send(frame.replace(GAME, arena.game))
            while True:
                await client.recv(10)
        assert any(m.get("code") == "rate_limited" for m in client.seen)
        return client.ws.close_code

    async def keep_playing() -> None:
        for ply, cell in enumerate(["1b1", "4c4", "2c2"], start=4):
            await play(arena.ann if ply % 2 == 0 else arena.bob, arena.game, cell, ply)

    *codes, _ = await asyncio.gather(
        *(flood(f, floods[i % len(floods)]) for i, f in enumerate(flooders)), keep_playing())
    assert codes == [1008] * 10
    assert (await arena.cat.expect("move", game=arena.game, ply=7))["notation"] == "2c2"


async def test_wrong_tokens_in_volume_open_nothing(fast: AnyServer) -> None:
    arena = await make_arena(fast)
    guesser = await fast.client()
    alphabet = string.ascii_letters + string.digits + "_-"
    rng = random.Random(5)
    guesses = [secrets.token_urlsafe(32) for _ in range(300)]
    guesses += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 128)))
                for _ in range(300)]
    token = arena.ann.token
    assert token is not None
    guesses.append(token[:-1] + ("A" if token[-1] != "A" else "B"))  # one character off
    for guess in guesses:
        reply = await guesser.request(t="hello", token=guess)
        assert reply["t"] == "error" and reply["code"] == "bad_token", reply
    assert (await guesser.request(t="seek"))["code"] == "not_authenticated"
    again = await fast.client()
    assert (await again.hello(token=token))["name"] == "ann"
    await arena.intact()


async def test_guessing_private_codes_finds_nothing(fast: AnyServer) -> None:
    arena = await make_arena(fast)
    host, friend, guesser = [await fast.client(n) for n in ("host", "friend", "guesser")]
    refused = 0
    code = (await host.request(t="private_create"))["code"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"  # the codes' own alphabet (base32)
    rng = random.Random(11)
    for _ in range(2000):
        guess = "-".join("".join(rng.choice(alphabet) for _ in range(4)) for _ in range(4))
        if guess.replace("-", "") == code.replace("-", ""):
            continue
        reply = await guesser.request(t="private_join", code=guess)
        assert reply["t"] == "error" and reply["code"] == "no_such_code", reply
        refused += 1
    assert refused > 1990
    await friend.send(t="private_join", code=code.lower())  # the real code still works
    seats = (await host.expect("game"))["seats"]
    assert {seat["name"] for seat in seats} == {"host", "friend"}
    await arena.intact()
