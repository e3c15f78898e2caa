"""The bot API (docs/bots.md): lichess's Bot API in Qubic's names, over HTTP with a bearer token.

Two streams of newline-delimited JSON (``server.protocol.bot_events``), each a ``Session`` of
the hub like a websocket (so challenges, games held on other nodes, bans and revoked tokens
reach it as they reach any connection), with an empty line every ``KEEP_ALIVE`` seconds:

- ``GET /api/stream/event``: challenges and the player's games starting and finishing;
- ``GET /api/bot/game/stream/{id}``: ``gameFull``, then ``gameState`` after each change and
  ``chatLine``; it ends with the game.

The requests (``POST``) are the websocket's own requests, carried out for a session that
lives as long as the request (``_carry_out``): a move, a resignation, a chat line, a
challenge made, accepted, declined or cancelled. Each answers ``{"ok": true}`` (a challenge:
the challenge; an accepted challenge: the game's id) or the refusal's code with its HTTP status
(``STATUS``). A player's requests share one token bucket (``RATE_LIMIT_PER_SECOND``, burst
``RATE_LIMIT_BURST``: a websocket's), and each stream counts as a connection of the address.

Routes under ``/api/bot/`` are for bot accounts (``not_bot`` otherwise, as on lichess);
``POST /api/bot/account/upgrade`` makes the token's player a bot while it has no rated game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from aiohttp import web

from server.errors import LimitReached, ServerError
from server.http import tokens
from server.http.api import HUB_KEY, refusal
from server.http.rate import client_of
from server.node import levers
from server.node.bots import EventFeed, GameFeed
from server.node.hub import Hub
from server.node.rates import Limits
from server.node.session import CLOSE_GOING_AWAY, Session
from server.protocol import (
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_SECOND,
    Ack,
    ChallengeReceived,
    ChallengeSent,
    ClientMessage,
    Error,
    ErrorCode,
    GameState,
    Watch,
    decode_client_message,
    decode_server_message,
)
from server.protocol.bot_events import BotEvent
from server.store.account_records import Holder

log = logging.getLogger(__name__)

KEEP_ALIVE = 6.0  # seconds between keep-alive newlines on a quiet stream (lichess: 6-7 s)
REPLY_WAIT = 10.0  # seconds a request waits for its answer (a cluster's owner node's)
GAME_ID = r"[A-Za-z0-9_-]{1,32}"
NDJSON = "application/x-ndjson"

STATUS: dict[str, int] = {
    **tokens.STATUS,
    ErrorCode.NOT_BOT: 403, ErrorCode.BOT_REFUSED: 403, ErrorCode.NOT_SEATED: 403,
    ErrorCode.SPECTATOR: 403, ErrorCode.NOT_ALLOWED: 403, ErrorCode.MUTED: 403,
    ErrorCode.NO_SUCH_GAME: 404, ErrorCode.NO_SUCH_CHALLENGE: 404,
    ErrorCode.NO_SUCH_PLAYER: 404,
    ErrorCode.NOT_YOUR_TURN: 409, ErrorCode.STALE_MOVE: 409, ErrorCode.GAME_OVER: 409,
    ErrorCode.TOO_LATE_TO_ABORT: 409, ErrorCode.NO_DRAW_OFFER: 409,
    ErrorCode.ALREADY_OFFERED: 409,
    ErrorCode.RATE_LIMITED: 429, ErrorCode.TOO_MANY_CONNECTIONS: 429,
    ErrorCode.CHAT_TOO_FAST: 429, ErrorCode.TOO_MANY_CHALLENGES: 429,
    ErrorCode.STORE_UNAVAILABLE: 503, ErrorCode.UNAVAILABLE: 503,
    ErrorCode.SHUTTING_DOWN: 503,
}
"""The HTTP status of each refusal (any other: 400; ``server.http.api.refusal`` answers)."""

LIMITS_KEY = web.AppKey("bot_limits", Limits)  # a player's requests: one bucket by name


class ApiOk(msgspec.Struct, kw_only=True):
    ok: bool = True
    game: str | None = None  # an accepted challenge's game


class _Wakeup:
    """A session's ``Outlet`` for the code that reads it here: set when frames wait or the
    session closes."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.hung_up = False

    def frames_waiting(self, session: Session) -> None:
        self.event.set()

    def hang_up(self) -> None:
        self.hung_up = True
        self.event.set()


def add_bot_api(app: web.Application) -> None:
    """Route the bot API on ``app`` (whose ``HUB_KEY`` holds the hub)."""
    app[LIMITS_KEY] = Limits(RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST)
    app.router.add_post("/api/bot/account/upgrade", api_upgrade)
    app.router.add_get("/api/stream/event", api_stream_events)
    app.router.add_get(f"/api/bot/game/stream/{{id:{GAME_ID}}}", api_stream_game)
    app.router.add_post(f"/api/bot/game/{{id:{GAME_ID}}}/move/{{cell}}", api_move)
    app.router.add_post(f"/api/bot/game/{{id:{GAME_ID}}}/resign", api_resign)
    app.router.add_post(f"/api/bot/game/{{id:{GAME_ID}}}/abort", api_abort)
    app.router.add_post(f"/api/bot/game/{{id:{GAME_ID}}}/draw/{{accept:yes|no|true|false}}",
                        api_draw)
    app.router.add_post(f"/api/bot/game/{{id:{GAME_ID}}}/chat", api_chat)
    app.router.add_post("/api/challenge/{name}", api_challenge)
    for answer in ("accept", "decline", "cancel"):
        app.router.add_post(f"/api/challenge/{{id}}/{answer}", api_answer)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _holder(request: web.Request, bot: bool) -> Holder:
    """Who the bearer token is (refused as every route refuses it); with ``bot``, they must
    be a bot (``not_bot``)."""
    held = await tokens.holder(request.app[HUB_KEY].store, request)
    assert held is not None
    if bot and not held.player.bot:
        raise ServerError("only a bot account may use /api/bot/ (POST /api/bot/account/"
                          "upgrade makes a new account a bot)", ErrorCode.NOT_BOT)
    return held


def _limit(request: web.Request, name: str) -> None:
    """One of ``name``'s requests: refused past their bucket (``rate_limited``)."""
    wait = request.app[LIMITS_KEY].wait(f"player:{name}", time.monotonic())
    if wait is not None:
        raise LimitReached("too many requests: slow down", ErrorCode.RATE_LIMITED, wait)


async def _body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object (an empty body: none)."""
    text = await request.text()
    if not text.strip():
        return {}
    try:
        body = json.loads(text)
    except ValueError:
        raise ServerError("the body is a JSON object", ErrorCode.BAD_JSON) from None
    if not isinstance(body, dict):
        raise ServerError("the body is a JSON object", ErrorCode.BAD_MESSAGE)
    return body


def _request(fields: dict[str, Any]) -> ClientMessage:
    """The websocket request of these fields, checked as the websocket checks it."""
    return decode_client_message(json.dumps({**fields, "id": 1}))


# -- requests: a session for the length of one ---------------------------------------------


async def _carry_out(request: web.Request, held: Holder, message: ClientMessage) -> Any:
    """Carry ``message`` out as ``held``'s player, on a session that lives as long as the
    request, and return its answer (the reply whose ``ref`` is the request's); a refusal
    raises ``ServerError``."""
    hub = request.app[HUB_KEY]
    wakeup = _Wakeup()
    session = Session(client_of(request), outlet=wakeup)
    hub.connected(session)
    try:
        await hub.attach(session, held.player, held.device, follows=False)
        await hub.handle(session, message)
        deadline = asyncio.get_running_loop().time() + REPLY_WAIT
        while True:
            wakeup.event.clear()
            for frame in session.take_frames():
                reply = decode_server_message(frame)
                if getattr(reply, "ref", None) != message.id:
                    continue
                if isinstance(reply, Error):
                    error = ServerError(reply.message, reply.code)
                    error.retry_in = reply.retry_in  # type: ignore[attr-defined]
                    raise error
                return reply
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or session.closed:
                raise ServerError("the server did not answer in time; try again",
                                  ErrorCode.UNAVAILABLE)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.event.wait(), left)
    finally:
        hub.disconnected(session)


async def _answered(request: web.Request, bot: bool,
                    fields: Callable[[web.Request], Awaitable[dict[str, Any]]]) -> web.Response:
    """Check the token and the rate, carry out the request of ``fields`` and answer it."""
    try:
        held = await _holder(request, bot)
        _limit(request, held.player.name)
        message = _request(await fields(request))
        reply = await _carry_out(request, held, message)
    except ServerError as error:
        request.app[HUB_KEY].metrics.error(str(error.code))
        return refusal(error, STATUS)
    if isinstance(reply, ChallengeSent):
        return web.json_response({"challenge": msgspec.to_builtins(reply.challenge)})
    if isinstance(reply, GameState):
        return web.json_response(msgspec.to_builtins(ApiOk(game=reply.id)))
    assert isinstance(reply, Ack)
    return web.json_response(msgspec.to_builtins(ApiOk()))


async def api_move(request: web.Request) -> web.Response:
    """Play ``{cell}`` (``2b3`` or an index) in the game; ``?ply=`` the moves before it (else
    the game's ply as stored: every move is stored before anyone hears of it)."""

    async def fields(request: web.Request) -> dict[str, Any]:
        game_id, cell = request.match_info["id"], request.match_info["cell"]
        text = request.query.get("ply")
        if text is not None:
            if re.fullmatch(r"[0-9]{1,3}", text) is None:
                raise ServerError("ply is a whole number", ErrorCode.BAD_MESSAGE)
            ply = int(text)
        else:
            record = await request.app[HUB_KEY].store.get_game(game_id)
            if record is None:
                raise ServerError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
            ply = len(record.moves)
        return {"t": "move", "game": game_id, "cell": int(cell) if cell.isdigit() else cell,
                "ply": ply}

    return await _answered(request, True, fields)


async def _on_game(request: web.Request, kind: str) -> web.Response:
    """The bot's request ``kind`` on the route's game (one with no fields but the game)."""

    async def fields(request: web.Request) -> dict[str, Any]:
        return {"t": kind, "game": request.match_info["id"]}

    return await _answered(request, True, fields)


async def api_resign(request: web.Request) -> web.Response:
    return await _on_game(request, "resign")


async def api_abort(request: web.Request) -> web.Response:
    """Call the game off (before both sides moved; ``too_late_to_abort`` after)."""
    return await _on_game(request, "abort")


async def api_draw(request: web.Request) -> web.Response:
    """lichess's ``draw/{accept}``: ``yes`` offers a draw, or accepts the opponent's standing
    offer (crossed offers agree: ``draw_offer``); ``no`` declines it (``draw_decline``)."""
    yes = request.match_info["accept"] in ("yes", "true")
    return await _on_game(request, "draw_offer" if yes else "draw_decline")


async def api_chat(request: web.Request) -> web.Response:
    """Say ``{"text": ...}`` in the game's players' chat (a spectator: the spectators')."""

    async def fields(request: web.Request) -> dict[str, Any]:
        body = await _body(request)
        return {"t": "chat", "game": request.match_info["id"], "text": body.get("text")}

    return await _answered(request, True, fields)


async def api_challenge(request: web.Request) -> web.Response:
    """Challenge the player ``{name}`` (online); the body holds the terms as the websocket's
    ``challenge`` does (``variant``, ``clock``, ``rated``, ``colour``)."""

    async def fields(request: web.Request) -> dict[str, Any]:
        body = await _body(request)
        terms: dict[str, Any] = {key: body[key] for key in ("variant", "clock", "rated", "colour")
                                 if key in body}
        return {"t": "challenge", "name": request.match_info["name"], **terms}

    return await _answered(request, False, fields)


async def api_answer(request: web.Request) -> web.Response:
    """Accept, decline or cancel the challenge ``{id}``."""

    async def fields(request: web.Request) -> dict[str, Any]:
        answer = request.path.rsplit("/", 1)[1]
        return {"t": f"challenge_{answer}", "challenge": request.match_info["id"]}

    return await _answered(request, False, fields)


async def api_upgrade(request: web.Request) -> web.Response:
    """Make the token's player a bot, for good: only while they have no rated game
    (``bot_refused``); recorded in the audit log as their own act."""
    hub = request.app[HUB_KEY]
    try:
        held = await _holder(request, False)
        _limit(request, held.player.name)
        if not held.player.bot:
            await levers.become_bot(hub.store, held.player.name)
    except ServerError as error:
        hub.metrics.error(str(error.code))
        return refusal(error, STATUS)
    return web.json_response(msgspec.to_builtins(ApiOk()))


# -- streams -------------------------------------------------------------------------------


async def _stream(request: web.Request, bot: bool, first: Callable[[Hub, Session], Awaitable[None]],
                  feed: Callable[[list[Any]], list[BotEvent]], done: Callable[[], bool]
                  ) -> web.StreamResponse:
    """A stream of ``feed``'s lines from a session of the token's player: ``first`` opens
    what it follows (a refusal there is the answer's status); it ends when ``done``, when
    the session closes (a ban, a revoked token, the server's shutdown) or the client goes."""
    hub = request.app[HUB_KEY]
    address = client_of(request)
    try:
        held = await _holder(request, bot)
        _limit(request, held.player.name)
    except ServerError as error:
        hub.metrics.error(str(error.code))
        return refusal(error, STATUS)
    if not await hub.limits.add_connection(address):
        hub.metrics.error(ErrorCode.TOO_MANY_CONNECTIONS)
        return refusal(LimitReached(f"at most {hub.limits.max_connections} connections from "
                                    "one address", ErrorCode.TOO_MANY_CONNECTIONS, 1.0), STATUS)
    wakeup = _Wakeup()
    session = Session(address, outlet=wakeup)
    hub.connected(session)
    try:
        try:
            await hub.attach(session, held.player, held.device, follows=False)
            await first(hub, session)
        except ServerError as error:
            hub.metrics.error(str(error.code))
            return refusal(error, STATUS)
        response = web.StreamResponse(headers={"Content-Type": NDJSON,
                                               "Cache-Control": "no-cache"})
        await response.prepare(request)
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        while not wakeup.hung_up:
            wakeup.event.clear()
            messages = [decode_server_message(frame) for frame in session.take_frames()]
            lines = b"".join(msgspec.json.encode(event) + b"\n" for event in feed(messages))
            if lines:
                await response.write(lines)
                quiet_since = loop.time()
            if done() or session.closed:
                break
            left = quiet_since + KEEP_ALIVE - loop.time()
            if left <= 0:
                await response.write(b"\n")
                quiet_since = loop.time()
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.event.wait(), left)
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response
    except ConnectionError:  # the client went
        return web.StreamResponse()
    finally:
        hub.disconnected(session)
        await hub.limits.remove_connection(address)
        if not session.closed:
            session.close(CLOSE_GOING_AWAY, "")


async def api_stream_events(request: web.Request) -> web.StreamResponse:
    """The player's events: a ``gameStart`` for each game going on and a ``challenge`` for
    each challenge to them waiting (a cluster's lobby answers from the node holding it;
    ``unavailable`` if it does not), then challenges and games as they come."""
    events = EventFeed()

    async def first(hub: Hub, session: Session) -> None:
        name = session.name or ""
        for game_id in await hub.router.games_of(name):
            await hub.handle(session, Watch(game=game_id))  # its state: a gameStart
        for challenge in await hub.lobby.challenges_to(name):  # a cluster's: from its holder
            session.send(ChallengeReceived(challenge=challenge))

    return await _stream(request, False, first, events.feed_all, lambda: False)


async def api_stream_game(request: web.Request) -> web.StreamResponse:
    """One game: ``gameFull``, then ``gameState`` and ``chatLine``, until it is over."""
    game_id = request.match_info["id"]
    game = GameFeed(game_id)

    async def first(hub: Hub, session: Session) -> None:
        await hub.router.request(session, Watch(game=game_id))  # refused: no_such_game

    return await _stream(request, True, first, game.feed_all, lambda: game.over)
