"""The lobby and matchmaking: seeks, quick pairing, private codes, the live list, who is on.

``Lobby`` answers the lobby's requests with the ``Matchmaker`` (seeks, pools with their rating
windows, private codes), starts each pairing's game through ``Rooms.start_game``, and keeps
the lobby's subscribers up to date with deltas: seeks added and removed, games listed and
unlisted (it is the rooms' ``Listing``), and who is online. Challenges by name
(``server.game.challenges``) are seeks addressed to one player online.

``Lobby`` is the ``LobbyService`` (``server.node.lobby_interfaces``) of one server. Each request
is answered in one place: ``handle`` (subscribing here) and ``decide`` (the matchmaking
requests), one ``match`` each, so mypy checks that every request of ``LobbyRequest`` has its
case. Who is online comes from an ``OnlinePlayers`` (on one server: ``Delivery``'s sessions),
and the requests come from a ``Caller`` (on one server: the ``Session``). In a cluster one node at a
time runs this object (``server.cluster.lobby_holder``, lila's single lobby actor): its callers
are sessions on any node, its presence is every node's, its deltas go out on the bus (its
``fan_out``), its state is written before each game starts (its ``checkpoint``), and the games
a player has going against the computer are counted from the cluster's record.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import assert_never

from engine import O, X
from server.errors import ServerError
from server.game.challenges import Challenges, OpenChallenge
from server.game.matchmaking import Matchmaker, Pairing, WaitingSeek
from server.game.room import GameRoom, RoomSeat, computer_seat
from server.node.computer_turns import seed
from server.node.delivery import Delivery
from server.node.lobby_interfaces import Caller, LocalOnlinePlayers, OnlinePlayers
from server.node.rooms import Rooms, clock_spec, time_control
from server.node.session import Session
from server.protocol import (
    PLAYERS_SHOWN,
    AcceptSeek,
    Ack,
    CancelQuick,
    CancelSeek,
    Challenge,
    ChallengeAccept,
    ChallengeCancel,
    ChallengeDecline,
    ChallengeGone,
    ChallengeInfo,
    ChallengeReceived,
    ChallengeSent,
    ErrorCode,
    GameSummary,
    LobbyDelta,
    LobbyRequest,
    LobbySnapshot,
    LobbySub,
    LobbyUnsub,
    MatchmakingRequest,
    PlayAI,
    PlayerOnline,
    PrivateCancel,
    PrivateCreate,
    PrivateCreated,
    PrivateJoin,
    Queued,
    Quick,
    Seek,
    SeekInfo,
    Seeking,
    encode,
    error_message,
)

LOBBY_GAMES_SHOWN = 100
COMPUTER_GAMES_PER_PLAYER = 3
"""Games against the computer one player may have going at once: the computer's moves take
turns for the same search processes, so one player's many games must not queue ahead of
everyone else's (docs/security.md)."""


def game_summary(room: GameRoom) -> GameSummary:
    """The room as the live list shows it."""
    return GameSummary(
        id=room.id, variant=room.board.geometry.name,  # type: ignore[arg-type]
        clock=room.clock_spec, rated=room.rated, x=room.seats[X].name,
        o=room.seats[O].name, ply=room.board.ply,
    )


class Lobby:
    """Matchmaking and the lobby's subscribers; see the module docstring.

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
        self.delivery = delivery
        self.presence: OnlinePlayers = presence or LocalOnlinePlayers(delivery)
        self.matchmaker = matchmaker or Matchmaker()
        self.subscribers: set[Session] = set()
        self.fan_out = fan_out
        self.checkpoint = checkpoint
        self.computer_games = computer_games or self._computer_games_here
        # the games the lobby shows, oldest first: rooms held here, or (a cluster) summaries
        self._listed: dict[str, GameRoom | GameSummary] = {}
        self._unlisted: set[str] = set()  # private-room and computer games: never shown
        self._online_shown = -1
        self._players_shown: list[PlayerOnline] = []
        self.challenges = challenges or Challenges()
        self._seeks_shown: list[str] = [s.id for s in self.matchmaker.seeks()]

    def _now(self) -> float:
        return self.rooms.now()

    async def start(self) -> None:
        """Nothing to start on one server (a cluster's lobby joins the others here)."""

    async def close(self) -> None:
        """Nothing to stop on one server."""

    def identified(self, session: Session) -> None:
        """``session`` has said hello (one server: ``Delivery`` already counts it)."""

    # -- every second ----------------------------------------------------------------------

    async def tick(self, now: float) -> None:
        """Pair the quick-pairing pools, expire old seeks, tell the lobby who is on."""
        for pairing in self.matchmaker.pair_waiting_players(now):
            await self._start_pairing(pairing)
        self.matchmaker.expire(now)
        self._publish_online()

    # -- the requests ----------------------------------------------------------------------

    async def handle(self, session: Session, message: LobbyRequest) -> None:
        """Answer one lobby request of ``session``, a connection here."""
        match message:
            case LobbySub():
                await self.subscribe(session, message)
            case LobbyUnsub():
                await self.unsubscribe(session, message)
            case _:
                await self.decide(session, message)

    async def decide(self, caller: Caller, message: MatchmakingRequest) -> None:
        """Carry out one matchmaking request of ``caller`` (here, or on another node)."""
        match message:
            case Seek():
                await self.seek(caller, message)
            case CancelSeek():
                await self.cancel_seek(caller, message)
            case AcceptSeek():
                await self.accept_seek(caller, message)
            case Quick():
                await self.quick(caller, message)
            case CancelQuick():
                await self.cancel_quick(caller, message)
            case PrivateCreate():
                await self.private_create(caller, message)
            case PrivateJoin():
                await self.private_join(caller, message)
            case PrivateCancel():
                await self.private_cancel(caller, message)
            case PlayAI():
                await self.play_ai(caller, message)
            case Challenge():
                await self.challenge(caller, message)
            case ChallengeAccept():
                await self.challenge_accept(caller, message)
            case ChallengeDecline():
                await self.challenge_decline(caller, message)
            case ChallengeCancel():
                await self.challenge_cancel(caller, message)
            case _:
                assert_never(message)

    # -- subscribers -----------------------------------------------------------------------

    async def subscribe(self, session: Session, message: LobbySub) -> None:
        self.subscribers.add(session)
        session.lobby = True
        session.send(self.snapshot(message.id))

    def snapshot(self, ref: str | int | None = None) -> LobbySnapshot:
        """The lobby as a new subscriber first sees it."""
        return LobbySnapshot(seeks=self.seeks(), games=self.live_games(),
                             online=self.presence.online, players=self.players(), ref=ref)

    async def view(self) -> LobbySnapshot:
        """The lobby as the HTTP API shows it: here, this node's (a cluster's lobby asks its
        holder, and may raise ``Unavailable``)."""
        return self.snapshot()

    async def unsubscribe(self, session: Session, message: LobbyUnsub) -> None:
        self.unsubscribed(session)
        session.send(Ack(ref=message.id))

    def unsubscribed(self, session: Session) -> None:
        self.subscribers.discard(session)
        session.lobby = False

    def players(self) -> list[PlayerOnline]:
        """Who is online, the first ``PLAYERS_SHOWN`` by name, with their ratings."""
        names = sorted(self.presence.names(), key=lambda n: (n.lower(), n))[:PLAYERS_SHOWN]
        return [PlayerOnline(name=n, rating=self._round(self.presence.rating(n))) for n in names]

    @staticmethod
    def _round(rating: float | None) -> int | None:
        return None if rating is None else round(rating)

    def seeks(self) -> list[SeekInfo]:
        return [self._seek_info(s) for s in self.matchmaker.seeks()]

    def _seek_info(self, seek: WaitingSeek) -> SeekInfo:
        return SeekInfo(
            id=seek.id, name=seek.seeker,
            rating=None if seek.rating is None else round(seek.rating),
            variant=seek.variant, clock=clock_spec(seek.clock),  # type: ignore[arg-type]
            rated=seek.rated, colour=seek.colour,
        )

    def live_games(self) -> list[GameSummary]:
        """The games the lobby lists: public, going on, with a human player in them."""
        listed = list(self._listed.values())[-LOBBY_GAMES_SHOWN:]
        return [g if isinstance(g, GameSummary) else game_summary(g) for g in listed]

    # -- the rooms' Listing ----------------------------------------------------------------

    def relist(self, room: GameRoom) -> None:
        """Add ``room`` to the lobby's list or take it off, as it now should be."""
        show = room.id not in self._unlisted and not room.over and room.anyone_in
        if show == (room.id in self._listed):
            return
        if show:
            self._listed[room.id] = room
            self._to_lobby(LobbyDelta(games_added=[game_summary(room)]))
        else:
            del self._listed[room.id]
            self._to_lobby(LobbyDelta(games_removed=[room.id]))

    def show(self, game: GameSummary) -> None:
        """List a game held elsewhere (a cluster's), or bring its entry up to date."""
        if game.id not in self._listed:
            self._to_lobby(LobbyDelta(games_added=[game]))
        self._listed[game.id] = game

    def hide(self, game_id: str) -> None:
        """Take a game off the list, if it is on it."""
        if self._listed.pop(game_id, None) is not None:
            self._to_lobby(LobbyDelta(games_removed=[game_id]))

    def unlist(self, game_id: str) -> None:
        self._unlisted.add(game_id)

    def forget(self, game_id: str) -> None:
        self._unlisted.discard(game_id)

    # -- deltas ----------------------------------------------------------------------------

    @property
    def _watched(self) -> bool:
        return self.fan_out is not None or bool(self.subscribers)

    def _to_lobby(self, delta: LobbyDelta) -> None:
        frame = encode(delta)
        if self.fan_out is not None:
            self.fan_out(frame)
            return
        for session in self.subscribers:
            session.send_raw(frame)

    def _publish_seeks(self) -> None:
        """Send the lobby the full list of seeks as removed-and-added (seeks are few)."""
        if not self._watched:
            return
        seeks = self.seeks()
        shown = set(self._seeks_shown)
        ids = {s.id for s in seeks}
        removed = [s for s in self._seeks_shown if s not in ids]
        added = [s for s in seeks if s.id not in shown]
        self._seeks_shown = [s.id for s in seeks]
        if removed or added:
            self._to_lobby(LobbyDelta(seeks_added=added, seeks_removed=removed))

    def _publish_online(self) -> None:
        if not self._watched:
            return
        online, players = self.presence.online, self.players()
        changed = players != self._players_shown
        if online != self._online_shown or changed:
            self._online_shown, self._players_shown = online, players
            self._to_lobby(LobbyDelta(online=online, players=players if changed else None))

    # -- seeks, quick pairing, private rooms, the computer ---------------------------------

    def gone(self, name: str) -> None:
        """``name``'s last connection here closed: withdraw their seek, lapse challenges."""
        self.withdraw(name)
        for challenge in self.challenges.lapse(name):
            other = challenge.challenged if challenge.challenger == name else challenge.challenger
            self._tell(other, ChallengeGone(challenge=challenge.id, reason="offline"))

    def withdraw(self, name: str) -> None:
        """``name`` no longer waits for a game (gone, or starting one with the computer)."""
        if self.matchmaker.withdraw(name) is not None:
            self._publish_seeks()

    @staticmethod
    def _rating(session: Caller) -> float:
        assert session.player is not None
        return session.player.rating

    async def seek(self, session: Caller, message: Seek) -> None:
        seek = self.matchmaker.create_seek(
            session.name or "", message.variant, time_control(message.clock), message.rated,
            message.colour, self._now(), self._rating(session),
        )
        session.send(Seeking(seek=self._seek_info(seek), ref=message.id))
        self._publish_seeks()

    async def cancel_seek(self, session: Caller, message: CancelSeek) -> None:
        self.matchmaker.cancel_seek(message.seek, session.name or "")
        session.send(Ack(ref=message.id))
        self._publish_seeks()

    async def accept_seek(self, session: Caller, message: AcceptSeek) -> None:
        pairing = self.matchmaker.accept_seek(message.seek, session.name or "")
        self._publish_seeks()
        await self._start_pairing(pairing, ref=message.id, requester=session)

    async def quick(self, session: Caller, message: Quick) -> None:
        self.matchmaker.join_pool(
            session.name or "", message.variant, time_control(message.clock),
            self._rating(session), self._now(),
        )
        session.send(Queued(variant=message.variant, clock=message.clock, ref=message.id))
        for pairing in self.matchmaker.pair_waiting_players(self._now()):
            await self._start_pairing(pairing)

    async def cancel_quick(self, session: Caller, message: CancelQuick) -> None:
        self.matchmaker.leave_pool(session.name or "")
        session.send(Ack(ref=message.id))

    async def private_create(self, session: Caller, message: PrivateCreate) -> None:
        room = self.matchmaker.create_private_room(
            session.name or "", message.variant, time_control(message.clock), message.rated,
            message.colour, self._now(),
        )
        session.send(PrivateCreated(code=room.code, variant=message.variant,
                                    clock=message.clock, ref=message.id))

    async def private_join(self, session: Caller, message: PrivateJoin) -> None:
        pairing = self.matchmaker.join_private_room(message.code, session.name or "",
                                                    self._now())
        await self._start_pairing(pairing, ref=message.id, requester=session)

    async def private_cancel(self, session: Caller, message: PrivateCancel) -> None:
        self.matchmaker.close_private_room(session.name or "")
        session.send(Ack(ref=message.id))

    async def play_ai(self, session: Caller, message: PlayAI) -> None:
        name = session.name or ""
        going = await self.computer_games(name)
        if going >= COMPUTER_GAMES_PER_PLAYER:
            raise ServerError(
                f"you have {going} games against the computer going; finish, resign or "
                "abort one first", ErrorCode.TOO_MANY_COMPUTER_GAMES,
            )
        if self.matchmaker.waiting_in(name) is not None:
            self.withdraw(name)
        human = RoomSeat(name, name, round(self._rating(session)))
        computer = computer_seat(message.level)
        colour = message.colour
        if colour == "random":
            colour = "x" if seed(f"{name}{time.time()}") % 2 else "o"
        seats = (human, computer) if colour == "x" else (computer, human)
        if self.checkpoint is not None:
            await self.checkpoint()
        await self.rooms.start_game(seats, message.variant, message.clock, rated=False,
                                    ref=message.id, requester=_here(session), listed=False)

    async def _computer_games_here(self, name: str) -> int:
        """How many games against the computer ``name`` has going (held here)."""
        return sum(
            1 for room in self.rooms.held.values()
            if not room.over and room.computer_side is not None and room.side_of(name) is not None
        )

    async def _start_pairing(
        self, pairing: Pairing, ref: object = None, requester: Caller | None = None
    ) -> None:
        if self.checkpoint is not None:  # the pairing is kept before its game exists
            await self.checkpoint()
        rating = self.rooms.player_rating
        x = RoomSeat(pairing.x, pairing.x, round(await rating(pairing.x)))
        o = RoomSeat(pairing.o, pairing.o, round(await rating(pairing.o)))
        try:
            await self.rooms.start_game((x, o), pairing.variant, clock_spec(pairing.clock),
                                        rated=pairing.rated, ref=ref, requester=_here(requester),
                                        listed=not pairing.private)
        except ServerError as error:  # the requester hears the refusal; the other is told
            told = encode(error_message(error))
            for name in {pairing.x, pairing.o} - {requester.name if requester else None}:
                self.presence.tell(name, told)
            raise

    # -- challenges by name ----------------------------------------------------------------

    def _tell(self, name: str, message: ChallengeReceived | ChallengeGone) -> None:
        self.presence.tell(name, encode(message))

    def _challenge_info(self, challenge: OpenChallenge) -> ChallengeInfo:
        return ChallengeInfo(
            id=challenge.id, by=challenge.challenger, to=challenge.challenged,
            variant=challenge.variant,  # type: ignore[arg-type]
            clock=clock_spec(challenge.clock), rated=challenge.rated, colour=challenge.colour,
        )

    async def challenge(self, session: Caller, message: Challenge) -> None:
        """Challenge a player online (all websocket players are registered, so a rated
        challenge needs nothing more)."""
        if not self.presence.is_online(message.name):
            raise ServerError(f"{message.name} is not online", ErrorCode.NO_SUCH_PLAYER)
        challenge = self.challenges.create(
            session.name or "", message.name, message.variant, time_control(message.clock),
            message.rated, message.colour,
        )
        info = self._challenge_info(challenge)
        session.send(ChallengeSent(challenge=info, ref=message.id))
        self._tell(challenge.challenged, ChallengeReceived(challenge=info))

    async def challenge_accept(self, session: Caller, message: ChallengeAccept) -> None:
        challenge, pairing = self.challenges.accept(message.challenge, session.name or "")
        if not self.presence.is_online(challenge.challenger):  # gone, not yet lapsed
            raise ServerError(f"{challenge.challenger} is not online",
                              ErrorCode.NO_SUCH_CHALLENGE)
        for name in (pairing.x, pairing.o):
            self.withdraw(name)
        await self._start_pairing(pairing, ref=message.id, requester=session)

    async def challenge_decline(self, session: Caller, message: ChallengeDecline) -> None:
        challenge = self.challenges.decline(message.challenge, session.name or "")
        session.send(Ack(ref=message.id))
        self._tell(challenge.challenger, ChallengeGone(challenge=challenge.id, reason="declined"))

    async def challenge_cancel(self, session: Caller, message: ChallengeCancel) -> None:
        challenge = self.challenges.cancel(message.challenge, session.name or "")
        session.send(Ack(ref=message.id))
        self._tell(challenge.challenged,
                   ChallengeGone(challenge=challenge.id, reason="cancelled"))


def _here(caller: Caller | None) -> Session | None:
    """The caller if it is a connection here (its ``game`` then carries the request's id)."""
    return caller if isinstance(caller, Session) else None
