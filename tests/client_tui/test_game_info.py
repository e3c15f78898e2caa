"""The lines beside the board: seats, clocks, presence, whose turn, offers and claims."""

from __future__ import annotations

from scenes import game

from client_tui.model import GameModel
from client_tui.widgets.game_info import note_line, seat_line, status_line
from server.protocol import ComputerThinking, GameEnd, Offer, Presence, SeatInfo


def test_seats_show_turn_clock_and_you() -> None:
    model = GameModel.from_state(game(), now=100.0)
    x, o = (seat_line(model, side, 101.0, 40).plain for side in ("x", "o"))
    assert x.startswith("  X ann (1500) · you ●") and x.endswith("4:01")
    assert o.startswith("▶ O bob (1612) ●") and o.endswith("3:06")  # o's clock is running
    assert status_line(model, 101.0).plain == "Waiting for bob"


def test_an_absent_opponent_can_be_claimed_after_the_grace() -> None:
    model = GameModel.from_state(game(), now=0.0)
    model.apply(Presence(game="g1", version=12, side="o", online=False, claim_in=30.0), 0.0)
    assert "away, claim in 20s" in seat_line(model, "o", 10.0, 60).plain
    assert note_line(model, 10.0) is None
    assert note_line(model, 31.0).plain == "Opponent gone: w claims the win"


def test_offers_and_the_end() -> None:
    model = GameModel.from_state(game(), now=0.0)
    model.apply(Offer(game="g1", kind="draw", by="o", version=12), 0.0)
    assert note_line(model, 0.0).plain == "Draw offered: o accepts, n declines"
    model.apply(GameEnd(game="g1", version=13, result="1/2-1/2", reason="agreement"), 0.0)
    assert status_line(model, 0.0).plain == "Draw 1/2-1/2 · draw agreed"
    model.apply(Offer(game="g1", kind="rematch", by="o", version=14), 0.0)
    assert note_line(model, 0.0).plain == "Rematch asked: m accepts"


def test_the_computer_thinking() -> None:
    state = game()
    state.seats[1] = SeatInfo(name="Computer (level 5)", ai=5)
    model = GameModel.from_state(state, now=0.0)
    model.apply(ComputerThinking(game="g1", ply=9, depth=6), 0.0)
    assert status_line(model, 0.0).plain == "Computer thinking… (depth 6)"
    assert "(" not in seat_line(model, "o", 0.0, 60).plain.split("5)")[1]  # no rating shown
