"""A game room's state and what it shows: seats, board, clock, presence, and the versioned
events and snapshots built from them.

A version counts only what every receiver of the game's events receives (DESIGN.md's first
invariant): moves, the end, offers, presence, takebacks, the rematch. The two chats each reach
part of the room, so their lines and removals take no version: a line has its own number
(``ChatLine.line``, one count for both chats) and is kept as an ``Aside`` with the version it
was said at, which puts it in its place among the versioned events of a catch-up.

``RoomState`` is the read side of ``server.game.room.GameRoom`` (as python-chess's ``Board``
builds on ``BaseBoard``): it holds what a room is and answers queries (``snapshot``,
``since``, ``catch_up``, ``flag_at`` ...) without changing the game; ``GameRoom`` adds the
requests that do. Kept here too: the room's vocabulary (``Outbound`` messages and their
``Audience``, a request's ``Change`` and its ``Write``, ``RoomSeat``) and the event history
a reconnecting client replays. Pure.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass
from functools import cache

import msgspec

from engine import Board, Geometry, NotationError, O, X, format_cell, parse_cell
from server.defaults import GRACE
from server.errors import RoomError
from server.game.clock import GameClock
from server.game.records import MoveRecord
from server.protocol import (
    COLOURS,
    ChatLine,
    ChatRemoved,
    Clocks,
    ClockSpec,
    ErrorCode,
    GameEnd,
    GameState,
    MovePlayed,
    Offer,
    OfferKind,
    Presence,
    Rematched,
    SeatInfo,
    ServerMessage,
    TakenBack,
)

PlayerId = str
COMPUTER: PlayerId = "@computer"
DEFAULT_GRACE = GRACE
HISTORY_SIZE = 64
CHAT_KEPT = 50
RESULTS = {X: "1-0", O: "0-1", None: "1/2-1/2"}
Versioned = MovePlayed | GameEnd | Offer | Presence | TakenBack | Rematched


class Audience(enum.Enum):
    """Who an outbound message is for."""

    ROOM = "room"  # the seated players and every spectator
    PLAYER = "player"  # only ``Outbound.player``
    OTHERS = "others"  # everyone in the room but ``Outbound.player``
    SEATS = "seats"  # the seated players, ``Outbound.players``, and the moderators watching
    # (the players' chat)
    SPECTATORS = "spectators"  # everyone in the room but ``Outbound.players`` (theirs)


class Outbound(msgspec.Struct, frozen=True, gc=False):
    """A message and who should receive it. (Frozen structs, not dataclasses, for this and
    ``Write``: made a few times a move, in a tenth of the time.)"""

    message: ServerMessage
    audience: Audience = Audience.ROOM
    player: PlayerId | None = None
    players: tuple[PlayerId, ...] = ()  # the seated players, for SEATS and SPECTATORS


class Write(msgspec.Struct, frozen=True, gc=False):
    """What the store must keep before anyone hears of a change: the room's last move
    (``moved``: ``RoomState.last_move_record``), the ply a take-back returned to, and the
    game's end (written with the move that made it, in one transaction)."""

    moved: bool = False
    taken_back: int | None = None
    end: GameEnd | None = None


class Change(msgspec.Struct, gc=False):
    """What one request did to a room: the messages to send once ``write`` (None: nothing
    to keep) is stored."""

    events: list[Outbound]
    write: Write | None = None


@dataclass(frozen=True, slots=True)
class Aside:
    """An unversioned event for one of the two chats (a line, or its removal), kept with the
    game's version when it happened (``at``: after the event of that version)."""

    at: int
    event: ChatLine | ChatRemoved
    players: bool  # of the players' chat (else the spectators')


@dataclass(frozen=True, slots=True)
class RoomSeat:
    """Who sits on one side; ``computer_level`` marks the computer's seat, ``bot`` a bot
    account's."""

    player: PlayerId
    name: str
    rating: int | None = None
    computer_level: int | None = None
    bot: bool = False


@cache
def _cell_names(geometry: Geometry) -> tuple[str, ...]:
    """Every cell's notation on ``geometry``, by index: a move's, read from a table."""
    return tuple(format_cell(cell, geometry) for cell in range(geometry.size))


def computer_seat(level: int) -> RoomSeat:
    """The computer's seat at ``level`` (1-8), named as players see it."""
    return RoomSeat(COMPUTER, f"Computer (level {level})", computer_level=level)


@dataclass
class SeatPresence:
    """Whether a seat's player has the game open, and since when it has not."""

    online: bool = True
    gone_since: float | None = None


class RoomState:
    """One game's seats, board, clock, offers, presence and versioned event history, with
    the queries on them; ``GameRoom`` adds the requests."""

    def __init__(
        self,
        game_id: str,
        seats: tuple[RoomSeat, RoomSeat],
        variant: str = "4x4x4",
        clock: ClockSpec | None = None,
        rated: bool = False,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        if seats[X].player == seats[O].player:
            raise ValueError("a player cannot sit on both sides")
        self.id = game_id
        self.seats = seats
        self.board = Board(variant)
        self._names = _cell_names(self.board.geometry)  # each cell's notation, by index
        self.clock_spec = clock
        self.clock = None if clock is None else GameClock.fresh(clock.initial, clock.increment)
        self.rated = rated
        self.grace = grace
        self.version = 0
        self.end: GameEnd | None = None
        self.draw_offer: int | None = None  # the side whose draw offer stands
        self.rematch: set[int] = set()  # the sides that asked for a rematch
        self.rematch_game: str | None = None  # the rematch's id, once it has started
        self.spectators: dict[PlayerId, str] = {}  # id -> name
        self._presence = [SeatPresence(), SeatPresence()]
        self._history: deque[Versioned] = deque(maxlen=HISTORY_SIZE)
        self._known_from = 0  # the oldest version ``since`` can answer
        self._chat: deque[ChatLine] = deque(maxlen=CHAT_KEPT)
        self._lines = 0  # the chat lines numbered so far (both chats)
        self._asides: deque[Aside] = deque(maxlen=HISTORY_SIZE)
        self._asides_from = 0  # the oldest ``since`` whose chat is all in ``_asides``
        self.spectator_chat = True  # spectators may chat among themselves (the host's choice)
        self.listed = True  # false: a private room's or the computer's game, never listed
        self.tournament: str | None = None  # the tournament the game belongs to

    # -- queries ---------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.end is not None

    def side_of(self, player: PlayerId) -> int | None:
        """``X``, ``O``, or ``None`` when ``player`` is not seated here."""
        seats = self.seats
        if seats[X].player == player:
            return X
        if seats[O].player == player:
            return O
        return None

    @property
    def computer_side(self) -> int | None:
        """The side the computer plays, if any."""
        for side in (X, O):
            if self.seats[side].computer_level is not None:
                return side
        return None

    @property
    def computer_to_move(self) -> bool:
        """Whether the app should ask for the computer's move now (with ``board.ply``): the
        side to move is the computer's (a game has one computer seat at most)."""
        return self.end is None and \
            self.seats[len(self.board.moves) & 1].computer_level is not None

    @property
    def rematch_agreed(self) -> bool:
        return self.rematch == {X, O}

    def rematch_seats(self) -> tuple[RoomSeat, RoomSeat]:
        """The seats of the rematch: colours swapped."""
        return self.seats[O], self.seats[X]

    def abandoned_since(self) -> float | None:
        """Since when no human player has had the game open, or None if one has it open (or
        the game is over)."""
        if self.over:
            return None
        humans = [self._presence[side] for side in (X, O) if self._human(side)]
        if any(seat.online or seat.gone_since is None for seat in humans):
            return None
        return max(seat.gone_since for seat in humans if seat.gone_since is not None)

    @property
    def anyone_in(self) -> bool:
        """Whether a human seated in the game has it open."""
        return any(self._presence[side].online for side in (X, O) if self._human(side))

    def flag_at(self) -> float | None:
        """The ``now`` at which the side to move runs out of time, if its clock is running."""
        clock = self.clock
        if clock is None or self.end is not None or clock.running is None \
                or clock.started_at is None:
            return None
        return clock.started_at + clock.remaining[clock.running]

    def clocks(self, now: float) -> Clocks | None:
        """The clocks at ``now`` in milliseconds, as the protocol shows them."""
        clock = self.clock
        if clock is None:
            return None
        ticking = clock.running if clock.started_at is not None and not self.over else None
        return Clocks(
            x=round(clock.time_left(X, now) * 1000),
            o=round(clock.time_left(O, now) * 1000),
            running=None if ticking is None else COLOURS[ticking],
        )

    def snapshot(self, player: PlayerId | None, now: float, moderator: bool = False
                 ) -> GameState:
        """The full state as ``player`` should see it (``you`` is its colour if seated; a
        ``moderator`` watching is shown both chats)."""
        side = None if player is None else self.side_of(player)
        return GameState(
            id=self.id,
            variant=self.board.geometry.name,  # type: ignore[arg-type]
            clock=self.clock_spec,
            rated=self.rated,
            seats=[self._seat_info(s) for s in (X, O)],
            moves=list(self.board.moves),
            clocks=self.clocks(now),
            status="over" if self.over else "playing",
            version=self.version,
            you=None if side is None else COLOURS[side],
            draw_offer=None if self.draw_offer is None else COLOURS[self.draw_offer],
            rematch=[COLOURS[s] for s in sorted(self.rematch)],
            end=self.end,
            spectators=len(self.spectators),
            chat=[line for line in self._chat
                  if self._hears(line.side is not None, side, moderator)],
            spectator_chat=self.spectator_chat,
            rematch_game=self.rematch_game,
            tournament=self.tournament,
        )

    def since(self, version: int) -> list[Versioned] | None:
        """The events after ``version``, or ``None`` if they are no longer all kept."""
        if not self._known_from <= version <= self.version:
            return None
        return [event for event in self._history if event.version > version]

    def catch_up(self, player: PlayerId, version: int | None, now: float,
                 moderator: bool = False) -> list[Outbound]:
        """What ``player`` needs to be current: the missed events, else a full snapshot
        (a ``moderator`` watching hears both chats).

        The missed events are the versioned ones after ``version`` and, each in its place
        among them, what was said in ``player``'s chat from ``version`` on (a line said
        just after the event ``version`` may not have reached it), with the removals of lines
        (a removed line itself is never replayed). A replayed ``presence`` that is still the
        side's latest, with that side still away, says how long it is *now* until a claim
        (its ``claim_in`` is of the replay's time)."""
        missed = None if version is None or version < self._asides_from else self.since(version)
        if missed is None:
            return [Outbound(self.snapshot(player, now, moderator), Audience.PLAYER, player)]
        assert version is not None
        side = self.side_of(player)
        latest = {event.side: event for event in missed if isinstance(event, Presence)}
        replayed: list[tuple[tuple[int, int], ServerMessage]] = [
            ((e.version, 0), self._presence_event(COLOURS.index(e.side), now, e.version)
             if isinstance(e, Presence) and latest[e.side] is e and not e.online else e)
            for e in missed
        ]
        replayed += [((aside.at, 1), aside.event) for aside in self._asides
                     if aside.at >= version and self._hears(aside.players, side, moderator)]
        replayed.sort(key=lambda keyed: keyed[0])  # stable: the chat in the order it was said
        return [Outbound(message, Audience.PLAYER, player) for _, message in replayed]

    def last_move_record(self, at: float) -> MoveRecord:
        """The store's record of the latest move, with the clocks left after it."""
        clock, moves = self.clock, self.board.moves
        return MoveRecord(
            ply=len(moves),
            cell=moves[-1],
            clock_x=None if clock is None else clock.remaining[X],
            clock_o=None if clock is None else clock.remaining[O],
            at=at,
        )

    # -- helpers ---------------------------------------------------------------------------

    def _seat(self, player: PlayerId) -> int:
        side = self.side_of(player)
        if side is not None:
            return side
        if player in self.spectators:
            raise RoomError("spectators cannot play", ErrorCode.SPECTATOR)
        raise RoomError("you are not seated in this game", ErrorCode.NOT_SEATED)

    @staticmethod
    def _hears(players_chat: bool, side: int | None, moderator: bool = False) -> bool:
        """Whether a receiver seated on ``side`` (None: a spectator) is shown a line of the
        players' chat (``players_chat``) or of the spectators': the players' chat is the
        players', the spectators' chat the spectators'; a moderator watching (not seated)
        hears both, so that a line of either can be removed."""
        return players_chat == (side is not None) or (moderator and side is None)

    def _seated(self) -> tuple[PlayerId, PlayerId]:
        return self.seats[X].player, self.seats[O].player

    def _human(self, side: int) -> bool:
        return self.seats[side].computer_level is None

    def _require_playing(self) -> None:
        if self.over:
            raise RoomError("the game is over", ErrorCode.GAME_OVER)

    def _require_offer_to(self, side: int) -> None:
        if self.draw_offer != side ^ 1:
            raise RoomError("there is no draw offer to answer", ErrorCode.NO_DRAW_OFFER)

    def _cell_index(self, cell: str | int) -> int:
        geometry = self.board.geometry
        if isinstance(cell, int):
            if 0 <= cell < geometry.size:
                return cell
            raise RoomError(f"{cell} is not a cell of {geometry.name}", ErrorCode.BAD_CELL)
        try:
            return parse_cell(cell, geometry)
        except NotationError as error:
            raise RoomError(str(error), ErrorCode.BAD_CELL) from None

    def _seat_info(self, side: int) -> SeatInfo:
        seat = self.seats[side]
        return SeatInfo(
            name=seat.name,
            rating=seat.rating,
            online=self._presence[side].online,
            ai=seat.computer_level,
            bot=seat.bot,
        )

    def _presence_event(self, side: int, now: float, version: int) -> Presence:
        gone = self._presence[side]
        claim_in = None
        if not self.over and gone.gone_since is not None:
            claim_in = round(max(0.0, gone.gone_since + self.grace - now), 1)
        return Presence(
            game=self.id,
            version=version,
            side=COLOURS[side],
            online=gone.online,
            claim_in=claim_in,
        )

    def _offer(self, kind: OfferKind, side: int) -> Outbound:
        version = self._next_version()
        return self._keep(Offer(game=self.id, kind=kind, by=COLOURS[side], version=version))

    def _next_version(self) -> int:
        self.version += 1
        return self.version

    def _aside(self, event: ChatLine | ChatRemoved, players: bool) -> Outbound:
        """Keep an event of one chat (unversioned) for catch-ups, at the current version, and
        address it to that chat: the players (and the moderators watching), or the
        spectators."""
        if len(self._asides) == self._asides.maxlen:
            self._asides_from = self._asides[0].at + 1
        self._asides.append(Aside(self.version, event, players))
        audience = Audience.SEATS if players else Audience.SPECTATORS
        return Outbound(event, audience, players=self._seated())

    def _keep(
        self, event: Versioned, audience: Audience = Audience.ROOM, player: PlayerId | None = None,
        players: tuple[PlayerId, ...] = (),
    ) -> Outbound:
        """Keep a versioned event in the history and address it."""
        if len(self._history) == HISTORY_SIZE:
            self._known_from = self._history[0].version
        self._history.append(event)
        return Outbound(event, audience, player, players)
