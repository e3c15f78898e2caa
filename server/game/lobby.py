"""The lobby as a pure state machine: matchmaking requests in, effects out.

``LobbyCore`` (the lobby's sans-I/O core, as ``GameRoom`` is the game's) answers each
matchmaking request of a player with the ``Matchmaker`` (seeks, pools, private codes) and
``Challenges`` (challenges by name), and returns what must happen: a ``Reply`` to the asker,
a ``Tell`` to a player online, a ``ToLobby`` delta for the lobby's subscribers, a ``Pair`` or a
``PlayComputer`` game to start. It never awaits or reads a clock (``now`` comes in); a refusal
raises ``ServerError`` with a stable code, before any effect. ``LiveGames`` is the list of
games the lobby shows. The node's ``server.node.lobby.Lobby`` carries the effects out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, assert_never

from engine import O, X
from server.errors import ServerError
from server.game.challenges import Challenges, OpenChallenge
from server.game.matchmaking import Matchmaker, Pairing, WaitingSeek
from server.game.records import TimeControl
from server.game.room import GameRoom, RoomSeat, computer_seat
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
    ClockSpec,
    ErrorCode,
    GameSummary,
    LobbyDelta,
    LobbySnapshot,
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
    ServerMessage,
)

LOBBY_GAMES_SHOWN = 100
COMPUTER_GAMES_PER_PLAYER = 3
"""Games against the computer one player may have going at once: the computer's moves take
turns for the same search processes, so one player's many games must not queue ahead of
everyone else's (docs/security.md)."""


def time_control(clock: ClockSpec | None) -> TimeControl | None:
    return None if clock is None else TimeControl(float(clock.initial), float(clock.increment))


def clock_spec(clock: TimeControl | None) -> ClockSpec | None:
    return None if clock is None else ClockSpec(int(clock.initial), int(clock.increment))


# -- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """Send ``message`` to the connection that asked."""

    message: ServerMessage


@dataclass(frozen=True, slots=True)
class Tell:
    """Send ``message`` to every connection of the player ``name``, on any node."""

    name: str
    message: ServerMessage


@dataclass(frozen=True, slots=True)
class ToLobby:
    """Send ``delta`` to the lobby's subscribers."""

    delta: LobbyDelta


@dataclass(frozen=True, slots=True)
class Pair:
    """Start ``pairing``'s game, its players at their ratings. ``asked``: the asker's
    request paired it (its ``game`` carries ``ref``, the request's id). If it cannot start,
    the asker hears the refusal and the other player (both, if nobody asked) is told."""

    pairing: Pairing
    asked: bool = False
    ref: object = None


@dataclass(frozen=True, slots=True)
class PlayComputer:
    """Start a casual, unlisted game against the computer for the asker."""

    seats: tuple[RoomSeat, RoomSeat]
    variant: str
    clock: ClockSpec | None
    ref: object = None


Effect = Reply | Tell | ToLobby | Pair | PlayComputer


class WhoIsOnline(Protocol):
    """Who is online, as the lobby reads it (``server.node.lobby_interfaces.OnlinePlayers``)."""

    @property
    def online(self) -> int: ...

    def names(self) -> Iterable[str]: ...

    def rating(self, name: str) -> float | None: ...

    def is_bot(self, name: str) -> bool: ...

    def is_online(self, name: str) -> bool: ...


def game_summary(room: GameRoom) -> GameSummary:
    """The room as the live list shows it."""
    return GameSummary(
        id=room.id, variant=room.board.geometry.name,  # type: ignore[arg-type]
        clock=room.clock_spec, rated=room.rated, x=room.seats[X].name,
        o=room.seats[O].name, ply=room.board.ply, x_bot=room.seats[X].bot,
        o_bot=room.seats[O].bot,
    )


class LiveGames:
    """The games the lobby lists, oldest first: public, going on, with a human player in
    them (rooms held here, or in a cluster summaries of games held elsewhere)."""

    def __init__(self) -> None:
        self.listed: dict[str, GameRoom | GameSummary] = {}
        self.unlisted: set[str] = set()  # private-room and computer games: never shown

    def relist(self, room: GameRoom) -> list[LobbyDelta]:
        """Add ``room`` to the list or take it off, as it now should be."""
        show = room.id not in self.unlisted and not room.over and room.anyone_in
        if show == (room.id in self.listed):
            return []
        if show:
            self.listed[room.id] = room
            return [LobbyDelta(games_added=[game_summary(room)])]
        del self.listed[room.id]
        return [LobbyDelta(games_removed=[room.id])]

    def show(self, game: GameSummary) -> list[LobbyDelta]:
        """List a game held elsewhere (a cluster's), or bring its entry up to date."""
        added = game.id not in self.listed
        self.listed[game.id] = game
        return [LobbyDelta(games_added=[game])] if added else []

    def hide(self, game_id: str) -> list[LobbyDelta]:
        """Take a game off the list, if it is on it."""
        if self.listed.pop(game_id, None) is None:
            return []
        return [LobbyDelta(games_removed=[game_id])]

    def unlist(self, game_id: str) -> None:
        self.unlisted.add(game_id)

    def forget(self, game_id: str) -> None:
        self.unlisted.discard(game_id)

    def summaries(self) -> list[GameSummary]:
        """The last ``LOBBY_GAMES_SHOWN`` games listed, as the lobby shows them."""
        listed = list(self.listed.values())[-LOBBY_GAMES_SHOWN:]
        return [g if isinstance(g, GameSummary) else game_summary(g) for g in listed]


class LobbyCore:
    """Matchmaking and what the lobby's subscribers see; see the module docstring.
    ``watched`` says whether anyone follows the lobby's deltas (no one: they are not
    worked out)."""

    def __init__(
        self, presence: WhoIsOnline, watched: Callable[[], bool],
        matchmaker: Matchmaker | None = None, challenges: Challenges | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.presence = presence
        self.watched = watched
        self.matchmaker = matchmaker or Matchmaker()
        self.challenges = challenges or Challenges()
        self.games = LiveGames()
        self._rng = rng or random.Random()
        self._online_shown = -1
        self._players_shown: list[PlayerOnline] = []
        self._seeks_shown: list[str] = [s.id for s in self.matchmaker.seeks()]

    # -- the requests ----------------------------------------------------------------------

    def decide(self, name: str, rating: float, message: MatchmakingRequest, now: float,
               computer_games: int = 0) -> list[Effect]:
        """Answer one matchmaking request of the player ``name`` rated ``rating``
        (``computer_games``: how many games against the computer they have going)."""
        match message:
            case Seek():
                seek = self.matchmaker.create_seek(
                    name, message.variant, time_control(message.clock), message.rated,
                    message.colour, now, rating)
                return [Reply(Seeking(seek=self._seek_info(seek), ref=message.id)),
                        *self._seeks_changed()]
            case CancelSeek():
                self.matchmaker.cancel_seek(message.seek, name)
                return [Reply(Ack(ref=message.id)), *self._seeks_changed()]
            case AcceptSeek():
                pairing = self.matchmaker.accept_seek(message.seek, name)
                return [*self._seeks_changed(), Pair(pairing, True, message.id)]
            case Quick():
                self.matchmaker.join_pool(name, message.variant, time_control(message.clock),
                                          rating, now)
                queued = Queued(variant=message.variant, clock=message.clock, ref=message.id)
                return [Reply(queued), *self._pair_pools(now)]
            case CancelQuick():
                self.matchmaker.leave_pool(name)
                return [Reply(Ack(ref=message.id))]
            case PrivateCreate():
                room = self.matchmaker.create_private_room(
                    name, message.variant, time_control(message.clock), message.rated,
                    message.colour, now)
                return [Reply(PrivateCreated(code=room.code, variant=message.variant,
                                             clock=message.clock, ref=message.id))]
            case PrivateJoin():
                return [Pair(self.matchmaker.join_private_room(message.code, name, now),
                             True, message.id)]
            case PrivateCancel():
                self.matchmaker.close_private_room(name)
                return [Reply(Ack(ref=message.id))]
            case PlayAI():
                return self._play_computer(name, rating, message, computer_games)
            case Challenge() | ChallengeAccept() | ChallengeDecline() | ChallengeCancel():
                return self._challenge(name, message)
            case _:
                assert_never(message)

    def _play_computer(self, name: str, rating: float, message: PlayAI, going: int
                       ) -> list[Effect]:
        if going >= COMPUTER_GAMES_PER_PLAYER:
            raise ServerError(
                f"you have {going} games against the computer going; finish, resign or "
                "abort one first", ErrorCode.TOO_MANY_COMPUTER_GAMES,
            )
        effects = self.withdraw(name) if self.matchmaker.waiting_in(name) is not None else []
        human, computer = RoomSeat(name, name, round(rating)), computer_seat(message.level)
        colour = message.colour
        if colour == "random":
            colour = "x" if self._rng.random() < 0.5 else "o"
        seats = (human, computer) if colour == "x" else (computer, human)
        return [*effects, PlayComputer(seats, message.variant, message.clock, message.id)]

    def _challenge(self, name: str, message: Challenge | ChallengeAccept | ChallengeDecline
                   | ChallengeCancel) -> list[Effect]:
        match message:
            case Challenge():  # all websocket players are registered: a rated one needs no more
                if not self.presence.is_online(message.name):
                    raise ServerError(f"{message.name} is not online", ErrorCode.NO_SUCH_PLAYER)
                challenge = self.challenges.create(
                    name, message.name, message.variant, time_control(message.clock),
                    message.rated, message.colour)
                info = challenge_info(challenge)
                return [Reply(ChallengeSent(challenge=info, ref=message.id)),
                        Tell(challenge.challenged, ChallengeReceived(challenge=info))]
            case ChallengeAccept():
                challenge, pairing = self.challenges.accept(message.challenge, name)
                if not self.presence.is_online(challenge.challenger):  # gone, not yet lapsed
                    raise ServerError(f"{challenge.challenger} is not online",
                                      ErrorCode.NO_SUCH_CHALLENGE)
                return [*self.withdraw(pairing.x), *self.withdraw(pairing.o),
                        Pair(pairing, True, message.id)]
            case ChallengeDecline():
                challenge = self.challenges.decline(message.challenge, name)
                gone = ChallengeGone(challenge=challenge.id, reason="declined")
                return [Reply(Ack(ref=message.id)), Tell(challenge.challenger, gone)]
            case ChallengeCancel():
                challenge = self.challenges.cancel(message.challenge, name)
                gone = ChallengeGone(challenge=challenge.id, reason="cancelled")
                return [Reply(Ack(ref=message.id)), Tell(challenge.challenged, gone)]
            case _:
                assert_never(message)

    # -- comings and goings, and every second ----------------------------------------------

    def gone(self, name: str) -> list[Effect]:
        """``name``'s last connection closed: withdraw their seek, lapse their challenges."""
        effects = self.withdraw(name)
        for challenge in self.challenges.lapse(name):
            other = challenge.challenged if challenge.challenger == name else challenge.challenger
            effects.append(Tell(other, ChallengeGone(challenge=challenge.id, reason="offline")))
        return effects

    def withdraw(self, name: str) -> list[Effect]:
        """``name`` no longer waits for a game (gone, or starting one with the computer)."""
        if self.matchmaker.withdraw(name) is None:
            return []
        return self._seeks_changed()

    def tick(self, now: float) -> list[Effect]:
        """Pair the quick-pairing pools, expire old seeks, tell the lobby who is on."""
        effects = self._pair_pools(now)
        self.matchmaker.expire(now)
        return effects + self._online_changed()

    def _pair_pools(self, now: float) -> list[Effect]:
        return [Pair(pairing) for pairing in self.matchmaker.pair_waiting_players(now)]

    # -- what the lobby shows --------------------------------------------------------------

    def snapshot(self, ref: str | int | None = None) -> LobbySnapshot:
        """The lobby as a new subscriber first sees it."""
        return LobbySnapshot(seeks=self.seeks(), games=self.games.summaries(),
                             online=self.presence.online, players=self.players(), ref=ref)

    def seeks(self) -> list[SeekInfo]:
        return [self._seek_info(s) for s in self.matchmaker.seeks()]

    def _seek_info(self, seek: WaitingSeek) -> SeekInfo:
        """``seek`` as the lobby shows it, its seeker marked if a bot (online: it is theirs)."""
        return seek_info(seek, self.presence.is_bot(seek.seeker))

    def players(self) -> list[PlayerOnline]:
        """Who is online, the first ``PLAYERS_SHOWN`` by name, with their ratings."""
        names = sorted(self.presence.names(), key=lambda n: (n.lower(), n))[:PLAYERS_SHOWN]
        presence = self.presence
        return [PlayerOnline(name=n, rating=_round(presence.rating(n)), bot=presence.is_bot(n))
                for n in names]

    def _seeks_changed(self) -> list[Effect]:
        """The full list of seeks as removed-and-added (seeks are few), if watched."""
        if not self.watched():
            return []
        seeks = self.seeks()
        shown = set(self._seeks_shown)
        ids = {s.id for s in seeks}
        removed = [s for s in self._seeks_shown if s not in ids]
        added = [s for s in seeks if s.id not in shown]
        self._seeks_shown = [s.id for s in seeks]
        if not removed and not added:
            return []
        return [ToLobby(LobbyDelta(seeks_added=added, seeks_removed=removed))]

    def _online_changed(self) -> list[Effect]:
        if not self.watched():
            return []
        online, players = self.presence.online, self.players()
        changed = players != self._players_shown
        if online == self._online_shown and not changed:
            return []
        self._online_shown, self._players_shown = online, players
        return [ToLobby(LobbyDelta(online=online, players=players if changed else None))]


def seek_info(seek: WaitingSeek, bot: bool = False) -> SeekInfo:
    return SeekInfo(
        id=seek.id, name=seek.seeker, rating=None if seek.rating is None else round(seek.rating),
        variant=seek.variant, clock=clock_spec(seek.clock),  # type: ignore[arg-type]
        rated=seek.rated, colour=seek.colour, bot=bot,
    )


def challenge_info(challenge: OpenChallenge) -> ChallengeInfo:
    return ChallengeInfo(
        id=challenge.id, by=challenge.challenger, to=challenge.challenged,
        variant=challenge.variant,  # type: ignore[arg-type]
        clock=clock_spec(challenge.clock), rated=challenge.rated, colour=challenge.colour,
    )


def _round(rating: float | None) -> int | None:
    return None if rating is None else round(rating)
