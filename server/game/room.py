"""One game as a pure state machine: requests in, addressed protocol messages out.

A ``GameRoom`` (lila-ws's ``RoomActor`` as a reducer) takes the acting player and the time
``now`` and returns ``Outbound`` messages, or raises ``RoomError`` with a stable code; it never
awaits or reads a clock. Versioned events let a client that reconnects replay ``since(v)`` or
take a ``snapshot``. A request that changes what the store keeps returns a ``Change``: its
messages and the ``Write`` the caller persists before delivering them; the caller calls
``check_flag`` at ``flag_at()``, reports presence and ratings, and starts rematches. Its state
and queries are ``server.game.room_state.RoomState``."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from engine import IllegalMove, O, X
from server.errors import ClaimTooEarly, RoomError
from server.game.records import GameRecord, GameStatus, TimeControl
from server.game.records import Seat as StoredSeat
from server.game.room_state import (
    COMPUTER,
    DEFAULT_GRACE,
    HISTORY_SIZE,
    RESULTS,
    Audience,
    Change,
    Outbound,
    PlayerId,
    RoomSeat,
    RoomState,
    SeatPresence,
    Write,
    computer_seat,
)
from server.protocol import (
    COLOURS,
    ChatLine,
    ChatRemoved,
    ClockSpec,
    ErrorCode,
    GameEnd,
    MovePlayed,
    RatingChange,
    Reason,
    Rematched,
    TakenBack,
    Watching,
)

MOVED = Write(moved=True)  # a move's write (one value for every move: writes are frozen)

# the room's vocabulary is defined in room_state and imported from here across the server
__all__ = ["COMPUTER", "DEFAULT_GRACE", "HISTORY_SIZE", "MOVED", "Audience", "GameRoom", "Outbound",
           "PlayerId", "RoomSeat", "Write", "Change", "computer_seat"]


class GameRoom(RoomState):
    """One game: the requests that change it, on ``RoomState``'s seats, board, clock,
    offers, presence and versioned event history."""

    # -- presence --------------------------------------------------------------------------

    def join(
        self, player: PlayerId, name: str, now: float, since: int | None = None,
        moderator: bool = False,
    ) -> list[Outbound]:
        """``player`` opens the game: retakes its seat or watches; it gets state or catch-up
        (a ``moderator`` watching: with both chats)."""
        events = self.connected(player, now) if self.side_of(player) is not None else []
        if self.side_of(player) is None and player not in self.spectators:
            self.spectators[player] = name
            events.append(self._watching(player))
        events += self.catch_up(player, since, now, moderator)
        if since is not None:  # a catch-up replays no count: the current one, to the newcomer
            count = Watching(game=self.id, count=len(self.spectators))
            events.append(Outbound(count, Audience.PLAYER, player))
        return events

    def leave(self, player: PlayerId, now: float) -> list[Outbound]:
        """``player`` closed the game (its last connection to it)."""
        if self.spectators.pop(player, None) is not None:
            return [self._watching(player)]
        return self.disconnected(player, now) if self.side_of(player) is not None else []

    def _watching(self, player: PlayerId) -> Outbound:
        """``watching`` to everyone in the room but ``player``, who came or went (a newcomer
        reads the count in its ``game``)."""
        return Outbound(Watching(game=self.id, count=len(self.spectators)), Audience.OTHERS,
                        player)

    def connected(self, player: PlayerId, now: float) -> list[Outbound]:
        """A seated player is back; a clock paused for its turn runs again."""
        side = self._seat(player)
        if side == self.board.turn and self.clock is not None and not self.over:
            self.clock.resume(now)
        if self._presence[side].online:
            return []
        self._presence[side] = SeatPresence(online=True)
        event = self._presence_event(side, now, self._next_version())
        return [self._keep(event, Audience.OTHERS, player)]

    def starts_away(self, side: int, now: float) -> None:
        """The human at ``side`` has no connection as the game starts (a tournament pairs
        players seen lately, who may have gone since): away from its first state, so their
        opponent is told so and a claim's grace runs from now; their coming back is told as
        any return is."""
        if self._human(side):
            self._presence[side] = SeatPresence(online=False, gone_since=now)

    def disconnected(self, player: PlayerId, now: float) -> list[Outbound]:
        """A seated player has gone; after ``grace`` seconds its opponent may claim."""
        side = self._seat(player)
        if not self._presence[side].online or not self._human(side):
            return []
        self._presence[side] = SeatPresence(online=False, gone_since=now)
        event = self._presence_event(side, now, self._next_version())
        return [self._keep(event, Audience.OTHERS, player)]

    # -- moves and clocks ------------------------------------------------------------------

    def move(self, player: PlayerId, cell: str | int, ply: int, now: float) -> Change:
        """Play ``cell`` for ``player`` answering the position after ``ply`` moves.

        Checked in order: seat, game over, ply (stale or duplicate), turn, cell, legality,
        clock. A move whose mover's time has already run out ends the game on time instead.
        """
        # Every move of every game comes here: the board's and the seats' fields are read
        # once into locals, and the checks are written out rather than called.
        seats, board = self.seats, self.board
        if seats[X].player == player:
            side = X
        elif seats[O].player == player:
            side = O
        else:
            side = self._seat(player)  # raises: a spectator, or not in the game
        if self.end is not None:
            raise RoomError("the game is over", ErrorCode.GAME_OVER)
        at = len(board.moves)
        if ply != at:
            raise RoomError(
                f"stale move: it answers ply {ply} but the game is at ply {at}",
                ErrorCode.STALE_MOVE,
            )
        if side != at & 1:
            raise RoomError("it is not your turn", ErrorCode.NOT_YOUR_TURN)
        index = cell if type(cell) is int and 0 <= cell < len(self._names) \
            else self._cell_index(cell)
        if not board.is_legal(index):
            raise RoomError(f"{self._names[index]} is already taken", ErrorCode.OCCUPIED)
        clock = self.clock
        if clock is not None and clock.flagged(now) is not None:
            return self.check_flag(now)
        try:
            board.push(index)
        except IllegalMove as error:  # is_legal said yes; kept so a rule change cannot crash us
            raise RoomError(str(error), ErrorCode.ILLEGAL_MOVE) from None
        if clock is not None:
            clock.press(side, at, now)
        self.draw_offer = None
        self.version += 1
        played = MovePlayed(
            game=self.id,
            ply=at + 1,
            cell=index,
            notation=self._names[index],
            side=COLOURS[side],
            clocks=None if clock is None else self.clocks(now),
            version=self.version,
        )
        events = [self._keep(played)]
        outcome = board.outcome()
        if outcome is None:
            return Change(events, MOVED)
        reason: Reason = outcome.termination.value
        end = self._finish(outcome.winner, reason, now, line=outcome.line)
        return Change(events + end.events, Write(moved=True, end=self.end))

    def check_flag(self, now: float) -> Change:
        """End the game on time if the side to move has none left (the app's timer calls it).

        The flagged side loses unless its opponent can no longer complete any line: a draw.
        """
        if self.over or self.clock is None:
            return Change([])
        flagged = self.clock.flagged(now)
        if flagged is None:
            return Change([])
        winner = flagged ^ 1 if self.board.can_still_win(flagged ^ 1) else None
        return self._finish(winner, "time", now)

    def carry_over(self, decided: GameRoom) -> None:
        """Take from ``decided`` (this game's room that decided something the store then
        refused, and nobody heard) what the record does not hold: who is here, the spectators
        and the chat; and its version, so the events that follow are newer than any heard."""
        self._presence = list(decided._presence)
        self.spectators = dict(decided.spectators)
        self._chat = decided._chat
        self._lines = decided._lines
        self._asides = decided._asides
        self._asides_from = decided._asides_from
        self.version = max(self.version, decided.version)
        self._known_from = self.version + 1  # a catch-up from before gets the whole state

    def renumber_from(self, version: int) -> None:
        """Number the events that follow from above ``version`` (a room taken over: its
        versions stay above any an earlier owner said); a catch-up from before gets the
        whole state."""
        if version > self.version:
            self.version = version
            self._known_from = version + 1
            if self.end is not None:
                self.end.version = version

    def pause(self, now: float) -> None:
        """Hold the running clock (before a shutdown); the next move or ``resume`` restarts it."""
        if self.clock is not None and not self.over:
            self.clock.pause(now)

    def resume(self, now: float) -> None:
        """Let a paused clock run again from ``now``."""
        if self.clock is not None and not self.over:
            self.clock.resume(now)

    def grant(self, player: PlayerId, seconds: float) -> None:
        """Give ``player`` extra seconds on its clock."""
        side = self._seat(player)
        if self.clock is not None:
            self.clock.grant(side, seconds)

    # -- resign, draws, abort, claim, rematch, chat ----------------------------------------

    def resign(self, player: PlayerId, now: float) -> Change:
        """Give the game up; before both sides have moved that only calls it off (abort)."""
        side = self._seat(player)
        self._require_playing()
        if self.board.ply < 2:
            return self._finish(None, "abort", now, result="*")
        return self._finish(side ^ 1, "resign", now)

    def offer_draw(self, player: PlayerId, now: float) -> Change:
        """Offer a draw; it stands until answered or the next move. Crossed offers agree."""
        side = self._seat(player)
        self._require_playing()
        if self.draw_offer == side ^ 1:
            return self.accept_draw(player, now)
        if self.draw_offer == side:
            raise RoomError("you have already offered a draw", ErrorCode.ALREADY_OFFERED)
        if self.computer_side is not None:
            raise RoomError("the computer plays on", ErrorCode.NOT_ALLOWED)
        self.draw_offer = side
        return Change([self._offer("draw", side)])

    def accept_draw(self, player: PlayerId, now: float) -> Change:
        side = self._seat(player)
        self._require_playing()
        self._require_offer_to(side)
        return self._finish(None, "agreement", now)

    def decline_draw(self, player: PlayerId, now: float) -> list[Outbound]:
        side = self._seat(player)
        self._require_playing()
        self._require_offer_to(side)
        self.draw_offer = None
        return [self._offer("draw_declined", side)]

    def abort(self, player: PlayerId, now: float) -> Change:
        """Call the game off with no result; only before both sides have moved."""
        self._seat(player)
        self._require_playing()
        if self.board.ply >= 2:
            raise RoomError("both sides have moved: resign instead", ErrorCode.TOO_LATE_TO_ABORT)
        return self._finish(None, "abort", now, result="*")

    def claim(self, player: PlayerId, now: float) -> Change:
        """Win because the opponent has been gone past the grace period (abort if none moved)."""
        side = self._seat(player)
        self._require_playing()
        gone = self._presence[side ^ 1]
        if gone.online or gone.gone_since is None:
            raise RoomError("your opponent is here", ErrorCode.OPPONENT_PRESENT)
        wait = gone.gone_since + self.grace - now
        if wait > 0:
            raise ClaimTooEarly(f"you may claim in {wait:.0f} s", retry_in=round(wait, 1))
        if self.board.ply < 2:
            return self._finish(None, "abort", now, result="*")
        return self._finish(side, "claim", now)

    def abandon(self, now: float) -> Change:
        """End a game no human has had open for the app's stated time: called off (abort)
        before both sides have moved, else lost by the side to move, as on a correspondence
        clock (a draw if its opponent can no longer complete any line)."""
        self._require_playing()
        if self.abandoned_since() is None:
            raise RoomError("a player is in the game", ErrorCode.NOT_ALLOWED)
        if self.board.ply < 2:
            return self._finish(None, "abort", now, result="*")
        winner = self.board.turn ^ 1
        return self._finish(
            winner if self.board.can_still_win(winner) else None, "abandoned", now
        )

    def ask_rematch(self, player: PlayerId, now: float) -> list[Outbound]:
        """Ask for a rematch; once both have (the computer always agrees), ``rematch_agreed``."""
        side = self._seat(player)
        if not self.over:
            raise RoomError("the game is still on", ErrorCode.GAME_NOT_OVER)
        if side in self.rematch:
            raise RoomError("you have already asked for a rematch", ErrorCode.ALREADY_OFFERED)
        self.rematch.add(side)
        if self.computer_side is not None:
            self.rematch.add(self.computer_side)
        return [self._offer("rematch", side)]

    def rematch_started(self, game_id: str) -> list[Outbound]:
        """The rematch has started as ``game_id``: everyone in the room is told, so that a
        spectator can follow it (its players are seated in it already)."""
        self.rematch_game = game_id
        event = Rematched(game=self.id, rematch=game_id, version=self._next_version())
        return [self._keep(event)]

    def chat(self, player: PlayerId, text: str, now: float) -> list[Outbound]:
        """Say ``text`` (already checked by the protocol) in the game's chat: a seated
        player's line reaches the two players only, a spectator's the spectators only (as on
        lichess: strangers watching cannot speak to the players), unless the host has turned
        spectators' chat off. Moderators watching read both (``Audience.SEATS``) and speak
        in the spectators'."""
        side = self.side_of(player)
        if side is None and player not in self.spectators:
            raise RoomError("open the game before you chat in it", ErrorCode.NOT_SEATED)
        if side is None and not self.spectator_chat:
            raise RoomError("spectators' chat is off on this server",
                            ErrorCode.SPECTATOR_CHAT_OFF)
        name = self.seats[side].name if side is not None else self.spectators[player]
        self._lines += 1
        line = ChatLine(
            game=self.id,
            name=name,
            side=None if side is None else COLOURS[side],
            text=text,
            line=self._lines,
        )
        self._chat.append(line)
        return [self._aside(line, players=side is not None)]

    # -- the host's levers (server.node.control) -------------------------------------------

    def remove_chat(self, line: int, now: float) -> list[Outbound]:
        """Take the chat line numbered ``line`` out of the game's chat, so a snapshot or
        catch-up never shows it again, and tell its chat (the players' or the spectators')
        to remove it."""
        said = next((said for said in self._chat if said.line == line), None)
        if said is None:
            raise RoomError(f"no chat line {line} in game {self.id}", ErrorCode.NOT_ALLOWED)
        self._chat.remove(said)
        kept = [aside for aside in self._asides if aside.event is not said]
        self._asides.clear()
        self._asides.extend(kept)
        return [self._aside(ChatRemoved(game=self.id, line=line), players=said.side is not None)]

    def end_by_host(self, result: str, now: float) -> Change:
        """End the game as the host decides: ``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` (called
        off), with the reason ``host``."""
        self._require_playing()
        winner = {"1-0": X, "0-1": O}.get(result)
        return self._finish(winner, "host", now, result=result)

    # -- help against the computer: hints and takebacks -----------------------------------

    def check_hint(self, player: PlayerId) -> None:
        """Refuse a hint unless ``player`` is to move in a casual game against the computer
        (so never while the computer thinks)."""
        side = self._require_casual_computer_game(player, "hints")
        if side != self.board.turn:
            raise RoomError("a hint is for your own turn", ErrorCode.NOT_YOUR_TURN)

    def take_back(self, player: PlayerId, now: float) -> Change:
        """Take back ``player``'s last move and the computer's reply to it, if it has come (a
        casual game against the computer only: it agrees at once). The clocks are not wound
        back: the side to move again runs from ``now``. A computer move still being searched
        for the old position is stale by ply or position (the app drops it)."""
        side = self._require_casual_computer_game(player, "takebacks")
        if self.clock is not None and self.clock.flagged(now) is not None:
            return self.check_flag(now)
        ply = self.board.ply - 1 if (self.board.ply - 1) % 2 == side else self.board.ply - 2
        if ply < 0:
            raise RoomError("you have no move to take back", ErrorCode.NOT_ALLOWED)
        while self.board.ply > ply:
            self.board.pop()
        if self.clock is not None:
            self.clock.pause(now)
            self.clock.running = self.board.turn if self.board.ply >= 2 else None
            self.clock.resume(now)
        event = TakenBack(game=self.id, ply=ply, by=COLOURS[side], clocks=self.clocks(now),
                          version=self._next_version())
        return Change([self._keep(event)], Write(taken_back=ply))

    def _require_casual_computer_game(self, player: PlayerId, what: str) -> int:
        side = self._seat(player)
        self._require_playing()
        if self.computer_side is None:
            raise RoomError(f"{what} are only for games against the computer",
                            ErrorCode.NOT_ALLOWED)
        if self.rated:
            raise RoomError(f"no {what} in a rated game", ErrorCode.NOT_ALLOWED)
        return side

    # -- ratings and storage ---------------------------------------------------------------

    def set_rating_change(
        self, change: RatingChange, events: Iterable[Outbound] = ()
    ) -> list[Outbound]:
        """Fill the end's ``rating_change`` (once the store rated it) and return ``events`` with
        their ``end`` message replaced by the rated one."""
        if self.end is None:
            raise RoomError("the game is still on", ErrorCode.GAME_NOT_OVER)
        old, self.end = self.end, msgspec.structs.replace(self.end, rating_change=change)
        self._history = deque(
            (self.end if event is old else event for event in self._history), HISTORY_SIZE
        )
        return [Outbound(self.end, e.audience, e.player) if e.message is old else e for e in events]

    @classmethod
    def restore(
        cls, record: GameRecord, now: float, grace: float = DEFAULT_GRACE,
        ratings: Mapping[str, float] | None = None, bots: Collection[str] = (),
    ) -> GameRoom:
        """The room of a stored game at its last ply, both players away, clocks paused;
        ``bots``: the seated players that are bot accounts.

        A paused clock runs again when the side to move comes back or plays, so a server's
        downtime never costs anyone time; the grace period before a claim starts at ``now``.
        """
        spec = _clock_spec(record.clock)
        known = ratings or {}
        seats = (
            _room_seat(record.x, record.x_rating or known.get(record.x.player or ""), bots),
            _room_seat(record.o, record.o_rating or known.get(record.o.player or ""), bots),
        )
        room = cls(record.id, seats, record.variant, spec, record.rated, grace)
        room.tournament = record.tournament
        for move in sorted(record.moves, key=lambda m: m.ply):
            room.board.push(move.cell)
        last = record.moves[-1] if record.moves else None
        if room.clock is not None and last is not None and last.clock_x is not None:
            room.clock.remaining = [last.clock_x, last.clock_o or 0.0]
        if room.clock is not None and room.board.ply >= 2:
            room.clock.running = room.board.turn
        for side in (X, O):
            if room._human(side):
                room._presence[side] = SeatPresence(online=False, gone_since=now)
        # Versions before the restart are unknown: only a post-restart event is a base for since()
        room.version = room.board.ply + 1
        room._known_from = room.version + 1
        if record.status is not GameStatus.ACTIVE:
            if room.clock is not None:
                room.clock.stop(now)
            room.end = GameEnd(
                game=record.id,
                version=room.version,
                result=record.result or "*",  # type: ignore[arg-type]
                reason=record.reason or "abort",  # type: ignore[arg-type]
                winner={"1-0": "x", "0-1": "o"}.get(record.result or ""),  # type: ignore[arg-type]
                line=None if record.winning_line is None else list(record.winning_line),
            )
        return room

    # -- helpers ---------------------------------------------------------------------------

    def _finish(
        self,
        winner: int | None,
        reason: Reason,
        now: float,
        line: Sequence[int] | None = None,
        result: str | None = None,
    ) -> Change:
        """End the game: its ``end`` event, and the end to write."""
        if self.clock is not None:
            self.clock.stop(now)
        self.draw_offer = None
        self.end = GameEnd(
            game=self.id,
            version=self._next_version(),
            result=result or RESULTS[winner],  # type: ignore[arg-type]
            reason=reason,
            winner=None if winner is None else COLOURS[winner],
            line=None if line is None else list(line),
            clocks=self.clocks(now),
        )
        return Change([self._keep(self.end)], Write(end=self.end))


def _clock_spec(clock: TimeControl | None) -> ClockSpec | None:
    return None if clock is None else ClockSpec(round(clock.initial), round(clock.increment))


def _room_seat(seat: StoredSeat, rating: float | None, bots: Collection[str]) -> RoomSeat:
    if seat.computer_level is not None:
        return computer_seat(seat.computer_level)
    assert seat.player is not None
    return RoomSeat(seat.player, seat.player, None if rating is None else round(rating),
                    bot=seat.player in bots)
