"""The simulated world: players of every role on real sockets against a real server, driven by
one ``random.Random(seed)``, with the invariants checked after every step.

A step is one thing a person, a moderator or the host does (``step_*`` methods); the picker draws
one by weight, the step draws its actors, acts, and checks what its action promises (a lever
reaching every socket, a refusal's code); then the world waits for the server to go quiet
(bounded) and checks every client's versioned streams; every ``CHECKPOINT`` steps it reads the
store and checks the moves. Every step writes one line to the log, so a failing run prints the
steps that led to it, and ``python -m tests.simulation --seed S --steps N`` replays it.

The server's timing is not under the seed (real sockets, a real event loop), so a replay draws
the same steps, on the same players and games, while the server's answers may interleave
differently; what a step draws depends only on what earlier steps drew and on outcomes the
steps wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import string
import time
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from engine import Board

from .backends import Backend
from .bot_steps import BotSteps
from .client import SimClient, said
from .invariants import Violation, documented_codes, known
from .model import Report, SimGame, SimPlayer
from .tournament_steps import TournamentSteps

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = 25  # steps between reads of the store
SETTLE_QUIET = 0.12  # the server is quiet when no client got a frame for this long ...
SETTLE_MAX = 2.0  # ... or after this long, whichever first
SETTLE_LATE = 0.6  # the quiet of a second look, when a client looked behind at the first
LEVER_WAIT = 1.5  # "within a second" (the control table is read four times a second), and slack
STORM = 3  # catch-up frames one client may send for one game in one step (since, since, full)
MAX_PLAYERS = 12
MAX_GAMES_EACH = 2
VARIANTS = ("4x4", "4x4", "3x3x3")


class World:
    """The players, their sockets, the games, and what has been acknowledged."""

    def __init__(self, backend: Backend, seed: int, log: Callable[[str], None] | None = None,
                 ) -> None:
        self.backend = backend
        self.seed = seed
        self.rng = random.Random(seed)
        self.echo = log
        self.players: dict[int, SimPlayer] = {}
        self.clients: list[SimClient] = []
        self.games: dict[str, SimGame] = {}
        # games some client was told are over: an end is final, and is not forgotten when every
        # socket that saw it has closed (a rename or a ban closes them all)
        self.ended: set[str] = set()
        self.acked: dict[tuple[str, int], int] = {}
        self.reports: list[Report] = []
        self.tourneys = TournamentSteps(self)
        self.bots = BotSteps(self)
        self.violations: list[Violation] = []
        self.lines: list[str] = []
        self.step = 0
        self.counts: dict[str, int] = {}
        self.checks: dict[str, int] = {}  # how often each checker ran
        self.looking: list[str] | None = None  # a first look's failed checkers (not counted)
        self.codes = documented_codes(ROOT)
        self._uids = 0
        self._labels: dict[int, int] = {}
        self.http: aiohttp.ClientSession | None = None
        self.admin_uid = 0
        self.mod_uid = 0

    # -- bookkeeping ---------------------------------------------------------------------------

    def violation(self, checker: str, detail: str) -> None:
        self.violations.append(Violation(checker, self.step, detail))
        if self.echo is not None:
            tag = " (known)" if known(checker, self.backend.mode) else ""
            self.echo(f"    !! {checker}{tag}: {detail}")

    def checked(self, checker: str, holds: bool, detail: str) -> bool:
        if self.looking is not None:  # a first look: nothing counted
            if not holds:
                self.looking.append(checker)
            return holds
        self.checks[checker] = self.checks.get(checker, 0) + 1
        if not holds:
            self.violation(checker, detail)
        return holds

    def note(self, line: str) -> None:
        entry = f"{self.step:>4} {line}"
        self.lines.append(entry)
        if self.echo is not None:
            self.echo(entry)

    def pick(self, items: list[Any]) -> Any:
        return items[self.rng.randrange(len(items))] if items else None

    def node(self) -> str:
        return self.pick(list(self.backend.nodes))

    def new_client(self, uid: int | None, node: str | None = None) -> SimClient:
        key = uid if uid is not None else -1
        self._labels[key] = self._labels.get(key, 0) + 1
        label = f"p{uid}#{self._labels[key]}" if uid is not None else f"anon#{self._labels[key]}"
        client = SimClient(label, node or self.node(), self._client_violation, self.codes,
                           on_over=self.ended.add)
        client.uid = uid
        self.clients.append(client)
        return client

    def _client_violation(self, checker: str, detail: str) -> None:
        self.checks[checker] = self.checks.get(checker, 0) + 1
        self.violation(checker, detail)

    def open_clients(self, uid: int) -> list[SimClient]:
        return [c for c in self.clients if c.uid == uid and c.open and c.token is not None]

    def living(self, *, free: bool = True) -> list[SimPlayer]:
        """Players who exist and may act (not banned); ``free``: not the admin or moderator."""
        return [p for p in self.players.values() if not p.deleted and not p.banned
                and not p.bot and (not free or p.role is None)]

    def connected(self, **kw: Any) -> list[SimPlayer]:
        return [p for p in self.living(**kw) if self.open_clients(p.uid)]

    def active_games(self, uid: int | None = None) -> list[SimGame]:
        out = []
        for game in self.games.values():
            if uid is not None and game.seat_of(uid) is None:
                continue
            if self.latest_view_status(game.id) != "over":
                out.append(game)
        return out

    def seq(self, game: str) -> tuple[int, str]:
        """A game's place in the order the world learnt of games (ids are random)."""
        known = self.games.get(game)
        return (known.seq, "") if known is not None else (1 << 30, game)

    def latest_view_status(self, game: str) -> str | None:
        if game in self.ended:
            return "over"
        status = None
        for client in self.clients:
            view = client.views.get(game)
            if view is not None and client.open:
                if view.status == "over":
                    return "over"
                status = view.status
        return status

    # -- talking to the server -----------------------------------------------------------------

    async def connect(self, client: SimClient, node: str | None = None) -> bool:
        node = node or client.node
        return await client.connect(self.backend.ws_url(node), node)

    async def hello(self, client: SimClient, *, name: str | None = None,
                    token: str | None = None) -> dict[str, Any] | None:
        fields: dict[str, Any] = {k: v for k, v in (("name", name), ("token", token))
                                  if v is not None}
        return await client.request(t="hello", **fields)

    async def reopen_games(self, client: SimClient, welcome: dict[str, Any]) -> None:
        """After a ``welcome``: watch each unfinished game, with ``since`` where the client holds
        a version (docs/protocol.md, "Reconnection")."""
        games = list(welcome.get("games", []))
        # and the ones it watched
        games += [g for g in sorted(client.views, key=self.seq) if g not in games]
        for game in games:
            view = client.views.get(game)
            if view is not None:
                reply = await client.request(t="watch", game=game, since=view.version)
            else:
                reply = await client.request(t="watch", game=game)
            if reply is None or reply["t"] == "error":
                self.note(f"  {client.label} watch {game}: {said(reply)}")
                client.forget(game)  # it does not have it open

    async def admin(self, *argv: str) -> tuple[int, Any]:
        return await self.backend.admin(*argv)

    async def http_get(self, path: str, token: str | None, node: str | None = None) -> int:
        assert self.http is not None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        url = self.backend.http_url(node or self.node()) + path
        async with self.http.get(url, headers=headers) as reply:
            await reply.read()
            return reply.status

    async def settle(self, quiet: float = SETTLE_QUIET) -> None:
        """Wait until no client has had a frame for ``quiet`` (at most ``SETTLE_MAX``)."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(0.03)
        while loop.time() - start < SETTLE_MAX:
            latest = max((c.last_frame_at for c in self.clients), default=0.0)
            pending = any(c.catchups for c in self.clients if c.open)
            if loop.time() - latest >= quiet and not pending:
                return
            await asyncio.sleep(0.04)

    async def until(self, check: Callable[[], bool], seconds: float = LEVER_WAIT) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while loop.time() < deadline:
            if check():
                return True
            await asyncio.sleep(0.05)
        return check()

    # -- the run -------------------------------------------------------------------------------

    async def setup(self) -> None:
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        await self.backend.start()
        admin = await self.add_player("boss")
        mod = await self.add_player("marta")
        assert admin is not None and mod is not None, "the admin and moderator could not start"
        for player, role in ((admin, "admin"), (mod, "moderator")):
            code, out = await self.admin("grant", player.name, role)
            assert code == 0, out
            player.role = role
            for client in self.open_clients(player.uid):  # roles are read at hello
                await client.close()
            await self.open_session(player)
        self.admin_uid, self.mod_uid = admin.uid, mod.uid
        for _ in range(4):
            await self.add_player()

    async def teardown(self) -> None:
        await self.bots.close()
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()
        if self.http is not None:
            await self.http.close()
        await self.backend.cleanup()

    async def run(self, steps: int) -> None:
        table = [(name, weight) for name, weight in STEPS
                 if name != "restart" or self.backend.can_restart]
        names = [n for n, _ in table]
        weights = [w for _, w in table]
        for self.step in range(1, steps + 1):
            for _ in range(20):  # a step may not apply now (nobody to do it): draw again
                name = self.rng.choices(names, weights)[0]
                for client in self.clients:
                    client.step_catchup = {}
                if await getattr(self, f"step_{name}")() is not False:
                    self.counts[name] = self.counts.get(name, 0) + 1
                    break
            await self.settle()
            self.tourneys.adopt_paired()
            await self.check_streams_settled()
            if self.step % CHECKPOINT == 0:
                await self.check_store()
        await self.settle()
        await self.check_store()

    def now(self) -> float:
        """The clock the clients stamp frames with (the event loop's)."""
        return asyncio.get_running_loop().time()

    # -- tournaments (tests/simulation/tournament_steps.py) -----------------------------------

    async def step_tournament_create(self) -> bool:
        return await self.tourneys.create()

    async def step_tournament_join(self) -> bool:
        return await self.tourneys.join()

    async def step_tournament_leave(self) -> bool:
        return await self.tourneys.leave()

    async def step_tournament_look(self) -> bool:
        return await self.tourneys.look()

    # -- bots (tests/simulation/bot_steps.py) --------------------------------------------------

    async def step_bot_new(self) -> bool:
        return await self.bots.new()

    async def step_bot_reconnect(self) -> bool:
        return await self.bots.reconnect()

    async def step_bot_challenge(self) -> bool:
        return await self.bots.challenge()

    async def step_bot_tournament(self) -> bool:
        return await self.bots.tournament()

    async def step_bot_move(self) -> bool:
        return await self.bots.move()

    async def step_bot_lever(self) -> bool:
        return await self.bots.lever()

    # -- players and sessions ------------------------------------------------------------------

    async def add_player(self, name: str | None = None) -> SimPlayer | None:
        self._uids += 1
        uid = self._uids
        name = name or f"p{uid}"
        client = self.new_client(uid)
        if not await self.connect(client):
            return None
        welcome = await self.hello(client, name=name)
        if welcome is None or welcome["t"] != "welcome":
            self.note(f"new player {name} on {client.node}: {welcome and welcome.get('code')}")
            await client.close()
            client.uid = None
            return None
        player = SimPlayer(uid, welcome["name"], welcome["token"])
        self.players[uid] = player
        self.note(f"new player {name} (p{uid}) on {client.node}")
        return player

    async def open_session(self, player: SimPlayer, node: str | None = None,
                           client: SimClient | None = None) -> SimClient | None:
        """A socket of ``player`` (a new one, or ``client`` again) with their token, and their
        games reopened."""
        if player.token is None:
            return None
        client = client or self.new_client(player.uid, node)
        if not await self.connect(client, node):
            return None
        welcome = await self.hello(client, token=player.token)
        if welcome is None or welcome["t"] != "welcome":
            self.note(f"  {client.label} hello refused: {welcome and welcome.get('code')}")
            await client.close()
            return None
        await self.reopen_games(client, welcome)
        if player.role == "admin" and self.rng.random() < 0.8:
            await client.request(t="lobby_sub")
        return client

    async def step_new_player(self) -> bool:
        if len(self.living()) >= MAX_PLAYERS:
            return False
        player = await self.add_player()
        if player is not None and self.rng.random() < 0.3:
            await self.try_lookalike(player)
        return True

    async def try_lookalike(self, player: SimPlayer) -> None:
        """A newcomer asks for the name with a separator added: the same name (item 6); or a
        reserved word with something around it."""
        if self.rng.random() < 0.4:
            staff = self.pick(["Admin-Team", "Moderator2", "Computer-Level-9", "support_desk"])
            client = self.new_client(None)
            if await self.connect(client):
                reply = await self.hello(client, name=staff)
                self.note(f"newcomer asks for {staff}: {said(reply)}")
                self.checked("records.reserved_names", said(reply) == "name_reserved",
                             f"{staff}: {said(reply)}")
                await client.close()
            return
        name = player.name
        twin = self.pick([name + "_", name + "-", f"{name[0]}-{name[1:]}"])
        client = self.new_client(None)
        if not await self.connect(client):
            return
        reply = await self.hello(client, name=twin)
        taken = reply is not None and reply["t"] == "error" and reply["code"] == "name_taken"
        self.note(f"newcomer asks for {twin} beside {player.name}: "
                  f"{said(reply)}")
        self.checked("records.names_fold_separators", taken,
                     f"{twin} registered beside {player.name}")
        await client.close()

    async def step_second_device(self) -> bool:
        player = self.pick([p for p in self.living(free=False) if p.token])
        if player is None or len(self.open_clients(player.uid)) >= 3:
            return False
        client = await self.open_session(player)
        self.note(f"p{player.uid} opens another socket"
                  f"{f' {client.label} on {client.node}' if client else ': refused'}")
        return True

    async def step_reconnect(self) -> bool:
        player = self.pick(self.connected(free=False))
        if player is None:
            return False
        client = self.pick(self.open_clients(player.uid))
        abrupt = self.rng.random() < 0.5
        node = self.node()
        await client.close(abrupt=abrupt)
        await asyncio.sleep(0.05)
        again = await self.open_session(player, node, client)
        self.note(f"{client.label} {'drops' if abrupt else 'closes'} and reconnects on {node}"
                  f"{'' if again else ': refused'}")
        return True

    async def step_drop(self) -> bool:
        player = self.pick(self.connected())
        if player is None:
            return False
        client = self.pick(self.open_clients(player.uid))
        abrupt = self.rng.random() < 0.5
        await client.close(abrupt=abrupt)
        self.note(f"{client.label} {'drops its connection' if abrupt else 'closes'}")
        return True

    async def step_wake(self) -> bool:
        """A player with no socket open comes back."""
        player = self.pick([p for p in self.living() if p.token and not self.open_clients(p.uid)])
        if player is None:
            return False
        client = await self.open_session(player)
        self.note(f"p{player.uid} comes back{f' as {client.label}' if client else ': refused'}")
        return True

    # -- starting games ------------------------------------------------------------------------

    def ready(self) -> list[SimPlayer]:
        """Connected players who may start another game (fewer than ``MAX_GAMES_EACH``)."""
        return [p for p in self.connected() if len(self.active_games(p.uid)) < MAX_GAMES_EACH]

    def two_players(self) -> tuple[SimPlayer, SimPlayer] | None:
        ready = self.ready()
        if len(ready) < 2:
            return None
        a = self.pick(ready)
        b = self.pick([p for p in ready if p is not a])
        return a, b

    async def started(self, reply: dict[str, Any] | None, x_side: str, a: SimPlayer,
                      b: SimPlayer | None, how: str, private: bool = False) -> None:
        if reply is None or reply["t"] != "game":
            self.note(f"{how}: no game ({said(reply)})")
            return
        seats = reply["seats"]
        uid = {a.name: a.uid} | ({b.name: b.uid} if b else {})
        game = SimGame(reply["id"], reply["variant"], uid.get(seats[0]["name"]),
                       uid.get(seats[1]["name"]), private, len(self.games))
        self.games[game.id] = game
        self.note(f"{how}: game {game.id} {game.variant} x={seats[0]['name']} "
                  f"o={seats[1]['name']}")
        del x_side

    async def step_private_game(self) -> bool:
        pair = self.two_players()
        if pair is None:
            return False
        a, b = pair
        host = self.pick(self.open_clients(a.uid))
        guest = self.pick(self.open_clients(b.uid))
        variant = self.pick(list(VARIANTS))
        created = await host.request(t="private_create", variant=variant,
                                     colour=self.pick(["x", "o"]))
        if created is None or created["t"] != "private":
            self.note(f"p{a.uid} private_create: {said(created)}")
            return True
        code = created["code"]
        if self.rng.random() < 0.5:
            code = code.lower().replace("-", "")
        joined = await guest.request(t="private_join", code=code)
        await self.started(joined, "", a, b, f"p{b.uid} joins p{a.uid}'s private room "
                           f"({host.node}->{guest.node})", private=True)
        if joined is None or joined["t"] != "game":
            await host.request(t="private_cancel")
        return True

    async def step_challenge(self) -> bool:
        pair = self.two_players()
        if pair is None:
            return False
        a, b = pair
        client = self.pick(self.open_clients(a.uid))
        sent = await client.request(t="challenge", name=b.name, variant=self.pick(list(VARIANTS)),
                                    rated=self.rng.random() < 0.5, colour=self.pick(["x", "o"]))
        if sent is None or sent["t"] != "challenge_sent":
            self.note(f"p{a.uid} challenges p{b.uid}: {said(sent)}")
            return True
        challenge = sent["challenge"]["id"]
        answerer = self.pick(self.open_clients(b.uid))
        if answerer is None:
            return True
        await self.until(lambda: any(m.get("t") == "challenge" and
                                     m["challenge"]["id"] == challenge
                                     for m in answerer.received), 2.0)
        if self.rng.random() < 0.2:
            reply = await answerer.request(t="challenge_decline", challenge=challenge)
            self.note(f"p{b.uid} declines p{a.uid}'s challenge: {reply and reply['t']}")
            return True
        reply = await answerer.request(t="challenge_accept", challenge=challenge)
        await self.started(reply, "", a, b, f"p{b.uid} accepts p{a.uid}'s challenge")
        return True

    async def step_seek(self) -> bool:
        pair = self.two_players()
        if pair is None:
            return False
        a, b = pair
        seeker = self.pick(self.open_clients(a.uid))
        taker = self.pick(self.open_clients(b.uid))
        posted = await seeker.request(t="seek", variant=self.pick(list(VARIANTS)),
                                      colour=self.pick(["x", "o"]))
        if posted is None or posted["t"] != "seeking":
            self.note(f"p{a.uid} seeks: {said(posted)}")
            return True
        reply = await taker.request(t="accept_seek", seek=posted["seek"]["id"])
        await self.started(reply, "", a, b, f"p{b.uid} accepts p{a.uid}'s seek")
        if reply is None or reply["t"] != "game":
            await seeker.request(t="cancel_seek", seek=posted["seek"]["id"])
        return True

    async def step_quick_pair(self) -> bool:
        pair = self.two_players()
        if pair is None:
            return False
        a, b = pair
        ca, cb = self.pick(self.open_clients(a.uid)), self.pick(self.open_clients(b.uid))
        starts = (len(ca.received), len(cb.received))
        for client in (ca, cb):
            await client.request(t="quick", variant="4x4")

        def paired() -> dict[str, Any] | None:
            for m in ca.received[starts[0]:]:
                if m["t"] == "game" and m.get("ref") is None:
                    return m
            return None

        await self.until(lambda: paired() is not None, 3.0)
        game = paired()
        if game is None:
            for client in (ca, cb):
                await client.request(t="cancel_quick")
        await self.started(game, "", a, b, f"p{a.uid} and p{b.uid} quick-pair")
        return True

    async def step_play_ai(self) -> bool:
        player = self.pick(self.ready())
        if player is None:
            return False
        client = self.pick(self.open_clients(player.uid))
        reply = await client.request(t="play_ai", level=1, variant="4x4",
                                     colour=self.pick(["x", "o"]))
        await self.started(reply, "", player, None, f"p{player.uid} plays the computer")
        return True

    # -- playing -------------------------------------------------------------------------------

    def turn(self, *, want_view: bool = True) -> tuple[SimGame, SimClient] | None:
        """A game going on and a socket of the player whose turn it is, that has it open."""
        options = []
        for game in sorted(self.active_games(), key=lambda g: g.seq):
            for client in self.clients:
                view = client.views.get(game.id)
                if (not client.open or view is None or view.status != "playing"
                        or client.catchups or client.uid is None):
                    continue
                uid = game.x if view.to_move() == "x" else game.o
                if uid == client.uid and not self.players[uid].banned:
                    options.append((game, client))
        return self.pick(options) if want_view else None

    async def step_move(self) -> bool:
        chosen = self.turn()
        if chosen is None:
            return False
        game, client = chosen
        view = client.views[game.id]
        board = Board(view.variant, view.moves)
        legal = board.legal_moves
        if not legal:
            return False
        cell = self.pick(legal)
        ply = view.ply
        reply = await client.request(t="move", game=game.id, cell=cell, ply=ply)
        outcome = said(reply)
        self.note(f"{client.label} moves {cell} at ply {ply} in {game.id}: {outcome}")
        if reply is not None and reply["t"] == "ack":
            self.acked[(game.id, ply + 1)] = cell
        self.checked("moves.legal_move_acked", said(reply) == "ack",
                     f"{client.label} move {cell} at ply {ply} in {game.id}: {reply}")
        return True

    async def step_illegal_move(self) -> bool:
        chosen = self.turn()
        if chosen is None:
            return False
        game, client = chosen
        view = client.views[game.id]
        kind = self.pick(["occupied", "stale", "turn", "cell", "spectator"])
        message: dict[str, Any] = {"t": "move", "game": game.id, "ply": view.ply}
        sender, expected = client, kind
        if kind == "occupied":
            if not view.moves:
                return False
            message["cell"] = self.pick(view.moves)
        elif kind == "stale":
            message["cell"] = self.pick(Board(view.variant, view.moves).legal_moves)
            message["ply"] = view.ply + self.pick([-1, 1, 5] if view.ply else [2, 1, 5])
            expected = "stale_move"
        elif kind == "turn":
            other = game.o if view.to_move() == "x" else game.x
            others = self.open_clients(other) if other is not None else []
            others = [c for c in others if game.id in c.views]
            if not others:
                return False
            sender = self.pick(others)
            message["cell"] = self.pick(Board(view.variant, view.moves).legal_moves)
            expected = "not_your_turn"
        elif kind == "cell":
            message["cell"] = self.pick(["9z9", "5a1", 999, "zz"])
            expected = "bad_cell"
        else:
            watchers = [c for c in self.clients if c.open and c.uid is not None
                        and game.seat_of(c.uid) is None and c.token]
            if not watchers:
                return False
            sender = self.pick(watchers)
            message["cell"] = self.pick(Board(view.variant, view.moves).legal_moves)
            # a spectator is a player, not a socket: one watching on another socket is one
            watching = [c for c in self.clients if c.open and c.uid is not None
                        and c.uid == sender.uid and game.id in c.views]
            expected = "spectator" if game.id in sender.views or watching else "not_seated"
        reply = await sender.request(**message)
        got = said(reply)
        self.note(f"{sender.label} illegal move ({kind}) {message.get('cell')!r} ply "
                  f"{message['ply']} in {game.id}: {got}")
        if reply is not None and kind == "occupied" and got == "occupied":
            pass
        self.checked("refusals.expected_code", got == expected,
                     f"{sender.label} move ({kind}) in {game.id} got {got}, not {expected}")
        return True

    def seated_client(self, game: SimGame) -> SimClient | None:
        options = [c for c in self.clients if c.open and c.uid is not None
                   and game.seat_of(c.uid) is not None and game.id in c.views
                   and not self.players[c.uid].banned]
        return self.pick(options)

    async def chat(self, client: SimClient, game: SimGame, text: str) -> dict[str, Any] | None:
        text = f"{text} ({self.step})"
        starts = {id(c): len(c.received) for c in self.clients}
        reply = await client.request(t="chat", game=game.id, text=text)
        if said(reply) == "ack":
            await self.settle()
            self.check_audience(client, game, text, starts)
        got = said(reply)
        player = self.players.get(client.uid or -1)
        expected = "muted" if player is not None and player.muted else "ack"
        self.note(f"{client.label} says {text!r} in {game.id}: {got}")
        self.checked("levers.mute_holds" if expected == "muted" else "refusals.expected_code",
                     got == expected, f"{client.label} chat in {game.id}: {got}, not {expected}")
        return reply

    def check_audience(self, speaker: SimClient, game: SimGame, text: str,
                       starts: dict[int, int]) -> None:
        """A players' line reaches the players and not the spectators; a spectators' line the
        spectators and not the players; moderators and admins watching get both."""
        players_line = speaker.uid is not None and game.seat_of(speaker.uid) is not None
        for client in self.clients:
            if not client.open or game.id not in client.views or client.uid is None:
                continue
            if id(client) not in starts or client.catchups or client.open_gaps():
                continue
            got = any(m["t"] == "chat" and m.get("text") == text and m.get("game") == game.id
                      for m in client.received[starts[id(client)]:])
            seated = game.seat_of(client.uid) is not None
            staff = self.players[client.uid].role is not None and not seated
            should = staff or seated == players_line
            self.checked("chat.audiences", got == should,
                         f"{'players' if players_line else 'spectators'}' line {text!r} in "
                         f"{game.id} by {speaker.label} {'reached' if got else 'missed'} "
                         f"{client.label} on {client.node} "
                         f"({'seated' if seated else 'staff' if staff else 'spectator'})")

    async def step_chat_players(self) -> bool:
        game = self.pick(sorted(self.games.values(), key=lambda g: g.seq))
        client = game and self.seated_client(game)
        if client is None:
            return False
        await self.chat(client, game, self.pick(["hi", "good luck", "gg", "nice move"]))
        return True

    async def step_chat_spectators(self) -> bool:
        options = [(g, c) for g in sorted(self.games.values(), key=lambda g: g.seq)
                   for c in self.clients if c.open and c.uid is not None and g.id in c.views
                   and g.seat_of(c.uid) is None and not self.players[c.uid].banned]
        chosen = self.pick(options)
        if chosen is None:
            return False
        await self.chat(chosen[1], chosen[0], self.pick(["wow", "nice fork", "X wins this"]))
        return True

    async def step_watch(self) -> bool:
        games = sorted(self.games.values(), key=lambda g: g.seq)[-8:]
        game = self.pick(games)
        clients = [c for c in self.clients if c.open and c.token and game is not None
                   and game.id not in c.views]
        client = self.pick(clients)
        if client is None:
            return False
        reply = await client.request(t="watch", game=game.id)
        self.note(f"{client.label} watches {game.id}: {said(reply)}")
        return True

    async def step_unwatch(self) -> bool:
        options = [(c, g) for c in self.clients if c.open for g in sorted(c.views, key=self.seq)
                   if g in self.games and c.uid is not None
                   and self.games[g].seat_of(c.uid) is None]
        chosen = self.pick(options)
        if chosen is None:
            return False
        client, game = chosen
        reply = await client.request(t="unwatch", game=game)
        client.forget(game)
        self.note(f"{client.label} unwatches {game}: {said(reply)}")
        return True

    async def step_resign(self) -> bool:
        game = self.pick(sorted(self.active_games(), key=lambda g: g.seq))
        client = game and self.seated_client(game)
        if client is None:
            return False
        kind = self.pick(["resign", "resign", "abort", "draw_offer"])
        reply = await client.request(t=kind, game=game.id)
        got = said(reply)
        self.note(f"{client.label} {kind} in {game.id}: {got}")
        if kind == "draw_offer" and got == "ack":
            other = game.o if game.seat_of(client.uid or -1) == "x" else game.x
            answer = self.pick([c for c in self.open_clients(other or -1) if game.id in c.views])
            if answer is not None:
                await asyncio.sleep(0.1)
                reply = await answer.request(t=self.pick(["draw_accept", "draw_decline"]),
                                             game=game.id)
                self.note(f"  {answer.label} answers: {said(reply)}")
        return True

    async def step_rematch(self) -> bool:
        """Both players of a finished game ask for a rematch: a new game, colours swapped."""
        options = []
        for game in sorted(self.games.values(), key=lambda g: g.seq):
            if game.x is None or game.o is None or game.rematched:
                continue
            xs = [c for c in self.open_clients(game.x) if game.id in c.views
                  and c.views[game.id].status == "over"]
            os_ = [c for c in self.open_clients(game.o) if game.id in c.views
                   and c.views[game.id].status == "over"]
            if xs and os_ and not self.players[game.x].banned and not self.players[game.o].banned:
                options.append((game, xs, os_))
        chosen = self.pick(options)
        if chosen is None:
            return False
        game, xs, os_ = chosen
        a, b = self.pick(xs), self.pick(os_)
        game.rematched = True
        start = len(a.received)
        first = await a.request(t="rematch", game=game.id)
        second = await b.request(t="rematch", game=game.id)
        self.note(f"{a.label} and {b.label} ask for a rematch of {game.id}: {said(first)}, "
                  f"{said(second)}")

        def new_game() -> dict[str, Any] | None:
            return next((m for m in a.received[start:] if m["t"] == "game"
                         and m["id"] != game.id and m["id"] not in self.games), None)

        await self.until(lambda: new_game() is not None, 3.0)
        started = new_game()
        if started is not None:
            pa, pb = self.players[game.x], self.players[game.o]
            await self.started(started, "", pa, pb, f"rematch of {game.id}")
            self.checked("refusals.expected_code",
                         started["seats"][0]["name"] == pb.name, "a rematch keeps the colours: "
                         f"{started['seats'][0]['name']} is x again")
        return True

    async def step_claim(self) -> bool:
        """A player claims a game whose opponent is away (the grace is 3 s here)."""
        options = []
        for game in self.active_games():
            for client in self.clients:
                view = client.views.get(game.id)
                if (client.open and view is not None and view.status == "playing"
                        and client.uid is not None and view.you is not None
                        and not client.catchups):
                    other = "o" if view.you == "x" else "x"
                    if view.online.get(other) is False:
                        options.append((game, client, other))
        chosen = self.pick(options)
        if chosen is None:
            return False
        game, client, other = chosen
        uid = game.o if other == "o" else game.x
        there = uid is None or any(c.open and game.id in c.views for c in self.clients
                                   if c.uid == uid and c.token)
        reply = await client.request(t="claim", game=game.id)
        self.note(f"{client.label} claims {game.id} ({other} away): {said(reply)}")
        self.checked("presence.claim_agrees",
                     said(reply) != ("ack" if there else "opponent_present"),
                     f"{client.label} claim in {game.id}: {said(reply)}, while the "
                     f"{other} player {'has it open' if there else 'is away'}")
        return True

    async def step_takeback(self) -> bool:
        """A player takes back a move against the computer."""
        options = [(g, c) for g in self.active_games() if (g.x is None) != (g.o is None)
                   for c in self.clients if c.open and g.id in c.views and c.uid is not None
                   and g.seat_of(c.uid) is not None and c.views[g.id].ply >= 2]
        chosen = self.pick(options)
        if chosen is None:
            return False
        game, client = chosen
        reply = await client.request(t="takeback", game=game.id)
        view = client.views[game.id]
        self.note(f"{client.label} takes back in {game.id}: {said(reply)} (now at ply {view.ply})")
        if said(reply) == "ack":
            for key in [k for k in self.acked if k[0] == game.id and k[1] > view.ply]:
                del self.acked[key]
        return True

    # -- accounts ------------------------------------------------------------------------------

    def password(self) -> str:
        return "".join(self.rng.choice(string.ascii_letters) for _ in range(12))

    async def step_set_password(self) -> bool:
        player = self.pick([p for p in self.connected() if p.password is None])
        if player is None:
            return False
        client = self.pick(self.open_clients(player.uid))
        if self.rng.random() < 0.2:
            blank = self.pick(["\u3164" * 8, "\u2800" * 10, "\u200b" * 9])
            reply = await client.request(t="set_password", password=blank)
            self.note(f"{client.label} sets an invisible password: {said(reply)}")
            self.checked("refusals.invisible_password", said(reply) == "bad_password",
                         f"a password of invisible characters: {said(reply)}")
            if said(reply) == "password_set":
                player.password, player.codes = blank, list(reply["recovery_codes"])
            return True
        password = self.password()
        if self.rng.random() < 0.3:
            password = "caf\u00e9 " + password  # NFC; the login may type it NFD
        reply = await client.request(t="set_password", password=password)
        self.note(f"{client.label} sets a password: {said(reply)}")
        if reply is not None and reply["t"] == "password_set":
            player.password, player.codes = password, list(reply["recovery_codes"])
        return True

    async def step_login(self) -> bool:
        player = self.pick([p for p in self.living() if p.password is not None])
        if player is None or len(self.open_clients(player.uid)) >= 3:
            return False
        client = self.new_client(player.uid)
        if not await self.connect(client):
            return True
        typed = player.password
        if typed is not None and "\u00e9" in typed and self.rng.random() < 0.5:
            typed = unicodedata.normalize("NFD", typed)
        reply = await client.request(t="login", name=player.name, password=typed,
                                     device=f"sim{client.label}")
        if typed != player.password:
            self.checked("accounts.password_normalised", said(reply) != "bad_credentials",
                         f"{player.name}'s password typed NFD: {said(reply)}")
        self.note(f"{client.label} logs in as {player.name} on {client.node}: "
                  f"{said(reply)}")
        if reply is not None and reply["t"] == "welcome":
            await self.reopen_games(client, reply)
        else:
            await client.close()
        return True

    async def revocation(self, player: SimPlayer, keep: SimClient | None, how: str,
                         act: Callable[[], Awaitable[Any]]) -> None:
        """``act`` logs out every device of ``player`` but ``keep``'s: the others' sockets must
        close with 4001 within a second, their tokens open nothing, and a socket left open
        must answer no account request."""
        gone = [c for c in self.open_clients(player.uid) if c is not keep
                and (keep is None or c.token != keep.token)]
        for client in gone:
            client.expected_close = frozenset({4001, 1008})
        outcome = await act()
        self.note(f"{how}: {outcome}")
        closed = await self.until(lambda: all(not c.open for c in gone))
        for client in gone:
            self.checked("levers.revoke_closes_sockets", client.close_code == 4001,
                         f"{how}: {client.label} on {client.node} "
                         f"{'still open' if client.open else f'closed {client.close_code}'}")
            if client.open:
                reply = await client.request(t="sessions", timeout=3)
                self.checked("levers.revoked_socket_grants_nothing",
                             reply is None or reply["t"] != "devices",
                             f"{how}: {client.label} still lists the devices: "
                             f"{len(reply['devices']) if reply else 0} of them")
                await client.close()
        del closed
        old = {c.token for c in gone if c.token}
        for token in sorted(old):
            player.revoked_tokens.append(token)
            probe = self.new_client(None)
            if await self.connect(probe):
                reply = await self.hello(probe, token=token)
                got = said(reply)
                self.checked("levers.revoked_token_refused", got == "token_revoked",
                             f"{how}: hello with the old token: {got}")
                status = await self.http_get("/api/puzzles/history", token)
                self.checked("levers.revoked_token_refused", status == 401,
                             f"{how}: /api/puzzles/history with the old token: {status}")
                await probe.close()

    async def step_change_password(self) -> bool:
        player = self.pick([p for p in self.connected() if p.password is not None])
        if player is None:
            return False
        keep = self.pick(self.open_clients(player.uid))
        new = self.password()

        async def act() -> Any:
            reply = await keep.request(t="set_password", password=new, current=player.password)
            if reply is not None and reply["t"] == "password_set":
                player.password, player.codes = new, list(reply["recovery_codes"])
                player.token = keep.token
            return reply and (reply.get("code") or f"{reply['t']} revoked={reply.get('revoked')}")

        await self.revocation(player, keep, f"{keep.label} changes the password", act)
        return True

    async def step_revoke_others(self) -> bool:
        player = self.pick([p for p in self.connected() if len(self.open_clients(p.uid)) > 1])
        if player is None:
            return False
        keep = self.pick(self.open_clients(player.uid))

        async def act() -> Any:
            reply = await keep.request(t="revoke", others=True)
            if reply is not None and reply["t"] == "devices":
                player.token = keep.token
            return reply and (reply.get("code") or f"{reply['t']} revoked={reply.get('revoked')}")

        await self.revocation(player, keep, f"{keep.label} revokes its other devices", act)
        return True

    async def step_reset_password(self) -> bool:
        player = self.pick([p for p in self.living() if p.password is not None])
        if player is None:
            return False
        out: dict[str, Any] = {}

        async def act() -> Any:
            code, printed = await self.admin("reset-password", player.name)
            if code == 0 and isinstance(printed, dict):
                out.update(printed)
                player.password = printed["password"]
                player.codes = []
            return f"exit {code}"

        # every device goes: the ones open now, and the token the world keeps
        keep_token = player.token
        await self.revocation(player, None, f"host resets {player.name}'s password", act)
        if keep_token and keep_token not in player.revoked_tokens:
            player.revoked_tokens.append(keep_token)
        player.token = None
        if out:
            await self.login_again(player)
        return True

    async def login_again(self, player: SimPlayer) -> SimClient | None:
        client = self.new_client(player.uid)
        if not await self.connect(client):
            return None
        reply = await client.request(t="login", name=player.name, password=player.password)
        self.note(f"  {client.label} logs in again: {said(reply)}")
        if reply is not None and reply["t"] == "welcome":
            player.token = reply["token"]
            await self.reopen_games(client, reply)
            return client
        await client.close()
        return None

    # -- levers --------------------------------------------------------------------------------

    def target(self, *, banned: bool | None = False) -> SimPlayer | None:
        options = [p for p in self.players.values() if not p.deleted and p.role is None
                   and not p.bot and (banned is None or p.banned == banned)]
        return self.pick(options)

    async def moderator(self) -> SimClient | None:
        """A socket of the moderator's: one open, else a new one."""
        client = self.pick(self.open_clients(self.mod_uid))
        return client or await self.open_session(self.players[self.mod_uid])

    async def lever(self, *argv: str, moderator: bool) -> str:
        """Pull a lever: as the host (``qubic admin``) or as the moderator (a request)."""
        if moderator:
            client = await self.moderator()
            if client is not None:
                kind, name = argv[0], argv[1]
                fields: dict[str, Any] = {"t": kind, "name": name, "reason": "sim"}
                if kind in ("ban", "mute") and self.rng.random() < 0.5:
                    fields["minutes"] = 60
                reply = await client.request(**fields)
                got = said(reply)
                self.checked("refusals.expected_code", got == "ack",
                             f"moderator {kind} {name}: {got}")
                return f"moderator {kind} {name}: {got}"
        code, out = await self.admin(*argv, "--reason", "sim")
        return f"host {' '.join(argv)}: exit {code}" + (f" {out}" if code else "")

    async def step_ban(self) -> bool:
        if self.rng.random() < 0.15:
            return await self.ban_the_admin()
        protected = [p for p in self.living() if p.password is not None]
        player = self.pick(protected) if protected and self.rng.random() < 0.5 else self.target()
        if player is None:
            return False
        sockets = self.open_clients(player.uid)
        for client in sockets:
            client.expected_close = frozenset({1008})
        starts = {c.label: len(c.errors) for c in sockets}
        how = await self.lever("ban", player.name, moderator=self.rng.random() < 0.5)
        player.banned = True
        self.tourneys.left(player.uid, self.now())
        self.note(how)
        await self.until(lambda: all(not c.open for c in sockets))
        for client in sockets:
            told = client.codes_since(starts[client.label])
            self.checked("levers.ban_closes_sockets",
                         client.close_code == 1008 and "banned" in told,
                         f"ban {player.name}: {client.label} on {client.node} "
                         f"{'still open' if client.open else f'closed {client.close_code}'} "
                         f"told {told}")
            await client.close()
        await self.probe_banned(player)
        return True

    async def ban_the_admin(self) -> bool:
        """The host bans the admin for a moment: the admin's token must not read the audit log
        (item 3), then the ban is lifted and the admin comes back."""
        admin = self.players[self.admin_uid]
        sockets = self.open_clients(admin.uid)
        for client in sockets:
            client.expected_close = frozenset({1008})
        code, _ = await self.admin("ban", admin.name, "--reason", "sim")
        self.note(f"host bans the admin {admin.name}: exit {code}")
        await self.until(lambda: all(not c.open for c in sockets))
        status = await self.http_get("/api/admin/audit", admin.token)
        self.checked("levers.ban_reaches_http", status in (401, 403),
                     f"GET /api/admin/audit with banned admin {admin.name}'s token: {status}")
        for client in sockets:
            self.checked("levers.ban_closes_sockets", client.close_code == 1008,
                         f"ban {admin.name}: {client.label} "
                         f"{'still open' if client.open else f'closed {client.close_code}'}")
            await client.close()
        code, _ = await self.admin("unban", admin.name)
        self.note(f"host unbans the admin: exit {code}")
        await self.open_session(admin)
        return True

    async def probe_banned(self, player: SimPlayer) -> None:
        """What a banned player's credentials still open (nothing)."""
        probe = self.new_client(None)
        if not await self.connect(probe):
            return
        reply = await self.hello(probe, token=player.token) if player.token else None
        if reply is not None:
            got = reply.get("code") or reply["t"]
            self.checked("levers.ban_refuses_hello", got == "banned",
                         f"hello of banned {player.name} with the token: {got}")
            self.checked("refusals.stays_open", probe.open, "a refused hello closed the socket")
        if player.token:
            for path in ("/api/puzzles/history", "/api/puzzles/next"):
                status = await self.http_get(path, player.token)
                self.checked("levers.ban_reaches_http", status in (401, 403),
                             f"GET {path} with banned {player.name}'s token: {status}")
        if player.password is not None:
            await probe.close()
            answers = []
            for password in (player.password, player.password + "x"):
                probe = self.new_client(None)
                if not await self.connect(probe):
                    return
                reply = await probe.request(t="login", name=player.name, password=password)
                answers.append(said(reply))
                await probe.close()
            self.checked("levers.banned_login_oracle",
                         answers[0] == answers[1] and answers[0] != "welcome",
                         f"banned {player.name}'s login: right password {answers[0]}, "
                         f"wrong {answers[1]}")
        if player.codes:
            await self.banned_recovers(player)
        await probe.close()

    async def banned_recovers(self, player: SimPlayer) -> None:
        """A banned player tries a recovery code: it must open nothing and change nothing (the
        code unspent, the password and the devices as they were)."""
        probe = self.new_client(None)
        if not await self.connect(probe):
            return
        new = self.password()
        probe.expected_close = frozenset({1008})
        reply = await probe.request(t="recover", name=player.name, recovery_code=player.codes[0],
                                    password=new)
        await probe.close()
        probe = self.new_client(None)
        if not await self.connect(probe):
            return
        again = await self.hello(probe, token=player.token) if player.token else None
        await probe.close()
        probe = self.new_client(None)
        if not await self.connect(probe):
            return
        login = await probe.request(t="login", name=player.name, password=player.password)
        await probe.close()
        changed = said(again) == "token_revoked" or said(login) == "bad_credentials"
        self.note(f"  banned {player.name} recovers: {said(reply)}; then the token: "
                  f"{said(again)}, the old password: {said(login)}")
        self.checked("levers.banned_recover", said(reply) != "welcome" and not changed,
                     f"banned {player.name}'s recovery code: {said(reply)}, and after it the "
                     f"token says {said(again)}, the old password {said(login)}")
        if changed or said(reply) == "welcome":  # the world follows what the server did
            player.codes.pop(0)
            player.password = new
            player.revoked_tokens += [player.token] if player.token else []
            player.token = None

    async def step_unban(self) -> bool:
        player = self.target(banned=True)
        if player is None:
            return False
        how = await self.lever("unban", player.name, moderator=self.rng.random() < 0.5)
        self.note(how)
        await asyncio.sleep(0.3)
        player.banned = False
        if player.token is None and player.password is not None:
            client = await self.login_again(player)
        else:
            client = await self.open_session(player)
        self.checked("levers.unban_admits", client is not None,
                     f"unbanned {player.name} cannot open a session")
        return True

    async def step_kick(self) -> bool:
        player = self.pick(self.connected())
        if player is None:
            return False
        sockets = self.open_clients(player.uid)
        for client in sockets:
            client.expected_close = frozenset({1008})
        starts = {c.label: len(c.errors) for c in sockets}
        self.note(await self.lever("kick", player.name, moderator=self.rng.random() < 0.5))
        await self.until(lambda: all(not c.open for c in sockets))
        for client in sockets:
            told = client.codes_since(starts[client.label])
            self.checked("levers.kick_closes_sockets",
                         client.close_code == 1008 and "kicked" in told,
                         f"kick {player.name}: {client.label} on {client.node} "
                         f"{'still open' if client.open else f'closed {client.close_code}'} "
                         f"told {told}")
            await client.close()
        if self.rng.random() < 0.7:
            await self.open_session(player, client=self.pick(sockets))
        return True

    async def step_mute(self) -> bool:
        player = self.target()
        if player is None:
            return False
        unmute = player.muted
        kind = "unmute" if unmute else "mute"
        self.note(await self.lever(kind, player.name, moderator=self.rng.random() < 0.5))
        player.muted = not unmute
        await asyncio.sleep(LEVER_WAIT)
        for client in self.open_clients(player.uid):
            game = self.pick(sorted((g for g in client.views if g in self.games), key=self.seq))
            if game is not None:
                reply = await client.request(t="chat", game=game, text="am I heard?")
                got = said(reply)
                self.note(f"  {client.label} says something in {game}: {got}")
                checker = "levers.unmute_holds" if unmute else "levers.mute_holds"
                self.checked(checker, got == ("ack" if unmute else "muted"),
                             f"{kind} {player.name}: {client.label} on {client.node} chat: {got}")
        return True

    async def end_games_of(self, player: SimPlayer) -> None:
        """The host ends the player's games going on (``end-game``), as rename and delete ask;
        their players must see the end."""
        for game in sorted(self.active_games(player.uid), key=lambda g: g.seq):
            result = self.pick(["abort", "x", "o", "draw"])
            code, out = await self.admin("end-game", game.id, "--result", result,
                                         "--reason", "sim")
            self.note(f"host ends {game.id} ({result}): exit {code}"
                      + (f" ({out})" if code else ""))
            if code != 0:
                continue
            self.ended.add(game.id)
            watchers = [c for c in self.clients if c.open and game.id in c.views]

            def ended(game: str = game.id, watchers: list[SimClient] = watchers) -> bool:
                return all(c.views[game].status == "over" for c in watchers
                           if game in c.views and c.open)

            await self.until(ended, 3.0)
            for client in watchers:
                view = client.views.get(game.id)
                if client.open and view is not None:
                    self.checked("levers.end_game_holds", view.status == "over",
                                 f"end-game {game.id}: {client.label} on {client.node} still "
                                 f"sees it {view.status}")

    async def step_rename(self) -> bool:
        player = self.target()
        if player is None:
            return False
        if self.rng.random() < 0.7:
            await self.end_games_of(player)
        new = f"r{player.uid}n{self.step}"
        sockets = self.open_clients(player.uid)
        for client in sockets:
            client.expected_close = frozenset({1008})
        code, out = await self.admin("rename", player.name, new, "--reason", "sim")
        self.note(f"host renames {player.name} to {new}: exit {code}"
                  + (f" ({out})" if code else ""))
        if code != 0:
            for client in sockets:
                client.expected_close = frozenset()
            return True
        old = player.name
        player.former_names.append(old)
        player.name = new
        player.renamed_at = self.now()
        early = None
        if self.rng.random() < 0.5:  # a newcomer takes the old name at once, before the kick
            early = self.new_client(None)
            if await self.connect(early):
                self.note(f"  a newcomer asks for {old} at once: "
                          f"{said(await self.hello(early, name=old))}")
                early.expected_close = frozenset({1008})  # judged below, by its own checker
        await self.until(lambda: all(not c.open for c in sockets))
        if early is not None and early.token is not None:
            await asyncio.sleep(LEVER_WAIT)
            self.checked("records.levers_by_player", early.open,
                         f"the newcomer {old} was closed {early.close_code} "
                         f"({early.codes_since(0)}) by {old}'s rename")
        for client in sockets:
            self.checked("levers.rename_holds", client.close_code == 1008,
                         f"rename {old}: {client.label} "
                         f"{'still open' if client.open else f'closed {client.close_code}'}")
            await client.close()
        if player.token and not player.banned:
            client = self.new_client(player.uid)
            if await self.connect(client):
                welcome = await self.hello(client, token=player.token)
                self.checked("levers.rename_holds",
                             welcome is not None and welcome.get("name") == new,
                             f"rename {old}: the token opens {welcome}")
                if welcome is not None and welcome["t"] == "welcome":
                    await self.reopen_games(client, welcome)
        await self.newcomer_takes(old, player, "records.renamed_name_clean", early)
        return True

    async def newcomer_takes(self, name: str, former: SimPlayer, checker: str,
                             early: SimClient | None = None) -> None:
        """A newcomer asks for ``name``, which ``former``'s records carried (or ``early`` took
        it already): if it is given, it must own nothing of theirs."""
        if early is not None and early.token is not None and early.open:
            probe = early
            welcome: dict[str, Any] | None = next(
                m for m in probe.received if m["t"] == "welcome")
        elif early is not None and early.token is not None:  # taken, then closed
            await early.close()
            self._uids += 1
            self.players[self._uids] = SimPlayer(self._uids, name, early.token)
            early.uid = self._uids
            self.note(f"  the newcomer is p{self._uids}")
            return
        else:
            if early is not None:
                await early.close()
            probe = self.new_client(None)
            if not await self.connect(probe):
                return
            welcome = await self.hello(probe, name=name)
            self.note(f"  a newcomer asks for the name {name}: {said(welcome)}")
        if welcome is not None and welcome["t"] == "welcome" and former.muted:
            game = self.pick(sorted(self.games.values(), key=lambda g: g.seq))
            if game is not None:
                await probe.request(t="watch", game=game.id)
                reply = await probe.request(t="chat", game=game.id, text="hello, I am new")
                self.note(f"  the newcomer says hello in {game.id}: {said(reply)}")
                self.checked("records.sanctions_by_player", said(reply) == "ack",
                             f"newcomer {name} speaks under {former.name}'s mute: "
                             f"{said(reply)}")
        if welcome is not None and welcome["t"] == "welcome":
            page = await probe.request(t="player_games", name=name)
            games = [g["id"] for g in (page or {}).get("games", [])]
            theirs = [g for g in games if g in self.games
                      and former.uid in (self.games[g].x, self.games[g].o)]
            self.checked(checker, not theirs and welcome.get("rating") == 1500,
                         f"newcomer {name} holds {former.name}'s games {theirs} "
                         f"(rating {welcome.get('rating')})")
            self._uids += 1
            self.players[self._uids] = SimPlayer(self._uids, welcome["name"], welcome["token"])
            probe.uid = self._uids
            self._labels[self._uids] = 1
            self.note(f"  the newcomer is p{self._uids}")
            await probe.close()
        else:
            await probe.close()

    async def step_delete_player(self) -> bool:
        player = self.target(banned=None)
        if player is None:
            return False
        if self.rng.random() < 0.8:
            await self.end_games_of(player)
        sockets = self.open_clients(player.uid)
        for client in sockets:
            client.expected_close = frozenset({1008})
        code, out = await self.admin("delete-player", player.name, "--reason", "sim")
        self.note(f"host deletes {player.name}: exit {code}" + (f" ({out})" if code else ""))
        if code != 0:
            for client in sockets:
                client.expected_close = frozenset()
            return True
        player.deleted = True
        player.renamed_at = self.now()  # the records' name is deleted-<id> from now on
        self.tourneys.left(player.uid, self.now())
        await self.until(lambda: all(not c.open for c in sockets))
        for client in sockets:
            self.checked("levers.delete_holds", not client.open,
                         f"delete {player.name}: {client.label} still open")
            await client.close()
        if player.token:
            probe = self.new_client(None)
            if await self.connect(probe):
                reply = await self.hello(probe, token=player.token)
                self.checked("levers.delete_holds", reply is not None and reply["t"] == "error",
                             f"delete {player.name}: the token opens {reply}")
                await probe.close()
        theirs = [g for g in self.games.values() if player.uid in (g.x, g.o)]
        records = await self.backend.games([g.id for g in theirs])
        names = set()
        for game in theirs:
            record = records.get(game.id)
            if record is not None:
                seat = record.x if game.x == player.uid else record.o
                if seat.player:
                    names.add(seat.player)
        for name in sorted(names - {player.name}):  # the tombstone's ``deleted-<id>``
            await self.tombstone_refused(name, player)
        # The name they had is free again: whoever takes it next owns none of their games.
        await self.newcomer_takes(player.name, player, "records.deleted_name_clean")
        return True

    async def tombstone_refused(self, name: str, former: SimPlayer) -> None:
        """A deleted player's records show ``name``: nobody may log in or register as it."""
        probe = self.new_client(None)
        if not await self.connect(probe):
            return
        welcome = await self.hello(probe, name=name)
        self.note(f"  a newcomer asks for {former.name}'s tombstone {name}: {said(welcome)}")
        self.checked("records.deleted_name_clean",
                     welcome is not None and welcome["t"] == "error",
                     f"the tombstone {name} of {former.name} was given: {said(welcome)}")
        await probe.close()

    async def step_report(self) -> bool:
        pair = self.two_players() if self.rng.random() < 0.7 else None
        a = pair[0] if pair else self.pick(self.connected())
        b = pair[1] if pair else self.pick([p for p in self.players.values() if not p.deleted])
        if a is None or b is None or a is b:
            return False
        client = self.pick(self.open_clients(a.uid))
        tag = f"sim report {self.step}"
        reply = await client.request(t="report", name=b.name, reason=tag)
        got = said(reply)
        self.note(f"{client.label} reports {b.name}: {got}")
        if got == "ack":
            self.reports.append(Report(tag, a.uid, b.uid))
        return True

    async def step_reports_check(self) -> bool:
        if not self.reports:
            return False
        client = await self.moderator()
        if client is None:
            return False
        reply = await client.request(t="reports")
        if reply is None or reply["t"] != "reports":
            self.note(f"moderator reads the reports: {reply}")
            return True
        by_tag = {r.tag: r for r in self.reports}
        self.note(f"moderator reads {len(reply['reports'])} reports")
        for shown in reply["reports"]:
            report = by_tag.get(shown.get("reason"))
            if report is None:
                continue
            for field_name, uid in (("name", report.about), ("by", report.by)):
                player = self.players[uid]
                named = shown[field_name]
                holder = next((p for p in self.players.values() if not p.deleted
                               and p.name.lower() == str(named).lower()), None)
                self.checked("records.report_names", holder is None or holder is player,
                             f"report {report.tag!r} shows {field_name} {named!r}, the name "
                             f"of p{holder.uid if holder else '?'} now; its {field_name} was "
                             f"p{uid} (now {player.name}"
                             f"{', deleted' if player.deleted else ''})")
        if self.rng.random() < 0.3 and reply["reports"]:
            shown = self.pick(reply["reports"])
            done = await client.request(t="resolve_report", report=shown["id"], reason="sim")
            self.note(f"  moderator resolves report {shown['id']}: {done and done['t']}")
        return True

    async def step_remove_chat(self) -> bool:
        mod = self.pick(self.open_clients(self.mod_uid))
        if mod is None:
            return False
        roll = self.rng.random()
        if roll < 0.2:
            reply = await mod.request(t="remove_chat", game="NoSuchGame99", line=3, reason="sim")
            self.note(f"{mod.label} removes a line of a game that does not exist: {said(reply)}")
            self.checked("refusals.remove_chat_unknown_game", said(reply) == "no_such_game",
                         f"remove_chat on no game: {said(reply)}")
            return True
        if roll < 0.45:
            return await self.moderator_removes_admins_line(mod)
        lines = [(m["game"], m["line"]) for c in self.clients for m in c.received[-200:]
                 if m["t"] == "chat" and m.get("name") != self.players[self.admin_uid].name]
        chosen = self.pick(sorted(set(lines), key=lambda line: (self.seq(line[0]), line[1])))
        if chosen is None:
            return False
        reply = await mod.request(t="remove_chat", game=chosen[0], line=chosen[1], reason="sim")
        self.note(f"{mod.label} removes line {chosen[1]} of {chosen[0]}: "
                  f"{said(reply)}")
        return True

    async def moderator_removes_admins_line(self, mod: SimClient) -> bool:
        """The admin watches a game and speaks; a moderator may not remove the admin's line."""
        admin = self.pick(self.open_clients(self.admin_uid))
        game = self.pick(sorted(self.games.values(), key=lambda g: g.seq))
        if admin is None or game is None:
            return False
        if game.id not in admin.views:
            await admin.request(t="watch", game=game.id)
        start = len(admin.received)
        reply = await admin.request(t="chat", game=game.id, text="the admin speaks")
        self.note(f"{admin.label} says a line in {game.id}: {said(reply)}")
        lines = [m["line"] for m in admin.received[start:] if m["t"] == "chat"
                 and m.get("game") == game.id and m.get("text") == "the admin speaks"]
        if said(reply) != "ack" or not lines:
            return True
        reply = await mod.request(t="remove_chat", game=game.id, line=lines[-1], reason="sim")
        self.note(f"{mod.label} removes the admin's line {lines[-1]}: {said(reply)}")
        self.checked("levers.moderator_not_over_admin", said(reply) == "not_moderator",
                     f"a moderator's remove_chat of the admin's line: {said(reply)}")
        return True

    # -- bad input -----------------------------------------------------------------------------

    async def step_bad_input(self) -> bool:
        client = self.pick([c for c in self.clients if c.open and c.token and c.uid is not None
                            and not self.players[c.uid].muted])
        if client is None:
            return False
        kind = self.pick(["json", "type", "field", "deep", "binary", "huge", "invisible",
                          "pings"])
        game = self.pick(sorted((g for g in client.views if g in self.games), key=self.seq))
        checker, expected, closes = "refusals.expected_code", {"bad_json"}, None
        frame: str | bytes
        if kind == "json":
            frame = '{"t": "ping", "id": '
        elif kind == "type":
            frame, expected = '{"t": "teleport", "id": 1}', {"unknown_type"}
        elif kind == "field":
            frame, expected = '{"t": "ping", "colour": "x"}', {"bad_message"}
        elif kind == "deep":
            frame = self.pick([  # each under the 8 KiB frame limit
                '{"t": "ping", "x": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}",
                '{"t": "ping", "id": ' + "[" * 2000 + "]" * 2000 + "}"])
            checker, expected = "refusals.deep_json", {"bad_json", "bad_message"}
            client.expected_close = frozenset({1000})  # its own checker says it must stay open
        elif kind == "binary":
            frame, expected = b"\x00\x01qubic", {"binary_frame"}
        elif kind == "huge":
            frame, expected, closes = ('{"t": "chat", "game": "x", "text": "' + "a" * 9000
                                       + '"}'), {"frame_too_large"}, 1009
        elif kind == "invisible":
            if game is None:
                return False
            text = self.pick(["\u3164\u3164\u3164", "\u2800", "a\u2028b", "\u200b\u3164",
                              "e" + "\u0301" * 290])
            frame = f'{{"t": "chat", "game": "{game}", "text": "{text}"}}'
            checker, expected = "refusals.invisible_chat", {"bad_chat"}
        else:
            checker, expected, closes = "refusals.ping_flood", {"rate_limited"}, 1008
        if closes is not None:
            client.expected_close = frozenset({closes})
        start = len(client.errors)
        if kind == "pings":
            assert client.ws is not None
            with contextlib.suppress(Exception):
                for _ in range(200):
                    await client.ws.ping()
        else:
            await client.send_raw(frame)
        await self.until(lambda: len(client.errors) > start or not client.open, 2.0)
        told = client.codes_since(start)
        self.note(f"{client.label} sends bad input ({kind}): {told or 'nothing'}"
                  f"{'' if client.open else f', closed {client.close_code}'}")
        holds = bool(told) and told[0] in expected
        if closes is None:
            pong = await client.request(t="ping", timeout=3)
            holds = holds and pong is not None and pong["t"] == "pong"
            self.checked("refusals.stays_open" if checker == "refusals.expected_code"
                         else checker, pong is not None,
                         f"{client.label} after {kind}: the socket "
                         f"{'closed ' + str(client.close_code) if not client.open else 'is mute'}")
        else:
            await self.until(lambda: not client.open, 3.0)
            holds = holds and client.close_code == closes
        self.checked(checker, holds, f"{client.label} {kind}: told {told}, "
                                     f"{'open' if client.open else f'closed {client.close_code}'}")
        if not client.open:
            await client.close()
            if client.uid is not None and not self.players[client.uid].banned:
                await self.open_session(self.players[client.uid], client=client)
        return True

    async def step_profile(self) -> bool:
        """Someone reads a player's games over HTTP: an ongoing private game is not listed."""
        private = [g for g in self.active_games() if g.private and g.x and g.o]
        game = self.pick(sorted(private, key=lambda g: g.seq))
        if game is None:
            return False
        player = self.players[self.pick([game.x, game.o])]
        assert self.http is not None
        url = f"{self.backend.http_url(self.node())}/api/players/{player.name}/games"
        async with self.http.get(url) as reply:
            status = reply.status
            body = await reply.json() if status == 200 else {}
        ids = [g["id"] for g in body.get("games", [])]
        self.note(f"GET /api/players/{player.name}/games: {status}, {len(ids)} games")
        self.checked("records.private_game_unlisted", game.id not in ids,
                     f"{player.name}'s ongoing private game {game.id} is listed with its id")
        return True

    async def step_http_token(self) -> bool:
        player = self.pick([p for p in self.living(free=False) if p.token])
        if player is None:
            return False
        status = await self.http_get("/api/puzzles/history", player.token)
        self.note(f"p{player.uid} GET /api/puzzles/history: {status}")
        self.checked("refusals.expected_code", status == 200,
                     f"{player.name}'s valid token on /api/puzzles/history: {status}")
        if player.revoked_tokens:
            token = self.pick(player.revoked_tokens)
            status = await self.http_get("/api/puzzles/history", token)
            self.checked("levers.revoked_token_refused", status == 401,
                         f"{player.name}'s revoked token on /api/puzzles/history: {status}")
        return True

    # -- the host ------------------------------------------------------------------------------

    async def step_restart(self) -> bool:
        was_open = [c for c in self.clients if c.open and c.uid is not None]
        for client in self.clients:
            if client.open:
                client.expected_close = frozenset({1001})
        await self.backend.restart()
        await self.until(lambda: not any(c.open for c in was_open), 3.0)
        for client in was_open:
            self.checked("refusals.close_as_documented", client.close_code == 1001,
                         f"restart: {client.label} closed {client.close_code}")
            await client.close()
        self.note(f"host restarts the server ({len(was_open)} sockets)")
        for client in was_open:
            player = self.players.get(client.uid or -1)
            if player is not None and not player.banned and not player.deleted and player.token:
                await self.open_session(player, client=client)
        await self.check_store()
        return True

    # -- invariants ----------------------------------------------------------------------------

    async def check_streams_settled(self) -> None:
        """``check_streams``, the server quiet; when a client looks behind, a second look
        after a longer quiet: a frame held up on a loaded machine (a two-node run's hop
        through Redis, a busy core) is late, not wrong; one still wrong then is a violation."""
        self.looking = []
        try:
            self.check_streams()
            behind = self.looking
        finally:
            self.looking = None
        if behind:
            self.note(f"  a second look after a longer quiet: {', '.join(sorted(set(behind)))}")
            await self.settle(SETTLE_LATE)
        self.check_streams()

    def check_streams(self) -> None:
        for client in self.clients:
            if not client.open:
                continue
            for listed in (client.lobby_games or {}):
                game = self.games.get(listed)
                self.checked("lobby.lists_public_games_only",
                             game is None or (not game.private and None not in (game.x, game.o)),
                             f"{client.label}'s lobby lists {listed}, a "
                             f"{'private' if game and game.private else 'computer'} game")
            gaps = client.open_gaps()
            self.checked("versions.converge", not gaps,
                         f"{client.label} holds gaps after the server went quiet: {gaps}")
            most = max(client.step_catchup.items(), key=lambda kv: kv[1], default=("", 0))
            self.checked("versions.storm", most[1] <= STORM,
                         f"{client.label} sent {most[1]} catch-up frames for {most[0]} in one "
                         "step")
            if gaps or client.catchups:
                continue
            for game_id, view in client.views.items():
                game = self.games.get(game_id)
                if game is not None and client.uid is not None:
                    seat = game.seat_of(client.uid)
                    self.checked("records.seats_by_player", view.you == seat,
                                 f"{client.label} ({self.players[client.uid].name}) is told "
                                 f"it sits {view.you} in {game_id}, where it sits {seat}")
                if game is None or view.status != "playing":
                    continue
                for side, uid in (("x", game.x), ("o", game.o)):
                    if uid is None or uid == client.uid:
                        continue
                    there = any(c.open and game_id in c.views for c in self.clients
                                if c.uid == uid and c.token is not None
                                ) or self.bots.streaming(uid)  # a bot's stream opens its games
                    self.checked("presence.as_told", view.online.get(side) == there,
                                 f"{client.label} on {client.node} holds {side} of {game_id} "
                                 f"{'online' if view.online.get(side) else 'away'}, but p{uid} "
                                 f"{'has it open' if there else 'has no socket on it'}; "
                                 f"told: {'; '.join(view.told)}")
                watchers = {c.uid for c in self.clients if c.open and c.token is not None
                            and c.uid is not None and game_id in c.views
                            and c.uid not in (game.x, game.o)}
                self.checked("presence.watchers_as_told", view.spectators == len(watchers),
                             f"{client.label} on {client.node} holds {view.spectators} watching "
                             f"{game_id}, where {len(watchers)} players have it open unseated")

    async def check_store(self) -> None:
        records = await self.backend.games(sorted(self.games))
        for game_id, record in records.items():
            if record is None:
                self.checked("moves.acked_stored", not any(g == game_id for g, _ in self.acked),
                             f"{game_id} is not stored")
                continue
            plies = [m.ply for m in record.moves]
            self.checked("moves.once_at_ply", plies == list(range(1, len(plies) + 1)),
                         f"{game_id} stored plies {plies}")
            stored = {m.ply: m.cell for m in record.moves}
            for (g, ply), cell in self.acked.items():
                if g == game_id:
                    self.checked("moves.acked_stored", stored.get(ply) == cell,
                                 f"{game_id} ply {ply}: acked {cell}, stored {stored.get(ply)}")
            board = Board(record.variant)
            for move in record.moves:
                if not self.checked("moves.none_after_end", board.outcome() is None,
                                    f"{game_id}: ply {move.ply} stored after the end"):
                    break
                try:
                    board.push(move.cell)
                except ValueError as illegal:
                    self.checked("moves.none_after_end", False, f"{game_id} ply {move.ply}: "
                                                                f"{illegal}")
                    break
            outcome = board.outcome()
            if outcome is not None and board.winning_line is not None:
                self.checked("moves.no_won_board_active", record.result is not None,
                             f"{game_id}: won at ply {len(record.moves)} and still "
                             f"{record.status}")
            for client in self.clients:
                view = client.views.get(game_id)
                if (view is None or not client.open or client.catchups
                        or client.open_gaps()):
                    continue
                self.checked("versions.view_matches_store", view.moves == stored_cells(record),
                             f"{client.label} holds {view.moves} of {game_id}, stored "
                             f"{stored_cells(record)}")

    def summary(self) -> dict[str, Any]:
        by_checker: dict[str, int] = {}
        for v in self.violations:
            by_checker[v.checker] = by_checker.get(v.checker, 0) + 1
        return {"seed": self.seed, "steps": self.step, "players": len(self.players),
                "sockets": len(self.clients), "games": len(self.games),
                "acked_moves": len(self.acked), "step_kinds": dict(sorted(self.counts.items())),
                "checks": sum(self.checks.values()), "checkers": len(self.checks),
                "violations": by_checker}

    def failures(self) -> list[Violation]:
        return [v for v in self.violations if not known(v.checker, self.backend.mode)]


def stored_cells(record: Any) -> list[int]:
    return [m.cell for m in record.moves]


STEPS: list[tuple[str, int]] = [
    ("new_player", 5), ("second_device", 3), ("reconnect", 4), ("drop", 2), ("wake", 3),
    ("private_game", 6), ("challenge", 3), ("seek", 2), ("quick_pair", 2), ("play_ai", 1),
    ("move", 40), ("illegal_move", 4), ("chat_players", 6), ("chat_spectators", 6),
    ("watch", 6), ("unwatch", 2), ("resign", 2), ("rematch", 2), ("claim", 2), ("takeback", 1),
    ("set_password", 3), ("login", 2), ("change_password", 1), ("revoke_others", 1),
    ("reset_password", 1), ("ban", 1), ("unban", 1), ("mute", 2), ("kick", 1), ("rename", 1),
    ("delete_player", 1), ("report", 2), ("reports_check", 1), ("remove_chat", 1),
    ("bad_input", 3), ("http_token", 1), ("profile", 1), ("restart", 1),
    ("tournament_create", 2), ("tournament_join", 5), ("tournament_leave", 1),
    ("tournament_look", 2), ("bot_new", 2), ("bot_reconnect", 2), ("bot_challenge", 4),
    ("bot_move", 6), ("bot_lever", 1), ("bot_tournament", 2),
]


async def simulate(backend: Backend, seed: int, steps: int,
                   log: Callable[[str], None] | None = None) -> World:
    """Run ``steps`` steps of seed ``seed`` on ``backend``; the world, with its violations."""
    world = World(backend, seed, log)
    began = time.monotonic()
    try:
        await world.setup()
        await world.run(steps)
    finally:
        await world.teardown()
    world.elapsed = time.monotonic() - began  # type: ignore[attr-defined]
    return world
