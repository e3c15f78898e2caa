"""The lobby of one server: its subscribers, and the effects of ``LobbyCore`` carried out.

``Lobby`` passes each matchmaking request to the pure ``server.game.lobby.LobbyCore`` (seeks,
quick pairing, private codes, the computer, challenges by name) and carries out the effects it
returns: replies to the asker, messages to players online, deltas to the lobby's subscribers,
and games started through ``Rooms.start_game``. It is the rooms' ``Listing`` (the games the
lobby shows) and the ``LobbyService`` (``server.node.lobby_interfaces``) of one server. Who is
online comes from an ``OnlinePlayers`` (on one server: ``Delivery``'s sessions), and the
requests come from a ``Caller`` (on one server: the ``Session``).

In a cluster one node at a time runs this object (``server.cluster.lobby_holder``, lila's
single lobby actor): its callers are sessions on any node, its presence is every node's, its
deltas go out on the bus (its ``fan_out``), its state is written before each game starts (its
``checkpoint``), and the games a player has going against the computer are counted from the
cluster's record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import assert_never

from server.errors import ServerError
from server.game.challenges import Challenges
from server.game.lobby import (
    Effect,
    LobbyCore,
    Pair,
    PlayComputer,
    Reply,
    Tell,
    ToLobby,
    challenge_info,
    clock_spec,
)
from server.game.matchmaking import Matchmaker, Pairing
from server.game.room import GameRoom
from server.node.delivery import Delivery
from server.node.lobby_interfaces import Caller, LocalOnlinePlayers, OnlinePlayers
from server.node.rooms import Rooms
from server.node.session import Session
from server.protocol import (
    Ack,
    ChallengeInfo,
    GameSummary,
    LobbyDelta,
    LobbyRequest,
    LobbySnapshot,
    LobbySub,
    LobbyUnsub,
    MatchmakingRequest,
    PlayAI,
    encode,
    error_message,
)


class Lobby:
    """The lobby's subscribers and the carrying out of its decisions; see the module
    docstring.

    On one server only ``rooms`` and ``delivery`` are given. The node holding a cluster's
    lobby gives the rest: ``presence`` (every node's players), the ``matchmaker`` and
    ``challenges`` restored from Redis, ``fan_out`` (the deltas go to the bus instead of this
    server's subscribers), ``checkpoint`` (awaited before a game starts, so the pairing is
    kept first) and ``computer_games`` (how many games against the computer a player has
    going, wherever they are held)."""

    def __init__(
        self, rooms: Rooms, delivery: Delivery, presence: OnlinePlayers | None = None,
        matchmaker: Matchmaker | None = None, challenges: Challenges | None = None, *,
        fan_out: Callable[[bytes], None] | None = None,
        checkpoint: Callable[[], Awaitable[None]] | None = None,
        computer_games: Callable[[str], Awaitable[int]] | None = None,
    ) -> None:
        self.rooms = rooms
        self.presence: OnlinePlayers = presence or LocalOnlinePlayers(delivery)
        self.subscribers: set[Session] = set()
        self.fan_out = fan_out
        self.checkpoint = checkpoint
        self.computer_games = computer_games or self._computer_games_here
        self.core = LobbyCore(self.presence, self._watched, matchmaker, challenges)

    async def start(self) -> None:
        """Nothing to start on one server (a cluster's lobby joins the others here)."""

    async def close(self) -> None:
        """Nothing to stop on one server."""

    def identified(self, session: Session) -> None:
        """``session`` has said hello (one server: ``Delivery`` already counts it)."""

    async def tick(self, now: float) -> None:
        """The once-a-second round: pair the pools, expire old seeks, tell who is on."""
        await self._carry_out(self.core.tick(now))

    # -- the requests ----------------------------------------------------------------------

    async def handle(self, session: Session, message: LobbyRequest) -> None:
        """Answer one lobby request of ``session``, a connection here."""
        match message:
            case LobbySub():
                self.subscribers.add(session)
                session.lobby = True
                session.send(self.snapshot(message.id))
            case LobbyUnsub():
                self.unsubscribed(session)
                session.send(Ack(ref=message.id))
            case _:
                await self.decide(session, message)

    async def decide(self, caller: Caller, message: MatchmakingRequest) -> None:
        """Carry out one matchmaking request of ``caller`` (here, or on another node)."""
        name = caller.name or ""
        assert caller.player is not None  # said hello (the hub checks)
        going = await self.computer_games(name) if isinstance(message, PlayAI) else 0
        effects = self.core.decide(name, caller.player.rating, message, self.rooms.now(),
                                   going)
        await self._carry_out(effects, caller)

    def unsubscribed(self, session: Session) -> None:
        self.subscribers.discard(session)
        session.lobby = False

    def gone(self, name: str) -> None:
        """``name``'s last connection here closed: withdraw their seek, lapse challenges."""
        self._say(self.core.gone(name))

    def snapshot(self, ref: str | int | None = None) -> LobbySnapshot:
        """The lobby as a new subscriber first sees it."""
        return self.core.snapshot(ref)

    async def view(self) -> LobbySnapshot:
        """The lobby as the HTTP API shows it: here, this node's (a cluster's lobby asks its
        holder, and may raise ``Unavailable``)."""
        return self.snapshot()

    async def challenges_to(self, name: str) -> list[ChallengeInfo]:
        """The challenges to ``name`` waiting for an answer."""
        return [challenge_info(c) for c in self.core.challenges.sent_to(name)]

    def live_games(self) -> list[GameSummary]:
        return self.core.games.summaries()

    # -- the rooms' Listing ----------------------------------------------------------------

    def relist(self, room: GameRoom) -> None:
        """Add ``room`` to the lobby's list or take it off, as it now should be."""
        self._to_lobby(self.core.games.relist(room))

    def show(self, game: GameSummary) -> None:
        """List a game held elsewhere (a cluster's), or bring its entry up to date."""
        self._to_lobby(self.core.games.show(game))

    def hide(self, game_id: str) -> None:
        """Take a game off the list, if it is on it."""
        self._to_lobby(self.core.games.hide(game_id))

    def unlist(self, game_id: str) -> None:
        self.core.games.unlist(game_id)

    def forget(self, game_id: str) -> None:
        self.core.games.forget(game_id)

    # -- carrying the effects out ----------------------------------------------------------

    def _watched(self) -> bool:
        return self.fan_out is not None or bool(self.subscribers)

    async def _carry_out(self, effects: list[Effect], caller: Caller | None = None) -> None:
        """Carry out ``effects`` in order: the games to start are awaited."""
        for effect in effects:
            match effect:
                case Pair():
                    await self._start_pairing(effect.pairing, effect.ref,
                                              caller if effect.asked else None)
                case PlayComputer():
                    if self.checkpoint is not None:
                        await self.checkpoint()
                    people = iter(await self.rooms.player_seats(
                        *(seat.name for seat in effect.seats if seat.computer_level is None)))
                    x, o = [seat if seat.computer_level is not None  # a bot is marked
                            else next(people) for seat in effect.seats]
                    await self.rooms.start_game((x, o), effect.variant, effect.clock,
                                                rated=False, ref=effect.ref,
                                                requester=_here(caller), listed=False)
                case Reply() | Tell() | ToLobby():
                    self._say([effect], caller)
                case _:
                    assert_never(effect)

    def _say(self, effects: list[Effect], caller: Caller | None = None) -> None:
        """Carry out effects that only send."""
        for effect in effects:
            match effect:
                case Reply():
                    assert caller is not None
                    caller.send(effect.message)
                case Tell():
                    self.presence.tell(effect.name, encode(effect.message))
                case ToLobby():
                    self._to_lobby([effect.delta])
                case _:
                    raise AssertionError(f"{effect!r} is not said")

    def _to_lobby(self, deltas: list[LobbyDelta]) -> None:
        for delta in deltas:
            frame = encode(delta)
            if self.fan_out is not None:
                self.fan_out(frame)
                continue
            for session in self.subscribers:
                session.send_raw(frame)

    async def _start_pairing(self, pairing: Pairing, ref: object, requester: Caller | None
                             ) -> None:
        if self.checkpoint is not None:  # the pairing is kept before its game exists
            await self.checkpoint()
        x, o = await self.rooms.player_seats(pairing.x, pairing.o)
        try:
            await self.rooms.start_game((x, o), pairing.variant, clock_spec(pairing.clock),
                                        rated=pairing.rated, ref=ref, requester=_here(requester),
                                        listed=not pairing.private)
        except ServerError as error:  # the requester hears the refusal; the other is told
            told = encode(error_message(error))
            for name in {pairing.x, pairing.o} - {requester.name if requester else None}:
                self.presence.tell(name, told)
            raise

    async def _computer_games_here(self, name: str) -> int:
        """How many games against the computer ``name`` has going (held here)."""
        return sum(
            1 for room in self.rooms.held.values()
            if not room.over and room.computer_side is not None and room.side_of(name) is not None
        )


def _here(caller: Caller | None) -> Session | None:
    """The caller if it is a connection here (its ``game`` then carries the request's id)."""
    return caller if isinstance(caller, Session) else None
