"""The client's state as plain objects: one game, the lobby and the session. No Textual here.

A ``GameModel`` starts from the server's ``game`` message and applies the game's versioned
events in order, and its chat lines whatever the version, each ``line`` once. On a gap
(``apply`` says ``GAP``) ``resync`` gives the one request that brings it up to date: a
catch-up (``watch{since}``), or after ``CATCH_UPS`` catch-ups in a row that left a gap open,
the full game (docs/protocol.md, *Versions and catch-up*). It also answers what the screens
ask: whose turn, the clocks at a moment, the open threats, and which position is shown while
stepping through the moves.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import msgspec

from client_tui.text import visible
from engine import Board, Cell, format_cell
from server.protocol import (
    ChallengeGone,
    ChallengeInfo,
    ChallengeReceived,
    ChallengeSent,
    ChatLine,
    ChatRemoved,
    Clocks,
    ClockSpec,
    Colour,
    ComputerThinking,
    EngineStatus,
    GameEnd,
    GameState,
    GameSummary,
    LobbyDelta,
    LobbySnapshot,
    MovePlayed,
    Offer,
    PlayerOnline,
    Presence,
    Rematched,
    SeatInfo,
    SeekInfo,
    Suggestion,
    TakenBack,
    Watch,
    Watching,
)

SIDES: tuple[Colour, Colour] = ("x", "o")
CHAT_KEPT = 200
CATCH_UPS = 2  # catch-ups in a row that leave a gap open before the full game is asked for
GameEvent = (
    MovePlayed | GameEnd | Offer | Presence | ChatLine | TakenBack | ComputerThinking | EngineStatus
    | Suggestion | Rematched | ChatRemoved | Watching
)
ChallengeEvent = ChallengeSent | ChallengeReceived | ChallengeGone
"""What the server says of a challenge from or to this player; it changes the session's
``challenges_out`` and ``challenges_in``."""


class Applied(enum.Enum):
    """What ``GameModel.apply`` did with an event."""

    CHANGED = "changed"  # the model changed
    IGNORED = "ignored"  # an event already applied, or for another game
    GAP = "gap"  # events are missing before this one: resync with ``watch{since}``


def other(side: Colour) -> Colour:
    """The opponent's colour."""
    return "o" if side == "x" else "x"


@dataclass
class GameModel:
    """One game as this client knows it: the server's state plus the local review cursor."""

    id: str
    variant: str
    clock: ClockSpec | None
    rated: bool
    seats: list[SeatInfo]
    board: Board
    version: int
    you: Colour | None = None
    clocks: Clocks | None = None
    clocks_at: float = 0.0  # when ``clocks`` was read (the client's monotonic seconds)
    draw_offer: Colour | None = None
    rematch: set[Colour] = field(default_factory=set)
    rematch_game: str | None = None  # the rematch's id, once it has started
    end: GameEnd | None = None
    spectators: int = 0
    chat: list[ChatLine] = field(default_factory=list)
    spectator_chat: bool = True  # the host lets spectators chat (among themselves)
    thinking: ComputerThinking | None = None
    engine: EngineStatus | None = None  # the computer's engine, while it is not ready
    claim_at: dict[Colour, float] = field(default_factory=dict)  # when a claim becomes possible
    view_ply: int | None = None  # the ply shown while stepping through moves; None: live
    suggestion: Suggestion | None = None  # the engine's hint for the live position
    asked: Watch | None = None  # the request of ``resync`` on its way, until its answer
    ahead: int = 0  # the highest version heard that could not be applied (a gap)
    failed: int = 0  # catch-ups in a row whose answer left a gap open
    tournament: str | None = None  # the id of the tournament the game belongs to
    tournament_name: str | None = None  # its name, as this client knows it

    @classmethod
    def from_state(cls, state: GameState, now: float) -> GameModel:
        """The model of a full ``game`` message received at ``now``."""
        model = cls(
            id=state.id,
            variant=state.variant,
            clock=state.clock,
            rated=state.rated,
            seats=list(state.seats),
            board=Board(state.variant, state.moves),
            version=state.version,
            you=state.you,
            clocks=state.clocks,
            clocks_at=now,
            draw_offer=state.draw_offer,
            rematch=set(state.rematch),
            rematch_game=state.rematch_game,
            end=state.end,
            spectators=state.spectators,
            chat=list(state.chat)[-CHAT_KEPT:],
            spectator_chat=state.spectator_chat,
            tournament=state.tournament,
        )
        return model

    # -- events ----------------------------------------------------------------------------

    def apply(self, event: GameEvent, now: float) -> Applied:
        """Apply one event of this game received at ``now``, in version order."""
        if event.game != self.id:
            return Applied.IGNORED
        if isinstance(event, EngineStatus):
            self.engine = None if event.state == "ready" or self.over else event
            return Applied.CHANGED
        if isinstance(event, ComputerThinking):
            self.thinking = event if event.ply == self.board.ply and not self.over else None
            return Applied.CHANGED
        if isinstance(event, Suggestion):
            if event.ply != self.board.ply or self.over:
                return Applied.IGNORED  # asked for a position that is gone
            self.suggestion = event
            return Applied.CHANGED
        if isinstance(event, Watching):  # unversioned: the newest count holds
            if event.count == self.spectators:
                return Applied.IGNORED
            self.spectators = event.count
            return Applied.CHANGED
        if isinstance(event, ChatLine):  # unversioned: each line once, in its place
            if any(line.line == event.line for line in self.chat):
                return Applied.IGNORED
            self.chat = sorted([*self.chat, event], key=lambda said: said.line)[-CHAT_KEPT:]
            return Applied.CHANGED
        if isinstance(event, ChatRemoved):  # a moderator took the line out
            kept = [line for line in self.chat if line.line != event.line]
            if len(kept) == len(self.chat):
                return Applied.IGNORED
            self.chat = kept
            return Applied.CHANGED
        if isinstance(event, Presence) and event.version <= self.version:
            self._presence(event, now)  # a catch-up's current presence carries no new version
            return Applied.CHANGED
        if event.version <= self.version:
            return Applied.IGNORED
        if event.version > self.version + 1:
            return self._gap(event.version)
        if isinstance(event, MovePlayed):
            if event.ply != self.board.ply + 1:
                return self._gap(event.version)
            self.board.push(event.cell)
            self.draw_offer = None
            self._new_position(event.clocks, now)
        elif isinstance(event, TakenBack):
            while self.board.ply > event.ply:
                self.board.pop()
            if self.view_ply is not None and self.view_ply >= self.board.ply:
                self.view_ply = None
            self._new_position(event.clocks, now)
        elif isinstance(event, GameEnd):
            self.end = event
            self.draw_offer = None
            self.thinking = None
            self.suggestion = None
            self._set_clocks(event.clocks, now)
            if event.rating_change is not None:  # the seats show the ratings after the game
                changes = (event.rating_change.x, event.rating_change.o)
                self.seats = [
                    seat if seat.rating is None or seat.ai is not None
                    else msgspec.structs.replace(seat, rating=seat.rating + change)
                    for seat, change in zip(self.seats, changes, strict=True)
                ]
        elif isinstance(event, Offer):
            if event.kind == "draw":
                self.draw_offer = event.by
            elif event.kind == "draw_declined":
                self.draw_offer = None
            else:
                self.rematch.add(event.by)
        elif isinstance(event, Presence):
            self._presence(event, now)
        elif isinstance(event, Rematched):
            self.rematch_game = event.rematch
        self.version = event.version
        return Applied.CHANGED

    # -- catching up -----------------------------------------------------------------------

    def resync(self) -> Watch | None:
        """The request that brings this game up to date, to send now: a catch-up from the
        version held, or the full game after ``CATCH_UPS`` catch-ups in a row that left a
        gap open; None while one is on its way (one at a time)."""
        if self.asked is not None:
            return None
        full = self.failed >= CATCH_UPS
        self.asked = Watch(game=self.id) if full else Watch(game=self.id, since=self.version)
        return self.asked

    def caught_up(self, request: Watch) -> Watch | None:
        """The ``ack`` of ``request`` came (its catch-up is complete): if the gap is still
        open, the next request to send (``resync``'s)."""
        if request is not self.asked:
            return None  # not this model's (a full game has replaced it since)
        self.asked = None
        if self.version >= self.ahead:
            self.failed = 0
            return None
        self.failed += 1
        return self.resync()

    def refused(self, request: Watch) -> None:
        """``request`` was refused: the next gap asks again (counted as a catch-up that
        left it open), not this error: an error never makes the client send."""
        if request is self.asked:
            self.asked = None
            self.failed += 1

    def reconnected(self) -> Watch:
        """The link is new: what was on its way is lost; the request that catches up."""
        self.asked = None
        request = self.resync()
        assert request is not None
        return request

    def _gap(self, version: int) -> Applied:
        self.ahead = max(self.ahead, version)
        return Applied.GAP

    def _presence(self, event: Presence, now: float) -> None:
        index = SIDES.index(event.side)
        self.seats[index] = msgspec.structs.replace(self.seats[index], online=event.online)
        if event.online or event.claim_in is None:
            self.claim_at.pop(event.side, None)
        else:
            self.claim_at[event.side] = now + event.claim_in

    def _new_position(self, clocks: Clocks | None, now: float) -> None:
        """A move played or taken back: the computer's thinking, the engine's status and the
        hint were about the position before it."""
        self.thinking = None
        self.engine = None
        self.suggestion = None
        self._set_clocks(clocks, now)

    def _set_clocks(self, clocks: Clocks | None, now: float) -> None:
        if clocks is not None:
            self.clocks = clocks
            self.clocks_at = now

    # -- the game --------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.end is not None

    @property
    def ply(self) -> int:
        return self.board.ply

    @property
    def turn(self) -> Colour:
        """The colour to move in the live position."""
        return SIDES[self.board.turn]

    @property
    def my_turn(self) -> bool:
        """Whether this client may move now (seated, the game on, its turn)."""
        return self.you is not None and not self.over and self.turn == self.you

    def seat(self, side: Colour) -> SeatInfo:
        return self.seats[SIDES.index(side)]

    @property
    def against_computer(self) -> bool:
        return any(seat.ai is not None for seat in self.seats)

    def help_refused(self, what: str) -> str | None:
        """Why this client may not ask for a ``"hint"`` or a ``"takeback"`` now (as the server
        would refuse it), or None when it may."""
        if self.you is None:
            return "You are watching this game."
        if self.over:
            return "The game is over."
        if not self.against_computer:
            return f"No {what}s in a game between people: only against the computer."
        if self.rated:
            return f"No {what}s in a rated game."
        if what == "hint" and not self.my_turn:
            return "The computer is thinking: a hint is for your own turn."
        if what == "takeback" and self.ply < (1 if self.you == "x" else 2):
            return "You have no move to take back yet."
        return None

    def time_left(self, side: Colour, now: float) -> int | None:
        """Milliseconds left on ``side``'s clock at ``now`` (counting down locally), or None."""
        if self.clocks is None:
            return None
        left = self.clocks.x if side == "x" else self.clocks.o
        if self.clocks.running == side and not self.over:
            left -= round((now - self.clocks_at) * 1000)
        return max(0, left)

    def claim_in(self, side: Colour, now: float) -> float | None:
        """Seconds until a win may be claimed against ``side`` (who is gone), or None."""
        at = self.claim_at.get(side)
        return None if at is None else max(0.0, at - now)

    def can_claim(self, now: float) -> bool:
        """Whether this client may claim the win: its opponent gone past the grace period."""
        if self.you is None or self.over:
            return False
        wait = self.claim_in(other(self.you), now)
        return wait is not None and wait <= 0

    # -- what is shown ---------------------------------------------------------------------

    @property
    def shown_ply(self) -> int:
        return self.ply if self.view_ply is None else self.view_ply

    @property
    def reviewing(self) -> bool:
        return self.view_ply is not None

    def shown_board(self) -> Board:
        """The position on screen: the live board, or the one after ``view_ply`` moves."""
        if self.view_ply is None:
            return self.board
        return Board(self.board.geometry, self.board.moves[: self.view_ply])

    def step(self, delta: int) -> None:
        """Step the shown position ``delta`` moves back (negative) or forward."""
        self.show(self.shown_ply + delta)

    def show(self, ply: int) -> None:
        """Show the position after ``ply`` moves (clamped); the last one means live."""
        ply = max(0, min(self.ply, ply))
        self.view_ply = None if ply == self.ply else ply

    def last_move(self) -> Cell | None:
        """The last move of the shown position."""
        board = self.shown_board()
        return board.moves[-1] if board.moves else None

    def winning_line(self) -> tuple[Cell, ...] | None:
        """The completed line in the shown position, if any."""
        return self.shown_board().winning_line

    def notation(self, cell: Cell) -> str:
        return format_cell(cell, self.board.geometry)

    def move_texts(self) -> list[str]:
        """Every move played, in notation."""
        return [self.notation(cell) for cell in self.board.moves]


def threats(board: Board, side: int) -> frozenset[Cell]:
    """The empty cells where ``side`` (0 = X, 1 = O) would complete a line by playing."""
    g = board.geometry
    mine, theirs = board.stones[side], board.stones[side ^ 1]
    occupied = mine | theirs
    found: set[Cell] = set()
    for mask in g.line_masks:
        if mask & theirs or (mask & mine).bit_count() != g.n - 1:
            continue
        gap = mask & ~occupied
        if gap:
            found.add(gap.bit_length() - 1)
    return frozenset(found)


# -- describing ------------------------------------------------------------------------------

REASONS = {
    "line": "a line is complete",
    "full": "the board is full",
    "dead": "no line can be completed",
    "resign": "resignation",
    "time": "time ran out",
    "agreement": "draw agreed",
    "abort": "the game was called off",
    "claim": "the opponent left",
    "abandoned": "nobody had the game open",
    "host": "ended by the host",
}


def describe_end(model: GameModel) -> str:
    """One line saying how the game ended: winner, reason and, when rated, rating change."""
    end = model.end
    if end is None:
        return ""
    if end.result == "*" and end.reason == "abort":  # a resignation too, before both moved
        if model.board.ply == 0:
            return "Called off: no move was played · no result"
        return "Called off before both sides moved · no result"
    if end.result == "*":
        head = "No result"
    elif end.winner is None:
        head = "Draw"
    else:
        winner = visible(model.seat(end.winner).name)
        head = f"{end.winner.upper()} ({winner}) wins" if model.you is None else (
            "You win" if end.winner == model.you else "You lose"
        )
    text = f"{head} {end.result} · {REASONS.get(end.reason, end.reason)}"
    if end.line:  # named, not only coloured: for monochrome terminals and colour-blind eyes
        text += f": {model.notation(min(end.line))}-{model.notation(max(end.line))}"
    change = end.rating_change
    if change is not None:
        if model.you is not None:
            mine = change.x if model.you == "x" else change.o
            text += f" · rating {mine:+d}"
        else:
            text += f" · rating X {change.x:+d}, O {change.o:+d}"
    return text


def format_clock(ms: int) -> str:
    """A clock reading: ``12:05``, ``1:02:03`` past an hour, tenths under ten seconds."""
    seconds, millis = divmod(max(0, ms), 1000)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    if minutes == 0 and secs < 10:
        return f"0:{secs:02d}.{millis // 100}"
    return f"{minutes}:{secs:02d}"


def challenge_terms(challenge: ChallengeInfo, sent: bool) -> str:
    """A challenge's terms as its sender (``sent``) or the one challenged reads them:
    ``4x4x4 · 5+3 · you play X · rated``."""
    colour = {"x": "X", "o": "O"}.get(challenge.colour)
    who = "you play" if sent else f"{challenge.by} plays"
    return " · ".join([challenge.variant, format_clock_spec(challenge.clock),
                       f"{who} {colour}" if colour else "colours at random",
                       "rated" if challenge.rated else "casual"])


def format_clock_spec(spec: ClockSpec | None) -> str:
    """``5+3`` (minutes + seconds per move) or ``untimed``."""
    if spec is None:
        return "untimed"
    minutes = spec.initial / 60
    shown = f"{minutes:g}" if minutes >= 1 or spec.initial == 0 else f"{spec.initial}s"
    return f"{shown}+{spec.increment}"


def parse_clock_spec(text: str) -> ClockSpec | None:
    """The clock written ``5+3`` (minutes + increment seconds); ``untimed``/``-``/empty: None."""
    text = text.strip().lower()
    if text in ("", "-", "none", "untimed"):
        return None
    minutes, plus, increment = text.partition("+")
    try:
        initial = round(float(minutes) * 60)
        inc = int(increment) if plus else 0
    except ValueError:
        raise ValueError(f"{text!r} is not a clock: write minutes+seconds like 5+3") from None
    try:
        return msgspec.convert({"initial": initial, "increment": inc}, ClockSpec)
    except msgspec.ValidationError as error:  # out of bounds, or 0+0
        raise ValueError(f"{text!r} is not a clock: {error}") from None


# -- the lobby and the session ---------------------------------------------------------------


@dataclass
class LobbyModel:
    """The open seeks, the live games, how many players are online and who (the server
    lists the first 200 by name)."""

    seeks: dict[str, SeekInfo] = field(default_factory=dict)
    games: dict[str, GameSummary] = field(default_factory=dict)
    online: int = 0
    players: list[PlayerOnline] = field(default_factory=list)

    def load(self, lobby: LobbySnapshot) -> None:
        """Take a full snapshot."""
        self.seeks = {seek.id: seek for seek in lobby.seeks}
        self.games = {game.id: game for game in lobby.games}
        self.online = lobby.online
        self.players = list(lobby.players)

    def apply(self, delta: LobbyDelta) -> None:
        """Apply an update."""
        for seek_id in delta.seeks_removed:
            self.seeks.pop(seek_id, None)
        for seek in delta.seeks_added:
            self.seeks[seek.id] = seek
        for game_id in delta.games_removed:
            self.games.pop(game_id, None)
        for game in delta.games_added:
            self.games[game.id] = game
        if delta.online is not None:
            self.online = delta.online
        if delta.players is not None:
            self.players = list(delta.players)


@dataclass
class PlayerSession:
    """Who this client is on the server, and what it waits for in the lobby."""

    name: str = ""
    rating: int | None = None
    my_seek: str | None = None  # the id of this player's open seek
    queued: str | None = None  # "4x4x4 5+3" while waiting in a quick-pairing pool
    private_code: str | None = None  # the code of this player's private room
    challenges_out: dict[str, ChallengeInfo] = field(default_factory=dict)  # sent, by id
    challenges_in: dict[str, ChallengeInfo] = field(default_factory=dict)  # received, by id
    roles: list[str] = field(default_factory=list)  # the welcome's: "moderator", "admin", ...
    unfinished: list[str] = field(default_factory=list)  # ids of this player's games on
