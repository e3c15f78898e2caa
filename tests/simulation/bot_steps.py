"""The simulation's bot steps (issue 43's bot API in the whole server): a player makes their
account a bot (`POST /api/bot/account/upgrade`) and from then on plays over HTTP only, its
event stream (`GET /api/stream/event`) open on some node; people challenge it, it accepts on
the stream's word and moves with `POST /api/bot/game/{id}/move/{cell}?ply=n`, beside the
levers that close its stream (a ban, a kick, a deletion, a password reset) and restarts."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from engine import Board

from .client import said
from .model import SimGame, SimPlayer

if TYPE_CHECKING:
    from .world import World

MAX_BOTS = 2
STREAM_SEEN = 2.0  # seconds for a challenge to show on the bot's stream


@dataclass
class SimBot:
    """A bot account and its event stream as the world holds it."""

    player: SimPlayer
    node: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    status: int | None = None  # the stream's HTTP status
    ended: bool = False  # the stream ended (or was never opened)
    ended_at: float = 0.0  # when the last stream ended, as the world saw it
    requested_at: float = 0.0  # when its last request (a session while it ran) was answered

    @property
    def streaming(self) -> bool:
        return self.reader is not None and not self.ended and self.status == 200


class BotSteps:
    """The bot steps, for ``World``'s ``step_bot_*``, and the hook the levers call."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.bots: dict[int, SimBot] = {}

    # -- the stream -------------------------------------------------------------------------

    async def _read(self, bot: SimBot, url: str, token: str) -> None:
        w = self.world
        assert w.http is not None
        timeout = aiohttp.ClientTimeout(total=None, sock_read=30)
        try:
            async with w.http.get(url, headers={"Authorization": f"Bearer {token}"},
                                  timeout=timeout) as reply:
                bot.status = reply.status
                if reply.status != 200:
                    return
                async for line in reply.content:
                    if line.strip():
                        bot.events.append(json.loads(line))
        except (aiohttp.ClientError, TimeoutError, ValueError):
            pass
        finally:
            bot.ended = True
            bot.ended_at = w.now()

    async def open_stream(self, bot: SimBot) -> bool:
        """The bot's event stream on a node of the world's choosing (its games going on come
        first, as ``gameStart``)."""
        w = self.world
        if bot.player.token is None:
            return False
        await self.close_stream(bot)
        bot.node, bot.events, bot.status, bot.ended = w.node(), [], None, False
        url = w.backend.http_url(bot.node) + "/api/stream/event"
        bot.reader = asyncio.create_task(self._read(bot, url, bot.player.token))
        await w.until(lambda: bot.status is not None or bot.ended, 3.0)
        w.note(f"  {bot.player.name}'s event stream on {bot.node}: {bot.status}")
        return bot.streaming

    async def close_stream(self, bot: SimBot) -> None:
        if bot.reader is not None and not bot.reader.done():
            bot.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await bot.reader
        bot.reader = None

    def connected_until(self, uid: int) -> float | None:
        """Until when the bot ``uid`` may have had a connection open, as far as the world
        knows: now while a stream of its is open or opening, else the latest of its stream's
        end and its last request's answer (each request is a session while it runs). None:
        ``uid`` is not a bot."""
        bot = self.bots.get(uid)
        if bot is None:
            return None
        if bot.reader is not None and not bot.ended:
            return self.world.now()
        return max(bot.ended_at, bot.requested_at)

    def streaming(self, uid: int) -> bool:
        """Whether ``uid`` is a bot with its event stream open (which holds its games open,
        as a socket that opened them does)."""
        bot = self.bots.get(uid)
        return bot is not None and bot.streaming

    async def close(self) -> None:
        for bot in self.bots.values():
            await self.close_stream(bot)

    async def post(self, bot: SimBot, path: str, body: Any = None) -> tuple[int, Any]:
        w = self.world
        assert w.http is not None and bot.player.token is not None
        url = w.backend.http_url(w.node()) + path
        try:
            async with w.http.post(url, json=body, headers={
                    "Authorization": f"Bearer {bot.player.token}"}) as reply:
                text = await reply.text()
                try:
                    return reply.status, json.loads(text) if text else None
                except ValueError:
                    return reply.status, text
        finally:
            bot.requested_at = w.now()

    # -- the steps --------------------------------------------------------------------------

    async def new(self) -> bool:
        """A newcomer makes their account a bot, leaves the websocket and opens its stream."""
        w = self.world
        if len(self.bots) >= MAX_BOTS:
            return False
        player = await w.add_player(f"bot{w._uids + 1}")
        if player is None:
            return True
        bot = SimBot(player)
        status, body = await self.post(bot, "/api/bot/account/upgrade")
        w.note(f"{player.name} makes their account a bot: {status} {body}")
        w.checked("bots.upgrade", status == 200, f"{player.name}'s upgrade: {status} {body}")
        for client in w.open_clients(player.uid):  # a bot speaks HTTP only
            await client.close()
        bot.requested_at = w.now()  # its socket was a connection until then
        if status != 200:
            return True
        player.bot = True
        self.bots[player.uid] = bot
        await self.open_stream(bot)
        return True

    def _alive(self) -> list[SimBot]:
        return [b for b in self.bots.values() if not b.player.deleted and not b.player.banned
                and b.player.token is not None]

    async def reconnect(self) -> bool:
        """A bot whose stream ended (a kick, a restart) opens it again, as a bot's loop does."""
        bot = self.world.pick([b for b in self._alive() if not b.streaming])
        if bot is None:
            return False
        await self.open_stream(bot)
        return True

    async def challenge(self) -> bool:
        """A person challenges a bot whose stream is open; the challenge must show on the
        stream, and the bot accepts it (or now and then declines)."""
        w = self.world
        bot = w.pick([b for b in self._alive() if b.streaming])
        person = w.pick(w.ready())
        if bot is None or person is None:
            return False
        client = w.pick(w.open_clients(person.uid))
        seen = len(bot.events)
        sent = await client.request(t="challenge", name=bot.player.name, variant="4x4",
                                    colour=w.pick(["x", "o"]))
        w.note(f"{client.label} challenges the bot {bot.player.name}: {said(sent)}")
        if sent is None or sent["t"] != "challenge_sent":
            return True
        challenge = sent["challenge"]["id"]

        def on_stream() -> bool:
            return any(e.get("type") == "challenge" and e["challenge"]["id"] == challenge
                       for e in bot.events[seen:])

        shown = await w.until(on_stream, STREAM_SEEN)
        w.checked("bots.challenge_reaches_stream", shown or not bot.streaming,
                  f"{person.name}'s challenge {challenge} not on {bot.player.name}'s stream "
                  f"on {bot.node} within {STREAM_SEEN} s")
        if not shown:
            await client.request(t="challenge_cancel", challenge=challenge)
            return True
        if w.rng.random() < 0.15:
            status, _ = await self.post(bot, f"/api/challenge/{challenge}/decline")
            w.note(f"  {bot.player.name} declines: {status}")
            return True
        starts = len(client.received)
        status, body = await self.post(bot, f"/api/challenge/{challenge}/accept")
        w.note(f"  {bot.player.name} accepts: {status} {body}")
        if status != 200:
            return True
        game_id = body["game"]
        await w.until(lambda: game_id in client.views, 2.0)
        pushed = next((m for m in client.received[starts:]
                       if m["t"] == "game" and m["id"] == game_id), None)
        if pushed is None:
            return True
        uid = {person.name: person.uid, bot.player.name: bot.player.uid}
        x, o = (uid.get(seat["name"]) for seat in pushed["seats"])
        w.games[game_id] = SimGame(game_id, pushed["variant"], x, o, seq=len(w.games))
        w.note(f"  game {game_id} x={pushed['seats'][0]['name']} o={pushed['seats'][1]['name']}")
        return True

    async def tournament(self) -> bool:
        """A streaming bot enters an arena over HTTP (``POST /api/tournaments/{id}/join``):
        the arena pairs it as it pairs anyone, only while a connection of its is open
        (``TournamentSteps.adopt_paired`` checks)."""
        w = self.world
        bot = w.pick([b for b in self._alive() if b.streaming])
        if bot is None:
            return False
        uid = bot.player.uid
        tournament = w.pick([t for t in w.tourneys.lines()
                             if uid not in t.joined or uid in t.left])
        if tournament is None:
            return False
        status, body = await self.post(bot, f"/api/tournaments/{tournament.id}/join")
        w.note(f"{bot.player.name} joins {tournament.id} over HTTP: {status} {body}")
        if status == 200:
            tournament.joined[uid] = w.now()
            tournament.left.pop(uid, None)
        return True

    async def move(self) -> bool:
        """A bot moves over HTTP where a person's converged view says it is its turn."""
        w = self.world
        options = []
        for game in sorted(w.active_games(), key=lambda g: g.seq):
            for bot in self._alive():
                side = game.seat_of(bot.player.uid)
                if side is None:
                    continue
                views = [c.views[game.id] for c in w.clients if c.open and c.uid is not None
                         and c.uid != bot.player.uid and game.id in c.views
                         and not c.catchups]
                view = views[0] if views else None
                if view is not None and view.status == "playing" and view.to_move() == side:
                    options.append((game, bot, view))
        chosen = w.pick(options)
        if chosen is None:
            return False
        game, bot, view = chosen
        legal = Board(view.variant, view.moves).legal_moves
        if not legal:
            return False
        cell, ply = w.pick(legal), view.ply
        status, body = await self.post(bot, f"/api/bot/game/{game.id}/move/{cell}?ply={ply}")
        w.note(f"{bot.player.name} moves {cell} at ply {ply} in {game.id} over HTTP: "
               f"{status} {body}")
        if status == 200:
            w.acked[(game.id, ply + 1)] = cell
        w.checked("moves.legal_move_acked", status == 200,
                  f"{bot.player.name} move {cell} at ply {ply} in {game.id}: {status} {body}")
        return True

    async def lever(self) -> bool:
        """The host or the moderator kicks or bans a streaming bot, or the host resets its
        password (every token revoked): its stream must end within a second
        (``after_lever``)."""
        w = self.world
        bot = w.pick([b for b in self._alive() if b.streaming])
        if bot is None:
            return False
        roll = w.rng.random()
        if roll < 0.45:
            how = await w.lever("kick", bot.player.name, moderator=w.rng.random() < 0.5)
        elif roll < 0.7:  # for good: the world's unban step takes people, not bots
            how = await w.lever("ban", bot.player.name, moderator=w.rng.random() < 0.5)
            bot.player.banned = True
            w.tourneys.left(bot.player.uid, w.now())
        else:
            code, printed = await w.admin("reset-password", bot.player.name)
            how = f"host resets {bot.player.name}'s password: exit {code}"
            if code == 0:
                bot.player.revoked_tokens.append(bot.player.token or "")
                bot.player.token = None  # a bot's owner would log in again; this one retires
        w.note(how)
        await self.after_lever(bot.player, how)
        return True

    async def after_lever(self, player: SimPlayer, how: str) -> None:
        """A lever that closes the player's connections (ban, kick, deletion, revocation) has
        been pulled: a bot's event stream must end within ``LEVER_WAIT`` on every node."""
        w = self.world
        bot = self.bots.get(player.uid)
        if bot is None or not bot.streaming:
            return
        ended = await w.until(lambda: bot.ended)
        w.checked("bots.stream_ends_on_lever", ended,
                  f"{how}: {player.name}'s event stream on {bot.node} still open")
        await self.close_stream(bot)
