"""An arena tournament of bots on one server: how soon a player is paired again, what the
standings cost, and whether the other games' moves keep their pace (issue 43, item 6).

    .venv/bin/python bench/arena.py --players 500 --others 200 --minutes 3 --rate 2

The server runs as its own process (``python -m qubic_cli serve --port 0``) on a fresh SQLite
file. ``qubic admin tournament create`` schedules an arena on it (clock 1+0, starting a few
seconds later); ``--players`` bots (the load generator's protocol bot, ``bench/harness/bot.py``)
join it and play whatever game the director gives them: a random legal move every
``1/rate`` seconds when it is their turn. ``--others`` pairs of bots play ordinary games in
private rooms at the same rate meanwhile.

What it reports, over the arena's time:

- **pairing delay**: for each game of the arena that ended, the seconds from its ``end``
  reaching a player to that player's next tournament ``game`` (p50/p99): the director pairs
  again within about a second of a game's end when someone else is free;
- **standings**: the size of a ``tournament`` update, how many a follower got per second, and
  what rebuilding and encoding the final standings costs (``Standings.from_data`` + ``state``
  + encoding, in this process, on the database the server wrote);
- **moves**: p50/p99 from a move's send until the opponent receives it, for the arena's games
  and, apart, for the other games; errors by code.

Loopback only; bounded in players (``--players`` <= 2000) and time (the arena's minutes plus a
drain). Run it small to check it works (``--players 20 --others 4 --minutes 1``); the lead
runs the full size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bot import Bot
from harness.server import NO_LIMITS, ROOT, ServerProcess
from harness.stats import ms, percentiles

CELLS = 64  # 4x4x4
MAX_PLAYERS = 2000
CONNECTS_AT_ONCE = 64
START_IN = 0.25  # minutes from creating the arena to its start


@dataclass
class Tally:
    pairing_delays: list[float] = field(default_factory=list)
    arena_moves: list[float] = field(default_factory=list)
    other_moves: list[float] = field(default_factory=list)
    updates: int = 0
    update_bytes: list[int] = field(default_factory=list)
    arena_games: int = 0
    errors: Counter[str] = field(default_factory=Counter)


class Player(Bot):
    """A bot in the arena: it plays the tournament's games it is given."""

    def __init__(self, name: str, tally: Tally, tournament: str, rate: float,
                 rng: random.Random, sent: dict[tuple[str, int], float]) -> None:
        super().__init__(name, self._moved)
        self.tally = tally
        self.tournament = tournament
        self.interval = 1.0 / rate
        self.rng = rng
        self.sent = sent  # (game, ply) -> when its mover sent it, shared by every bot
        self.games: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ended_at: float | None = None
        self.board: dict[str, set[int]] = {}
        self.turn: dict[str, asyncio.Event] = {}
        self.plies: dict[str, int] = {}
        self.colour: dict[str, int] = {}
        self.follower = False  # counts the live updates it gets

    def error(self, code: str, now: float) -> None:
        self.tally.errors[code] += 1

    def game(self, message: dict[str, Any], reply: Any, now: float) -> Any:
        if message.get("tournament") == self.tournament and message["status"] == "playing" \
                and message["id"] not in self.board:
            if self.ended_at is not None:
                self.tally.pairing_delays.append(now - self.ended_at)
                self.ended_at = None
            self.tally.arena_games += 1
            self.games.put_nowait(message)
        return reply

    def _moved(self, message: dict[str, Any], now: float) -> None:
        game = message["game"]
        if game not in self.board:
            return
        self.board[game].add(message["cell"])
        self.plies[game] = message["ply"]
        if message["side"] != "xo"[self.colour[game]]:  # the opponent's: timed here
            sent = self.sent.pop((game, message["ply"]), None)
            if sent is not None:
                self.tally.arena_moves.append(now - sent)
        self.turn[game].set()

    def _received(self, message: dict[str, Any], now: float) -> None:
        if message["t"] == "tournament" and message.get("ref") is None and self.follower:
            self.tally.updates += 1
        super()._received(message, now)

    async def play(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            try:
                game = await asyncio.wait_for(self.games.get(), max(0.1, until - loop.time()))
            except TimeoutError:
                return
            gid = game["id"]
            self.board[gid] = set(game["moves"])
            self.plies[gid] = len(game["moves"])
            self.turn[gid] = asyncio.Event()
            self.colour[gid] = 0 if game["you"] == "x" else 1
            while gid not in self.ended:
                if self.plies[gid] % 2 == self.colour[gid]:
                    await asyncio.sleep(self.interval)
                    if gid in self.ended:
                        break
                    free = [c for c in range(CELLS) if c not in self.board[gid]]
                    ply = self.plies[gid]
                    self.sent[(gid, ply + 1)] = time.monotonic()
                    reply = await self.request(t="move", game=gid, cell=self.rng.choice(free),
                                               ply=ply)
                    if reply["t"] != "ack":
                        break
                else:
                    self.turn[gid].clear()
                    ended = asyncio.ensure_future(self._ended(gid))
                    await asyncio.wait([ended, asyncio.ensure_future(self.turn[gid].wait())],
                                       timeout=30, return_when=asyncio.FIRST_COMPLETED)
                    ended.cancel()
            self.ended_at = time.monotonic()
            del self.board[gid]

    async def _ended(self, gid: str) -> None:
        while gid not in self.ended:
            await asyncio.sleep(0.05)


async def other_games(url: str, index: int, rate: float, until: float, tally: Tally,
                      rng: random.Random) -> None:
    """A pair of bots playing ordinary games in a private room until ``until``."""
    x, o = Bot(f"other{index}x"), Bot(f"other{index}o")
    await x.connect(url)
    await o.connect(url)
    loop = asyncio.get_running_loop()
    try:
        while loop.time() < until:
            private = await x.request(t="private_create", colour="x")
            game = await o.request(t="private_join", code=private["code"])
            gid, free, ply = game["id"], list(range(CELLS)), 0
            while gid not in x.ended and loop.time() < until:
                await asyncio.sleep(1.0 / rate)
                mover, other = (x, o) if ply % 2 == 0 else (o, x)
                seen: asyncio.Future[float] = loop.create_future()
                other.moves[(gid, ply + 1)] = seen
                sent = time.monotonic()
                reply = await mover.request(t="move", game=gid,
                                            cell=free.pop(rng.randrange(len(free))), ply=ply)
                if reply["t"] != "ack":
                    tally.errors[reply.get("code", "?")] += 1
                    break
                tally.other_moves.append(await asyncio.wait_for(seen, 15) - sent)
                ply += 1
    finally:
        await x.close()
        await o.close()


def create_arena(db: Path, minutes: float) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "admin", "tournament", "create", "--name",
         "Bench arena", "--start", f"+{START_IN}", "--minutes", str(max(1, round(minutes))),
         "--clock", "1+0", "--db", str(db), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return str(json.loads(done.stdout)["id"])


def standings_cost(db: Path, tournament: str) -> tuple[float, int, int]:
    """Seconds to rebuild and encode the tournament's state from its rows (best of three),
    the players, and the encoded size."""
    sys.path.insert(0, str(ROOT))
    from server.node.tournament_view import Standings
    from server.protocol import encode
    from server.store import tournaments as ops
    from server.store.factory import open_store

    async def measure() -> tuple[float, int, int]:
        store = await open_store(str(db))
        try:
            data = await store.query(ops.tournament_data(tournament))
            assert data is not None
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                frame = encode(Standings.from_data(data).state())
                best = min(best, time.perf_counter() - started)
            return best, len(data.entries), len(frame)
        finally:
            await store.close()

    return asyncio.run(measure())


async def conduct(url: str, tournament: str, args: argparse.Namespace, tally: Tally) -> None:
    rng = random.Random(args.seed)
    sent: dict[tuple[str, int], float] = {}
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
    players = [Player(f"p{i}", tally, tournament, args.rate, random.Random(rng.random()), sent)
               for i in range(args.players)]

    async def enter(player: Player) -> None:
        async with gate:
            await player.connect(url)
            reply = await player.request(t="tournament_join", tournament=tournament)
            if reply["t"] != "ack":
                raise RuntimeError(f"join refused: {reply}")

    await asyncio.gather(*(enter(p) for p in players))
    players[0].follower = True
    loop = asyncio.get_running_loop()
    until = loop.time() + START_IN * 60 + args.minutes * 60
    others = [other_games(url, i, args.rate, until, tally, random.Random(rng.random()))
              for i in range(args.others)]
    await asyncio.gather(*(p.play(until) for p in players), *others)
    for player in players:
        await player.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--others", type=int, default=100, help="pairs in ordinary games")
    parser.add_argument("--minutes", type=float, default=3.0, help="the arena's length")
    parser.add_argument("--rate", type=float, default=2.0, help="moves a second per game")
    parser.add_argument("--seed", type=int, default=43)
    args = parser.parse_args(argv)
    if not 2 <= args.players <= MAX_PLAYERS or args.others < 0 or args.rate <= 0:
        parser.error(f"--players 2-{MAX_PLAYERS}, --others >= 0, --rate > 0")
    with tempfile.TemporaryDirectory(prefix="qubic-arena-") as directory:
        db = Path(directory) / "arena.db"
        server = ServerProcess(db, *NO_LIMITS)
        server.start()
        tally = Tally()
        try:
            tournament = create_arena(db, args.minutes)
            wall = time.monotonic()
            asyncio.run(conduct(server.ws_url, tournament, args, tally))
            seconds = time.monotonic() - wall
        finally:
            server.close()
        cost, players, size = standings_cost(db, tournament)
    print(f"arena of {args.players} players ({args.others} other games beside), "
          f"{args.minutes:g} min at {args.rate:g} moves/s a game")
    print(f"  arena games started: {tally.arena_games}")
    delays = tally.pairing_delays
    if delays:
        p50, _, p99 = percentiles(delays)
        print(f"  pairing delay (end -> next game): p50 {p50:.2f} s  p99 {p99:.2f} s  "
              f"({len(delays)} pairings)")
    print(f"  standings: rebuilt and encoded for {players} players in {cost * 1000:.1f} ms; "
          f"an update is {size / 1024:.1f} KiB; a follower got {tally.updates / seconds:.2f} "
          f"updates/s")
    print(f"  moves, arena games: {ms(tally.arena_moves)}  ({len(tally.arena_moves)})")
    print(f"  moves, other games: {ms(tally.other_moves)}  ({len(tally.other_moves)})")
    print(f"  errors: {dict(tally.errors) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
