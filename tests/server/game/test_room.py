"""The game room as a pure reducer: time is passed in, events come out, refusals are raised."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from server.errors import ClaimTooEarly, RoomError
from server.game.records import GameRecord, GameStatus, MoveRecord, Seat, TimeControl
from server.game.room import (
    COMPUTER,
    DEFAULT_GRACE,
    HISTORY_SIZE,
    Audience,
    GameRoom,
    Outbound,
    RoomSeat,
    Write,
    computer_seat,
)
from server.protocol import (
    ChatLine,
    ClockSpec,
    GameEnd,
    GameState,
    MovePlayed,
    Offer,
    Presence,
    RatingChange,
    TakenBack,
    Watching,
    decode_server_message,
    encode,
)

ANN, BOB, EVE = "ann", "bob", "eve"
# X takes 1a1 2b1 3c1 4d1 (a line through the cube); O answers on row 2.
X_WINS = ["1a1", "1a2", "2b1", "2b2", "3c1", "3c2", "4d1"]


def new_room(clock: ClockSpec | None = None, variant: str = "4x4x4", **kw: object) -> GameRoom:
    seats = (RoomSeat(ANN, "Ann", 1500), RoomSeat(BOB, "Bob", 1600))
    return GameRoom("g1", seats, variant, clock, **kw)  # type: ignore[arg-type]


def play(room: GameRoom, cells: list[str], now: float = 0.0, step: float = 1.0) -> list[Outbound]:
    """Play ``cells`` alternately from the current ply, ``step`` seconds apart."""
    events: list[Outbound] = []
    for cell in cells:
        now += step
        player = room.seats[room.board.turn].player
        events += room.move(player, cell, room.board.ply, now).events
    return events


@contextmanager
def refused(code: str) -> Iterator[None]:
    """Expect a ``RoomError`` with ``code`` and a message."""
    with pytest.raises(RoomError) as caught:
        yield
    assert (caught.value.code, bool(caught.value.message)) == (code, True)


def only(events: list[Outbound], kind: type) -> list:
    return [e.message for e in events if isinstance(e.message, kind)]


# -- moves and the end of a game ------------------------------------------------------------


def test_two_players_to_a_win_with_the_winning_line() -> None:
    room = new_room()
    events = play(room, X_WINS)
    moves = only(events, MovePlayed)
    assert [m.notation for m in moves] == X_WINS
    assert [m.ply for m in moves] == list(range(1, 8))
    assert [m.side for m in moves[:2]] == ["x", "o"]
    (end,) = only(events, GameEnd)
    assert (end.result, end.reason, end.winner) == ("1-0", "line", "x")
    assert end.line == [0, 17, 34, 51]
    assert [e.message.version for e in events] == list(range(1, 9))  # type: ignore[union-attr]
    assert all(e.audience is Audience.ROOM for e in events)
    assert room.over and room.snapshot(ANN, 9).status == "over"
    with refused("game_over"):
        room.move(BOB, "4d4", 7, 10)


def test_each_request_returns_what_the_store_must_keep() -> None:
    room = new_room(ClockSpec(60, 0))
    assert room.move(ANN, "1a1", 0, 1.0).write == Write(moved=True)
    assert room.offer_draw(BOB, 2.0).write is None  # an offer is not kept
    assert room.check_flag(3.0).write is None
    played = room.move(BOB, "1a2", 1, 3.0)
    assert played.write == Write(moved=True)
    flagged = room.check_flag(1000.0)
    assert flagged.write == Write(end=room.end) and room.end is not None
    assert room.end.reason == "time"
    # the move that ends the game is written with the end
    won = new_room()
    play(won, X_WINS[:-1])
    last = won.move(ANN, X_WINS[-1], len(X_WINS) - 1, 20.0)
    assert last.write == Write(moved=True, end=won.end) and won.end is not None
    assert [type(e.message) for e in last.events] == [MovePlayed, GameEnd]
    resigned = new_room()
    play(resigned, ["1a1", "1a2"])
    assert resigned.resign(BOB, 5.0).write == Write(end=resigned.end)
    computer = computer_room()
    play(computer, ["1a1", "2b2"])
    assert computer.take_back(ANN, 5.0).write == Write(taken_back=0)


def test_cells_may_be_given_as_indices() -> None:
    room = new_room(variant="4x4")
    (event,) = room.move(ANN, 15, 0, 1.0).events
    assert isinstance(event.message, MovePlayed)
    assert (event.message.cell, event.message.notation) == (15, "d4")


def test_a_dead_draw_ends_the_game() -> None:
    room = new_room(variant="4x4")
    events = play(
        room,
        ["c2", "a4", "a3", "c3", "d3", "b3", "d2", "c1", "a2", "c4", "b1", "d4", "b4", "b2", "a1"],
    )
    (end,) = only(events, GameEnd)
    assert (end.result, end.reason, end.winner, end.line) == ("1/2-1/2", "dead", None, None)
    assert room.board.ply == 15


def test_out_of_turn_stale_duplicate_occupied_and_bad_cells_are_refused() -> None:
    room = new_room()
    with refused("not_your_turn"):
        room.move(BOB, "1a1", 0, 1)
    room.move(ANN, "1a1", 0, 1)
    with refused("stale_move"):
        room.move(ANN, "1a1", 0, 2)  # the same move sent twice
    with refused("stale_move"):
        room.move(BOB, "1a2", 5, 2)  # from a future the server never saw
    with refused("occupied"):
        room.move(BOB, "1a1", 1, 2)
    with refused("bad_cell"):
        room.move(BOB, "5a1", 1, 2)
    with refused("bad_cell"):
        room.move(BOB, 64, 1, 2)
    assert room.board.ply == 1 and room.version == 1


def test_spectators_and_strangers_cannot_move() -> None:
    room = new_room()
    (snapshot,) = [e for e in room.join(EVE, "Eve", 0.0) if e.audience is Audience.PLAYER]
    assert isinstance(snapshot.message, GameState)
    assert snapshot.audience is Audience.PLAYER and snapshot.player == EVE
    assert snapshot.message.you is None and snapshot.message.spectators == 1
    with refused("spectator"):
        room.move(EVE, "1a1", 0, 1)
    with refused("not_seated"):
        room.move("mallory", "1a1", 0, 1)
    with refused("spectator"):
        room.resign(EVE, 1)


def test_the_room_is_told_how_many_watch_as_spectators_come_and_go() -> None:
    room = new_room()
    room.join(ANN, "Ann", 0.0)
    told = [e for e in room.join(EVE, "Eve", 1.0) if isinstance(e.message, Watching)]
    assert [(e.message.count, e.audience, e.player) for e in told] == [
        (1, Audience.OTHERS, EVE)]  # everyone but Eve, who reads it in her game
    assert [e.message for e in room.join(EVE, "Eve", 2.0)
            if isinstance(e.message, Watching)] == []  # a second socket: no one new
    told = [e for e in room.join("zed", "Zed", 3.0) if isinstance(e.message, Watching)]
    assert told[0].message.count == 2
    (gone,) = room.leave(EVE, 4.0)
    assert isinstance(gone.message, Watching) and gone.message.count == 1
    assert room.leave(EVE, 5.0) == []  # already gone
    # a seat coming and going is presence, not a count
    assert not any(isinstance(e.message, Watching) for e in room.leave(ANN, 6.0))
    # a catch-up ends with the count, to the one who caught up
    caught = room.join("zed", "Zed", 7.0, since=room.version)
    assert [(e.message, e.audience) for e in caught if isinstance(e.message, Watching)] == [
        (Watching(game="g1", count=1), Audience.PLAYER)]


# -- draws, resignation, abort ---------------------------------------------------------------


def test_a_draw_by_agreement() -> None:
    room = new_room()
    play(room, ["1a1", "2b2"])
    (offer,) = room.offer_draw(ANN, 3).events
    assert offer.message == Offer(game="g1", kind="draw", by="x", version=3)
    assert room.snapshot(BOB, 3).draw_offer == "x"
    with refused("already_offered"):
        room.offer_draw(ANN, 3)
    with refused("no_draw_offer"):
        room.accept_draw(ANN, 3)  # one cannot accept one's own offer
    (end,) = room.accept_draw(BOB, 4).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason) == ("1/2-1/2", "agreement")


def test_a_draw_offer_can_be_declined_and_lapses_with_the_next_move() -> None:
    room = new_room()
    room.offer_draw(ANN, 1)
    (declined,) = room.decline_draw(BOB, 2)
    assert isinstance(declined.message, Offer) and declined.message.kind == "draw_declined"
    with refused("no_draw_offer"):
        room.accept_draw(BOB, 2)
    room.offer_draw(ANN, 3)
    play(room, ["1a1"], now=3)
    with refused("no_draw_offer"):
        room.accept_draw(BOB, 5)


def test_crossed_draw_offers_agree() -> None:
    room = new_room()
    room.offer_draw(BOB, 1)
    (end,) = room.offer_draw(ANN, 2).events
    assert isinstance(end.message, GameEnd) and end.message.reason == "agreement"


def test_resign() -> None:
    room = new_room()
    play(room, ["1a1", "4d4"])
    (end,) = room.resign(BOB, 2).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason, end.message.winner) == ("1-0", "resign", "x")
    with refused("game_over"):
        room.resign(ANN, 3)


@pytest.mark.parametrize("plies", [0, 1])
def test_resigning_before_both_sides_have_moved_aborts(plies: int) -> None:
    room = new_room(rated=True)
    play(room, ["1a1"][:plies])
    (end,) = room.resign(BOB, 2).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason, end.message.winner) == ("*", "abort", None)


@pytest.mark.parametrize("plies", [0, 1])
def test_abort_before_both_sides_have_moved(plies: int) -> None:
    room = new_room()
    play(room, ["1a1"][:plies])
    (end,) = room.abort(BOB, 2).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason, end.message.winner) == ("*", "abort", None)


def test_no_abort_once_both_have_moved() -> None:
    room = new_room()
    play(room, ["1a1", "1a2"])
    with refused("too_late_to_abort"):
        room.abort(ANN, 3)
    assert not room.over


# -- clocks ----------------------------------------------------------------------------------


def test_clocks_start_after_both_first_moves_and_add_the_increment() -> None:
    room = new_room(ClockSpec(initial=60, increment=2))
    first = only(room.move(ANN, "1a1", 0, 10.0).events, MovePlayed)[0]
    assert first.clocks is not None and first.clocks.running is None
    second = only(room.move(BOB, "1a2", 1, 30.0).events, MovePlayed)[0]  # 20 s, free
    assert (second.clocks.x, second.clocks.o, second.clocks.running) == (60000, 60000, "x")
    third = only(room.move(ANN, "2b2", 2, 35.5).events, MovePlayed)[0]  # 5.5 s on X's clock
    assert (third.clocks.x, third.clocks.o, third.clocks.running) == (56500, 60000, "o")
    assert room.flag_at() == pytest.approx(35.5 + 60)


def test_loss_on_time_via_check_flag() -> None:
    room = new_room(ClockSpec(initial=10, increment=0))
    play(room, ["1a1", "1a2"])  # at t=1 and t=2; X's clock runs from t=2
    assert room.flag_at() == pytest.approx(12.0)
    assert room.check_flag(11.9).events == []
    (end,) = room.check_flag(12.1).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason, end.message.winner) == ("0-1", "time", "o")
    assert end.message.clocks is not None and end.message.clocks.x == 0
    assert room.check_flag(20).events == [] and room.flag_at() is None


def test_a_move_after_the_flag_fell_ends_the_game_instead() -> None:
    room = new_room(ClockSpec(initial=10, increment=0))
    play(room, ["1a1", "1a2"])
    (end,) = room.move(ANN, "2b2", 2, 13.0).events
    assert isinstance(end.message, GameEnd) and end.message.reason == "time"
    assert room.board.ply == 2


def test_time_runs_out_against_a_side_that_cannot_lose_any_more_is_a_draw() -> None:
    room = new_room(ClockSpec(initial=30, increment=0), variant="4x4")
    # After these ten moves O can no longer complete a line but X still can.
    play(room, ["d4", "a1", "c4", "d2", "a3", "a4", "b1", "d3", "c2", "c3"])
    assert not room.board.can_still_win(1) and room.board.turn == 0
    (end,) = room.check_flag(100.0).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason) == ("1/2-1/2", "time")


def test_pause_and_resume_never_charge_downtime() -> None:
    room = new_room(ClockSpec(initial=10, increment=0))
    play(room, ["1a1", "1a2"])  # X's clock runs from t=2
    room.pause(5.0)  # 3 s charged
    assert room.check_flag(1000.0).events == [] and room.flag_at() is None
    room.resume(1000.0)
    assert room.flag_at() == pytest.approx(1007.0)
    room.grant(ANN, 5)
    assert room.flag_at() == pytest.approx(1012.0)


# -- presence and claims ---------------------------------------------------------------------


def test_claim_too_early_then_allowed_after_the_grace() -> None:
    room = new_room(grace=60.0)
    play(room, ["1a1", "1a2", "2b2"])
    with refused("opponent_present"):
        room.claim(ANN, 5)
    (gone,) = room.disconnected(BOB, 10.0)
    assert gone.audience is Audience.OTHERS and gone.player == BOB
    assert gone.message == Presence(game="g1", version=4, side="o", online=False, claim_in=60.0)
    with pytest.raises(ClaimTooEarly) as early:
        room.claim(ANN, 30.0)
    assert early.value.code == "claim_too_early" and early.value.retry_in == pytest.approx(40.0)
    (end,) = room.claim(ANN, 70.0).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason, end.message.winner) == ("1-0", "claim", "x")


def test_coming_back_in_time_prevents_the_claim() -> None:
    room = new_room(grace=60.0)
    play(room, ["1a1", "1a2"])
    room.disconnected(BOB, 10.0)
    (back,) = room.connected(BOB, 50.0)
    assert isinstance(back.message, Presence) and back.message.online
    with refused("opponent_present"):
        room.claim(ANN, 100.0)


def test_a_claim_before_both_have_moved_aborts() -> None:
    room = new_room(grace=5.0)
    room.disconnected(ANN, 0.0)
    (end,) = room.claim(BOB, 6.0).events
    assert isinstance(end.message, GameEnd)
    assert (end.message.result, end.message.reason) == ("*", "abort")


# -- versions, catch-up, snapshots -----------------------------------------------------------


def test_reconnect_catch_up_via_since() -> None:
    room = new_room()
    play(room, ["1a1", "1a2"])
    seen = room.version
    room.disconnected(BOB, 3.0)
    play(room, ["2b2"], now=3)
    room.chat(ANN, "still there?", 5.0)
    missed = room.since(seen)
    assert missed is not None
    assert [type(m) for m in missed] == [Presence, MovePlayed]  # the chat takes no version
    assert [m.version for m in missed] == [seen + 1, seen + 2]
    assert room.since(room.version) == []
    assert room.since(room.version + 1) is None  # a version from another life of the room
    events = room.join(BOB, "Bob", 6.0, since=seen)
    assert events[0].audience is Audience.OTHERS  # Ann learns that Bob is back
    to_bob = [e.message for e in events if e.audience is Audience.PLAYER]
    assert [type(m) for m in to_bob] == [Presence, MovePlayed, ChatLine, Presence, Watching]
    # each version once, in order, the chat line in its place: no trailing presence repeats
    # the current version; the count of spectators last, unversioned
    assert [getattr(m, "version", None) for m in to_bob] == [
        seen + 1, seen + 2, None, seen + 3, None]
    assert all(e.player == BOB for e in events)


MODERATOR = "marta"


def delivered(out: Outbound, receivers: dict[str, bool]) -> list[str]:
    """Who of ``receivers`` (name -> a moderator watching) gets ``out``, as
    ``server.node.delivery`` addresses it."""
    match out.audience:
        case Audience.ROOM:
            return list(receivers)
        case Audience.PLAYER:
            return [out.player] if out.player in receivers else []
        case Audience.OTHERS:
            return [r for r in receivers if r != out.player]
        case Audience.SEATS:
            return [r for r, moderator in receivers.items() if r in out.players or moderator]
        case Audience.SPECTATORS:
            return [r for r in receivers if r not in out.players]


def test_every_receivers_stream_is_gap_free_with_both_chats_and_any_catch_up_closes() -> None:
    """Both chats reach part of the room only: no line may take a version that the other
    part never receives. Each receiver, applying versioned events only at exactly one more
    than it holds, never meets a gap; and a catch-up from any version it may hold closes in
    one round, with the lines of its chat said since (never a removed one), in order."""
    room = new_room()
    receivers = {ANN: False, BOB: False, EVE: False, MODERATOR: True}
    held: dict[str, int] = {}
    lines: dict[str, list[int]] = {name: [] for name in receivers}
    for name, moderator in receivers.items():
        (state,) = [e.message for e in room.join(name, name.title(), 0.0, moderator=moderator)
                    if e.audience is Audience.PLAYER]
        assert isinstance(state, GameState)
        held[name] = state.version

    def deliver(events: list[Outbound]) -> None:
        for out in events:
            for name in delivered(out, receivers):
                message = out.message
                version = getattr(message, "version", None)
                if version is not None:
                    assert version == held[name] + 1, f"{name} holds {held[name]}, got {message}"
                    held[name] = version
                elif isinstance(message, ChatLine):
                    lines[name].append(message.line)

    deliver(room.chat(EVE, "from the stands", 1.0))  # the spectators' chat first
    deliver(play(room, ["1a1"]))
    deliver(room.chat(ANN, "good luck", 2.0))
    deliver(room.chat(MODERATOR, "be nice", 2.5))
    deliver(play(room, ["1a2"], now=3))
    deliver(room.chat(BOB, "you too", 4.0))
    removed = room._chat[-1].line
    deliver(room.remove_chat(removed, 4.5))
    deliver(room.chat(EVE, "nice fork", 5.0))
    deliver(room.offer_draw(ANN, 6.0).events)
    deliver(room.chat(ANN, "a draw?", 6.5))
    deliver(room.decline_draw(BOB, 7.0))
    # presence reaches everyone but the player it is about, who has the game closed when it
    # leaves, and has it again through its catch-up when it comes back: no gap either
    del receivers[BOB]
    deliver(room.leave(BOB, 8.0))
    receivers[BOB] = False
    deliver(room.join(BOB, "Bob", 9.0, since=held[BOB]))
    said = [line.line for line in room._chat]
    assert sorted(said) == said and len(set(said)) == len(said)  # one count, never reused
    assert all(version == room.version for version in held.values())
    assert lines[ANN] == lines[BOB] == [2, 4, 6]  # the players' chat (4: removed since)
    assert lines[EVE] == [1, 3, 5] and lines[MODERATOR] == [1, 2, 3, 4, 5, 6]
    # each line's chat and the version it was said at; 4 is gone
    chat_of = {1: EVE, 2: ANN, 3: EVE, 5: EVE, 6: ANN}
    said_at = {1: 0, 2: 1, 3: 1, 5: 2, 6: 3}
    for name, moderator in receivers.items():
        for since in range(room.version + 1):
            caught = [e.message for e in room.catch_up(name, since, 8.0, moderator)]
            versions = [m.version for m in caught if hasattr(m, "version")]
            assert versions == list(range(since + 1, room.version + 1)), (name, since)
            replayed = [m.line for m in caught if isinstance(m, ChatLine)]
            assert replayed == [line for line, at in said_at.items() if at >= since and (
                moderator or (chat_of[line] == EVE) == (name == EVE))], (name, since)
    # each in its place: a catch-up from the first move replays the line said after it
    # before the second move, and the removal of a line the client may hold
    caught = [e.message for e in room.catch_up(ANN, 1, 8.0)]
    assert [type(m).__name__ for m in caught] == \
        ["ChatLine", "MovePlayed", "ChatRemoved", "Offer", "ChatLine", "Offer", "Presence",
         "Presence"]
    assert [m.text for m in caught if isinstance(m, ChatLine)] == ["good luck", "a draw?"]


def test_a_replayed_absence_says_how_long_until_a_claim_now() -> None:
    room = new_room()
    play(room, ["1a1", "1a2"])
    seen = room.version
    room.disconnected(BOB, 3.0)
    room.chat(ANN, "hello?", 4.0)
    (gone, chat) = [e.message for e in room.catch_up(ANN, seen, 13.0)]
    assert isinstance(gone, Presence) and isinstance(chat, ChatLine)
    assert gone.version == seen + 1 and not gone.online
    assert gone.claim_in == DEFAULT_GRACE - 10.0  # counted at the catch-up, not at the leaving


def test_a_client_too_far_behind_gets_the_full_state() -> None:
    room = new_room()
    for i in range(HISTORY_SIZE // 2 + 3):  # two events a round: an offer and its decline
        room.offer_draw(ANN, float(i))
        room.decline_draw(BOB, float(i))
    assert room.since(0) is None and room.since(5) is None and room.since(6) is not None
    (snapshot,) = room.catch_up(BOB, 0, 100.0)
    assert isinstance(snapshot.message, GameState)
    assert snapshot.message.you == "o" and snapshot.message.version == room.version


def test_a_catch_up_older_than_the_chat_kept_gets_the_full_state() -> None:
    """A catch-up replays every line said since; when some are no longer kept, the full
    state instead (with the last 50 lines)."""
    room = new_room()
    play(room, ["1a1"])
    for i in range(HISTORY_SIZE + 5):
        room.chat(ANN, f"line {i}", float(i))
    play(room, ["1a2"])
    assert room.version == 2 and room.since(0) is not None  # the chat took no version
    (snapshot,) = room.catch_up(BOB, 0, 100.0)
    assert isinstance(snapshot.message, GameState)
    assert len(snapshot.message.chat) == 50 and snapshot.message.chat[-1].text == "line 68"
    assert [line.line for line in snapshot.message.chat] == list(range(20, 70))
    caught = [e.message for e in room.catch_up(BOB, 2, 100.0)]  # after the chat: nothing
    assert caught == []


def test_the_snapshot_round_trips_and_never_carries_a_token() -> None:
    room = new_room(ClockSpec(initial=60, increment=1))
    play(room, ["1a1", "1a2"])
    frame = encode(room.snapshot(ANN, 3.0))
    state = decode_server_message(frame)
    assert isinstance(state, GameState)
    assert state.you == "x" and state.moves == [0, 4]
    assert [s.name for s in state.seats] == ["Ann", "Bob"]
    assert state.clocks is not None and state.clocks.running == "x" and state.clocks.x == 59000
    assert b"token" not in frame


# -- rematch and ratings ---------------------------------------------------------------------


def test_rematch_needs_both_and_swaps_colours() -> None:
    room = new_room()
    with refused("game_not_over"):
        room.ask_rematch(ANN, 0)
    room.resign(ANN, 1)
    (asked,) = room.ask_rematch(BOB, 2)
    assert isinstance(asked.message, Offer) and asked.message.kind == "rematch"
    assert not room.rematch_agreed
    with refused("already_offered"):
        room.ask_rematch(BOB, 2)
    room.ask_rematch(ANN, 3)
    assert room.rematch_agreed
    assert [s.player for s in room.rematch_seats()] == [BOB, ANN]


def test_the_computer_agrees_to_a_rematch_and_declines_draws() -> None:
    seats = (RoomSeat(ANN, "Ann"), RoomSeat(COMPUTER, "computer level 3", computer_level=3))
    room = GameRoom("g2", seats)
    assert room.computer_side == 1 and not room.computer_to_move
    room.move(ANN, "1a1", 0, 1.0)
    assert room.computer_to_move
    with refused("not_allowed"):
        room.offer_draw(ANN, 2.0)
    room.move(COMPUTER, "2b2", 1, 2.0)
    assert room.disconnected(COMPUTER, 3.0) == []
    room.resign(ANN, 4.0)
    room.ask_rematch(ANN, 5.0)
    assert room.rematch_agreed


def computer_room(
    computer_plays: str = "o", clock: ClockSpec | None = None, rated: bool = False
) -> GameRoom:
    human, computer = RoomSeat(ANN, "Ann"), computer_seat(3)
    seats = (human, computer) if computer_plays == "o" else (computer, human)
    return GameRoom("g2", seats, clock=clock, rated=rated)


def test_a_takeback_against_the_computer_removes_its_reply_too() -> None:
    room = computer_room()
    play(room, ["1a1", "2b2", "1a2", "2b3"])
    seen = room.version
    (event,) = only(room.take_back(ANN, 5.0).events, TakenBack)
    assert (event.ply, event.by, event.version) == (2, "x", seen + 1)
    assert room.board.moves == [0, 21] and not room.computer_to_move
    # with the computer still thinking, only the player's own move goes
    play(room, ["1a3"], now=6.0)
    assert room.computer_to_move
    (event,) = only(room.take_back(ANN, 8.0).events, TakenBack)
    assert event.ply == 2 and room.board.moves == [0, 21]
    # a client at ``seen`` replays both takebacks; the history stays in version order
    missed = room.since(seen)
    assert missed is not None
    assert [type(m) for m in missed] == [TakenBack, MovePlayed, TakenBack]
    assert decode_server_message(encode(event)) == event
    play(room, ["3c3"], now=9.0)  # play on from ply 2
    assert room.board.ply == 3


def test_a_takeback_needs_a_move_of_yours_and_a_casual_game_against_the_computer() -> None:
    room = computer_room(computer_plays="x")
    with refused("not_allowed"):
        room.take_back(ANN, 1.0)  # nothing played
    room.move(COMPUTER, "1a1", 0, 1.0)
    with refused("not_allowed"):
        room.take_back(ANN, 2.0)  # only the computer's move
    room.move(ANN, "2b2", 1, 3.0)
    (event,) = only(room.take_back(ANN, 4.0).events, TakenBack)
    assert event.ply == 1 and room.board.moves == [0]
    with refused("spectator"):
        room.join(EVE, "Eve", 5.0)
        room.take_back(EVE, 5.0)
    people = new_room()
    play(people, ["1a1", "1a2"])
    with refused("not_allowed"):
        people.take_back(ANN, 5.0)
    with refused("not_allowed"):
        people.check_hint(ANN)
    rated = computer_room(rated=True)
    play(rated, ["1a1", "1a2"])
    with refused("not_allowed"):
        rated.take_back(ANN, 5.0)
    with refused("not_allowed"):
        rated.check_hint(ANN)
    room.resign(ANN, 6.0)
    with refused("game_over"):
        room.take_back(ANN, 7.0)


def test_a_hint_is_for_the_players_own_turn() -> None:
    room = computer_room()
    room.check_hint(ANN)
    room.move(ANN, "1a1", 0, 1.0)
    with refused("not_your_turn"):
        room.check_hint(ANN)  # the computer is thinking
    with refused("not_seated"):
        room.check_hint(EVE)


def test_a_takeback_keeps_the_time_used_and_runs_the_clock_of_the_side_to_move() -> None:
    room = computer_room(clock=ClockSpec(60, 0))
    play(room, ["1a1", "2b2", "1a2"], step=10.0)  # X used 10 s; O's clock runs from 30 s
    (event,) = only(room.take_back(ANN, 35.0).events, TakenBack)
    assert event.ply == 2 and event.clocks is not None
    assert (event.clocks.x, event.clocks.o, event.clocks.running) == (50000, 55000, "x")
    clocks = room.clocks(45.0)
    assert clocks is not None and clocks.x == 40000


def test_the_rating_change_fills_the_end_everywhere() -> None:
    room = new_room(rated=True)
    play(room, ["1a1", "4d4"])
    events = room.resign(BOB, 1.0).events
    change = RatingChange(x=9, o=-9)
    rated = room.set_rating_change(change, events)
    assert rated[0].message.rating_change == change  # type: ignore[union-attr]
    assert room.snapshot(None, 2.0).end.rating_change == change  # type: ignore[union-attr]
    assert room.since(0)[-1].rating_change == change  # type: ignore[index,union-attr]


# -- rebuilding from the store ---------------------------------------------------------------


def stored_game(moves: list[tuple[int, float, float]]) -> GameRecord:
    return GameRecord(
        id="g7",
        variant="4x4x4",
        clock=TimeControl(60.0, 2.0),
        rated=True,
        x=Seat.human(ANN),
        o=Seat.human(BOB),
        status=GameStatus.ACTIVE,
        created=0.0,
        x_rating=1500.0,
        o_rating=1600.0,
        moves=tuple(
            MoveRecord(ply=i + 1, cell=cell, clock_x=cx, clock_o=co, at=100.0 + i)
            for i, (cell, cx, co) in enumerate(moves)
        ),
    )


def test_rebuild_from_stored_moves_resumes_at_the_same_ply() -> None:
    record = stored_game([(0, 60.0, 60.0), (4, 60.0, 60.0), (17, 50.0, 60.0)])
    room = GameRoom.restore(record, now=5000.0, grace=60.0)
    assert room.board.moves == [0, 4, 17] and room.board.turn == 1
    assert [s.rating for s in room.seats] == [1500, 1600]
    state = room.snapshot(BOB, 5000.0)
    assert [s.online for s in state.seats] == [False, False]
    assert state.clocks is not None and (state.clocks.x, state.clocks.o) == (50000, 60000)
    assert state.clocks.running is None  # paused: the downtime is nobody's
    assert room.check_flag(9999.0).events == []
    room.connected(BOB, 6000.0)  # the side to move is back: its clock runs again
    assert room.flag_at() == pytest.approx(6060.0)
    (played,) = room.move(BOB, "1a3", 3, 6010.0).events
    assert isinstance(played.message, MovePlayed)
    assert played.message.clocks is not None and played.message.clocks.o == 52000
    assert room.last_move_record(at=7.0) == MoveRecord(
        ply=4, cell=8, clock_x=50.0, clock_o=52.0, at=7.0
    )


def test_a_rebuilt_room_sends_old_clients_the_full_state() -> None:
    room = GameRoom.restore(stored_game([(0, 60.0, 60.0)]), now=0.0)
    for old_version in range(0, 5):
        assert room.since(old_version) is None
    room.disconnected(ANN, 1.0)  # already away: no event
    (snapshot,) = room.catch_up(ANN, 1, 1.0)
    assert isinstance(snapshot.message, GameState) and snapshot.message.moves == [0]


def test_a_rebuilt_opponent_who_never_returns_can_be_claimed_against() -> None:
    room = GameRoom.restore(stored_game([(0, 60.0, 60.0), (4, 60.0, 60.0)]), now=0.0, grace=60.0)
    room.connected(BOB, 10.0)
    with pytest.raises(ClaimTooEarly):
        room.claim(BOB, 30.0)
    (end,) = room.claim(BOB, 61.0).events
    assert isinstance(end.message, GameEnd) and end.message.winner == "o"


def test_the_room_imports_no_asyncio_or_aiohttp() -> None:
    code = "import sys, server.game.room; print(sorted({'asyncio', 'aiohttp'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- abandoned games (issue 13, item 10) ------------------------------------------------------


def test_a_game_is_abandoned_only_once_every_human_has_left() -> None:
    room = new_room()
    play(room, ["1a1", "1a2", "2b2"])
    assert room.anyone_in and room.abandoned_since() is None
    room.leave(ANN, 10.0)
    assert room.anyone_in and room.abandoned_since() is None
    with refused("not_allowed"):
        room.abandon(11.0)
    room.leave(BOB, 12.0)
    assert not room.anyone_in and room.abandoned_since() == 12.0
    room.join(BOB, "Bob", 13.0)
    assert room.abandoned_since() is None


def test_an_abandoned_game_is_lost_by_the_side_to_move() -> None:
    room = new_room()
    play(room, ["1a1", "1a2", "2b2"])  # O to move
    room.leave(ANN, 10.0)
    room.leave(BOB, 11.0)
    (end,) = only(room.abandon(700.0).events, GameEnd)
    assert (end.result, end.reason, end.winner) == ("1-0", "abandoned", "x")
    assert room.over and room.abandoned_since() is None and not room.anyone_in


def test_an_abandoned_game_before_both_sides_moved_is_called_off() -> None:
    room = new_room()
    play(room, ["1a1"])
    room.leave(ANN, 1.0)
    room.leave(BOB, 2.0)
    (end,) = only(room.abandon(700.0).events, GameEnd)
    assert (end.result, end.reason, end.winner) == ("*", "abort", None)


def test_a_computer_game_is_abandoned_when_its_human_has_left() -> None:
    room = GameRoom("g2", (RoomSeat(ANN, "Ann", 1500), computer_seat(3)))
    play(room, ["1a1", "1a2"])
    assert room.anyone_in
    room.leave(ANN, 5.0)
    assert room.abandoned_since() == 5.0  # the computer never counts as someone in the game
    (end,) = only(room.abandon(900.0).events, GameEnd)
    assert (end.result, end.reason) == ("0-1", "abandoned")


def test_a_moderator_watching_is_shown_both_chats_and_a_seated_one_only_the_players() -> None:
    room = new_room()
    room.join(EVE, "Eve", 0.0)
    room.join("marta", "Marta", 0.0, moderator=True)
    room.chat(ANN, "players'", 1.0)
    room.chat(EVE, "spectators'", 2.0)

    def shown(player: str, moderator: bool) -> list[str]:
        return [line.text for line in room.snapshot(player, 3.0, moderator).chat]

    assert shown("marta", True) == ["players'", "spectators'"]
    assert shown(EVE, False) == ["spectators'"]
    assert shown(ANN, True) == ["players'"]  # a moderator who plays is a player here
    caught = room.join("marta", "Marta", 3.0, since=0, moderator=True)
    assert [e.message.text for e in caught if isinstance(e.message, ChatLine)] == \
        ["players'", "spectators'"]
