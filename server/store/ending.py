"""The end of a game as one pure function: the finished game and the players after it.

Every store locks the game and its players, calls ``end_game`` and writes what it returns in
the same transaction, so the result, the Glicko-2 update and the players' counters are computed
in one place and ratings can never differ between the embedded server and a cluster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from server.game.ratings import rate_game
from server.game.records import RESULT_SCORES, GameRecord, GameStatus, PlayerRecord

_COUNTER = {1.0: "wins", 0.0: "losses", 0.5: "draws"}


@dataclass(frozen=True)
class FinishedGame:
    """What finishing a game writes: the game as it ends, and each registered player in it as
    they stand afterwards (one record per player, in seat order, X first)."""

    game: GameRecord
    players: tuple[PlayerRecord, ...]


def x_score(result: str) -> float:
    """X's score for ``result``; a ``ValueError`` for anything but the three results."""
    if result not in RESULT_SCORES:
        raise ValueError(f"{result!r} is not a result: write 1-0, 0-1 or 1/2-1/2")
    return RESULT_SCORES[result]


def end_game(
    game: GameRecord,
    x: PlayerRecord | None,
    o: PlayerRecord | None,
    *,
    result: str,
    reason: str,
    now: float,
    winning_line: Sequence[int] | None = None,
) -> FinishedGame:
    """``game`` finished with ``result``, and its players ``x`` and ``o`` (None: the computer or
    an unregistered guest) after it.

    Both players' ``games`` and their win, loss or draw count go up by one. A rated game
    between two registered players also rates both with Glicko-2 from their ratings before
    the game (one game is one rating period) and records those ratings and the changes on the
    game, with ``now`` as their ``last_rated``. A player on both seats is counted twice,
    and keeps O's rating. Players are told apart by their names as registered.
    """
    score = x_score(result)
    ended = dataclasses.replace(
        game,
        status=GameStatus.FINISHED,
        result=result,
        reason=reason,
        winning_line=None if winning_line is None else tuple(winning_line),
        ended=now,
    )
    after: dict[str, PlayerRecord] = {}
    if game.rated and x is not None and o is not None:
        new_x, new_o = rate_game(x.glicko, o.glicko, score)
        ended = dataclasses.replace(
            ended,
            x_rating=x.rating,
            o_rating=o.rating,
            x_rating_change=new_x.rating - x.rating,
            o_rating_change=new_o.rating - o.rating,
        )
        for player, new in ((x, new_x), (o, new_o)):
            current = after.get(player.name, player)
            after[player.name] = dataclasses.replace(
                current,
                rating=new.rating,
                rd=new.rd,
                volatility=new.volatility,
                rated_games=current.rated_games + 1,
                last_rated=now,
            )
    for seated, seat_score in ((x, score), (o, 1.0 - score)):
        if seated is not None:
            current = after.get(seated.name, seated)
            counter = _COUNTER[seat_score]
            after[seated.name] = dataclasses.replace(
                current, games=current.games + 1, **{counter: getattr(current, counter) + 1}
            )
    return FinishedGame(ended, tuple(after.values()))
