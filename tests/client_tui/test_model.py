"""The client's models: events applied in version order, clocks, review, threats, text."""

from __future__ import annotations

import subprocess
import sys

import pytest

from client_tui.model import (
    Applied,
    GameModel,
    LobbyModel,
    describe_end,
    format_clock,
    format_clock_spec,
    parse_clock_spec,
    threats,
)
from engine import Board, O, X
from server.protocol import (
    ChatLine,
    ChatRemoved,
    Clocks,
    ClockSpec,
    ComputerThinking,
    GameEnd,
    GameState,
    GameSummary,
    LobbyDelta,
    LobbySnapshot,
    MovePlayed,
    Offer,
    PlayerOnline,
    Presence,
    RatingChange,
    SeatInfo,
    SeekInfo,
    Watching,
)


def state(moves: list[int] = (), version: int = 0, you: str | None = "x", **fields) -> GameState:
    return GameState(
        id="g1", variant="4x4x4", clock=fields.pop("clock", None), rated=False,
        seats=[SeatInfo(name="ann", rating=1500), SeatInfo(name="bob", rating=1600)],
        moves=list(moves), clocks=fields.pop("clocks", None), status="playing",
        version=version, you=you, **fields,
    )


def move(ply: int, cell: int, version: int, clocks: Clocks | None = None) -> MovePlayed:
    return MovePlayed(game="g1", ply=ply, cell=cell, notation="", side="xo"[(ply - 1) % 2],
                      clocks=clocks, version=version)


def test_events_apply_in_version_order_and_a_gap_asks_for_a_resync() -> None:
    model = GameModel.from_state(state(), now=0.0)
    assert model.apply(move(1, 0, 1), 0.0) is Applied.CHANGED
    assert model.apply(move(1, 0, 1), 0.0) is Applied.IGNORED  # a duplicate
    assert model.apply(move(3, 2, 3), 0.0) is Applied.GAP  # version 2 went missing
    assert model.board.moves == [0] and model.version == 1
    assert model.apply(move(2, 5, 2), 0.0) is Applied.CHANGED
    assert model.turn == "x" and model.my_turn


def test_a_move_for_the_wrong_ply_is_a_gap_even_with_the_next_version() -> None:
    model = GameModel.from_state(state([0]), now=0.0)
    assert model.apply(move(3, 7, 1), 0.0) is Applied.GAP


def test_events_of_another_game_are_ignored() -> None:
    model = GameModel.from_state(state(), now=0.0)
    other = MovePlayed(game="g2", ply=1, cell=0, notation="1a1", side="x", clocks=None,
                       version=1)
    assert model.apply(other, 0.0) is Applied.IGNORED


def test_offers_chat_presence_and_the_end() -> None:
    model = GameModel.from_state(state([0, 1]), now=0.0)
    model.apply(Offer(game="g1", kind="draw", by="o", version=1), 0.0)
    assert model.draw_offer == "o"
    model.apply(ChatLine(game="g1", name="bob", side="o", text="hi", line=1), 0.0)
    assert [line.text for line in model.chat] == ["hi"] and model.version == 1
    model.apply(Presence(game="g1", version=2, side="o", online=False, claim_in=60.0), 10.0)
    assert not model.seat("o").online
    assert model.claim_in("o", 40.0) == 30.0 and not model.can_claim(40.0)
    assert model.can_claim(70.0)
    model.apply(Presence(game="g1", version=2, side="o", online=True), 71.0)  # catch-up: same v
    assert model.seat("o").online and not model.can_claim(72.0) and model.version == 2
    model.apply(move(3, 2, 3), 72.0)
    assert model.draw_offer is None  # a move withdraws the offer
    model.apply(GameEnd(game="g1", version=4, result="0-1", reason="resign", winner="o",
                        rating_change=RatingChange(x=-8, o=8)), 73.0)
    assert model.over and not model.my_turn
    assert describe_end(model) == "You lose 0-1 · resignation · rating -8"
    model.apply(Offer(game="g1", kind="rematch", by="o", version=5), 74.0)
    assert model.rematch == {"o"}


def test_a_chat_line_removed_by_a_moderator_leaves_the_chat() -> None:
    model = GameModel.from_state(state(), now=0.0)
    for line, text in ((1, "rude"), (2, "fine")):
        model.apply(ChatLine(game="g1", name="bob", side="o", text=text, line=line), 0.0)
    assert model.apply(ChatRemoved(game="g1", line=1), 0.0) is Applied.CHANGED
    assert [line.text for line in model.chat] == ["fine"] and model.version == 0
    assert model.apply(ChatRemoved(game="g1", line=1), 0.0) is Applied.IGNORED


def test_the_count_of_spectators_follows_watching_whatever_the_version() -> None:
    model = GameModel.from_state(state(version=4, spectators=1), now=0.0)
    assert model.apply(Watching(game="g1", count=2), 0.0) is Applied.CHANGED
    assert model.spectators == 2 and model.version == 4
    assert model.apply(Watching(game="g1", count=2), 0.0) is Applied.IGNORED


def said(line: int, text: str = "hi") -> ChatLine:
    return ChatLine(game="g1", name="bob", side="o", text=text, line=line)


def test_chat_is_applied_whatever_the_version_each_line_once_in_its_place() -> None:
    """Chat takes no version (docs/protocol.md): a line is never a gap, and a catch-up that
    sends again a line already held (said just after the version it asked from) adds
    nothing; a line replayed late goes to its place."""
    model = GameModel.from_state(state([0], version=7), now=0.0)
    assert model.apply(said(5, "first"), 0.0) is Applied.CHANGED
    assert model.apply(said(9, "third"), 0.0) is Applied.CHANGED
    assert model.apply(said(5, "first"), 0.0) is Applied.IGNORED
    assert model.apply(said(6, "second"), 0.0) is Applied.CHANGED
    assert [line.text for line in model.chat] == ["first", "second", "third"]
    assert model.version == 7 and model.asked is None


def test_a_gap_asks_one_catch_up_at_a_time_and_after_two_that_fail_the_full_game() -> None:
    """The versioning rule with a bound: a gap asks `watch{since}`; while it is on its way,
    more gapped events ask nothing; a catch-up whose ack leaves the gap open asks again, and
    after two such the full game (`watch` without `since`): one server event, at most one
    frame."""
    model = GameModel.from_state(state([0], version=1), now=0.0)
    assert model.apply(move(3, 2, 4), 0.0) is Applied.GAP  # versions 2 and 3 are missing
    first = model.resync()
    assert first is not None and first.since == 1
    assert model.apply(move(4, 3, 5), 0.0) is Applied.GAP
    assert model.resync() is None  # one on its way: nothing more
    # its catch-up brings version 2 only (3 never comes): the gap stays open
    assert model.apply(Offer(game="g1", kind="draw", by="x", version=2), 0.0) is Applied.CHANGED
    second = model.caught_up(first)
    assert second is not None and second.since == 2 and model.failed == 1
    assert model.caught_up(first) is None  # an answer already taken asks nothing
    third = model.caught_up(second)
    assert third is not None and third.since is None and model.failed == 2  # the full game
    assert model.resync() is None  # still one at a time
    # the full game comes: a fresh model, nothing owed
    fresh = GameModel.from_state(state([0, 1, 2, 3], version=5), now=0.0)
    assert fresh.asked is None and fresh.failed == 0
    assert fresh.caught_up(third) is None


def test_a_catch_up_that_closes_the_gap_resets_the_count() -> None:
    model = GameModel.from_state(state([0], version=1), now=0.0)
    model.apply(move(2, 2, 3), 0.0)
    request = model.resync()
    assert request is not None
    assert model.apply(Offer(game="g1", kind="draw", by="x", version=2), 0.0) is Applied.CHANGED
    assert model.apply(move(2, 2, 3), 0.0) is Applied.CHANGED
    assert model.caught_up(request) is None and model.failed == 0 and model.asked is None
    assert model.board.moves == [0, 2]


def test_a_refused_catch_up_asks_nothing_and_the_next_gap_counts_it() -> None:
    model = GameModel.from_state(state([0], version=1), now=0.0)
    model.apply(move(2, 2, 3), 0.0)
    request = model.resync()
    assert request is not None
    model.refused(request)
    assert model.asked is None and model.failed == 1
    model.apply(move(2, 2, 3), 0.0)
    again = model.resync()
    assert again is not None and again.since == 1
    assert model.reconnected().since == 1  # a new link: what was on its way is gone


def test_the_computer_thinking_is_cleared_by_its_move() -> None:
    model = GameModel.from_state(state([0], you="x"), now=0.0)
    model.apply(ComputerThinking(game="g1", ply=1, depth=4), 0.0)
    assert model.thinking is not None and model.thinking.depth == 4
    model.apply(move(2, 9, 1), 0.0)
    assert model.thinking is None


def test_the_running_clock_counts_down_locally() -> None:
    clocks = Clocks(x=60_000, o=30_000, running="o")
    model = GameModel.from_state(state([0, 1, 2], clock=ClockSpec(initial=60, increment=0),
                                       clocks=clocks), now=100.0)
    assert model.time_left("o", 102.5) == 27_500
    assert model.time_left("x", 102.5) == 60_000
    assert model.time_left("o", 200.0) == 0


def test_stepping_through_the_moves() -> None:
    model = GameModel.from_state(state([0, 21, 42]), now=0.0)
    model.step(-1)
    assert model.reviewing and model.shown_ply == 2 and model.last_move() == 21
    assert model.shown_board().moves == [0, 21]
    model.step(-5)
    assert model.shown_ply == 0 and model.last_move() is None
    model.step(+10)
    assert not model.reviewing and model.shown_board() is model.board


def test_threats_are_the_cells_that_complete_a_line() -> None:
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1")
    assert threats(board, X) == {3}  # 1d1
    assert threats(board, O) == frozenset()
    flat = Board.from_notation("3x3", "a1 a2 b1 b2")
    assert threats(flat, X) == {2} and threats(flat, O) == {5}


def test_a_won_board_shows_its_line() -> None:
    won = GameModel.from_state(state([0, 16, 1, 17, 2, 18, 3]), now=0.0)
    assert won.winning_line() == (0, 1, 2, 3)


@pytest.mark.parametrize(("ms", "text"), [
    (0, "0:00.0"), (9_450, "0:09.4"), (10_000, "0:10"), (605_000, "10:05"),
    (3_723_000, "1:02:03"), (-5, "0:00.0"),
])
def test_format_clock(ms: int, text: str) -> None:
    assert format_clock(ms) == text


def test_clock_specs_round_trip() -> None:
    assert parse_clock_spec("5+3") == ClockSpec(initial=300, increment=3)
    assert parse_clock_spec("untimed") is None and parse_clock_spec("") is None
    assert format_clock_spec(ClockSpec(initial=30, increment=1)) == "30s+1"
    assert format_clock_spec(parse_clock_spec("15+10")) == "15+10"
    for bad in ("x+1", "0+0", "999+0"):
        with pytest.raises(ValueError):
            parse_clock_spec(bad)


def test_the_lobby_follows_its_deltas() -> None:
    seek = SeekInfo(id="s1", name="bob", rating=1600, variant="4x4x4", clock=None, rated=False,
                    colour="random")
    game = GameSummary(id="g1", variant="3x3x3", clock=None, rated=False, x="a", o="b", ply=3)
    lobby = LobbyModel()
    ann, bob = PlayerOnline(name="ann", rating=1500), PlayerOnline(name="bob", rating=1600)
    lobby.load(LobbySnapshot(seeks=[seek], games=[], online=2, players=[ann, bob]))
    lobby.apply(LobbyDelta(seeks_removed=["s1"], games_added=[game], online=None))
    assert lobby.seeks == {} and list(lobby.games) == ["g1"] and lobby.online == 2
    assert lobby.players == [ann, bob]  # players: null in a delta, unchanged
    lobby.apply(LobbyDelta(online=1, players=[bob]))
    assert lobby.players == [bob] and lobby.online == 1


def test_the_models_come_without_textual() -> None:
    """The client's state is plain objects that the screens draw: importing the models (the
    games', the lobby's, the puzzles') brings no Textual with it."""
    code = "import sys, client_tui.model, client_tui.puzzle_model; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
