"""bench/resist.py: ``--seeds 0`` (the survival against perfect X only) makes no table of no
games, and without ``--survival`` is refused before anything is played."""

from __future__ import annotations

import sys

import pytest

from bench import resist


def test_no_games_make_no_rows() -> None:
    assert resist.rows([], ["alphabeta"], ["resist=off", "resist=on"]) == []


def test_the_rows_count_each_player_and_setting() -> None:
    games: list[dict[str, object]] = [
        {"x": "alphabeta", "setting": "resist=on", "winner": winner, "plies": plies,
         "o_moves_lost_by_proof": 1}
        for winner, plies in [("O", 30), ("X", 21), ("draw", 64)]]
    [row] = resist.rows(games, ["alphabeta", "mcts"], ["resist=off", "resist=on"])
    assert row == {"x": "alphabeta", "resist": "resist=on", "o_won": 1, "draws": 1, "x_won": 1,
                   "median_plies": 30, "o_moves_lost_by_proof": 3}


@pytest.mark.parametrize("seeds", ["0", "-1"])
def test_no_games_and_no_survival_is_refused(seeds: str, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["resist.py", "--seeds", seeds])
    with pytest.raises(SystemExit) as exited:
        resist.main()
    assert exited.value.code == 2
    assert "no game to play" in capsys.readouterr().err
