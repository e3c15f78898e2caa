"""Computer-vs-computer matches: games, per-player statistics and an Elo estimate.

Pure match logic: no printing and no files. ``run_match("rubinoff:eval=eval1", "rubinoff",
games=20)`` plays game ``i`` with A as X when ``i`` is even, each game with its own seeds drawn
from the match seed, so a match (or any single game of it) replays move for move.

The statistics are the ones Rubinoff tabulated: wins, draws and losses, and per move the
average time, static evaluations and branching factor (children expanded per interior node of
the search, averaged over the moves that searched).

Against a searching seed player, whose only randomness is how it breaks ties, a match need
not be sampled: ``engine.players.exact_match.exact_match`` walks every game it can play and returns
the exact chances.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from engine.players import Limit, Player, make_player
from engine.rules.board import Board, Outcome, X
from engine.rules.geometry import Cell, variant
from engine.rules.notation import format_moves

A, B = "a", "b"


@dataclass(frozen=True)
class ArenaMove:
    """One move of a game and what it cost the player who made it."""

    player: str  # "a" or "b"
    cell: Cell
    seconds: float  # wall time of the whole decide() call
    nodes: int
    evaluations: int
    branching: float | None


@dataclass(frozen=True)
class ArenaGame:
    """One finished game: who had X, the moves and how it ended."""

    index: int
    a_is_x: bool
    seed_a: int
    seed_b: int
    moves: tuple[ArenaMove, ...]
    outcome: Outcome

    @property
    def winner(self) -> str | None:
        """``"a"``, ``"b"`` or ``None`` for a draw."""
        if self.outcome.winner is None:
            return None
        return A if (self.outcome.winner == X) == self.a_is_x else B

    def cells(self) -> list[Cell]:
        return [m.cell for m in self.moves]

    def average_branching(self, player: str) -> float | None:
        """The mean of ``player``'s per-move branching factors in this game."""
        values = [m.branching for m in self.moves if m.player == player and m.branching]
        return sum(values) / len(values) if values else None


@dataclass
class PlayerStats:
    """One side of a match, summed over its games and moves."""

    spec: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    wins_as_x: int = 0
    moves: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0
    nodes: int = 0
    evaluations: int = 0
    branching_sum: float = 0.0
    branching_moves: int = 0

    def add_move(self, move: ArenaMove) -> None:
        self.moves += 1
        self.seconds += move.seconds
        self.max_seconds = max(self.max_seconds, move.seconds)
        self.nodes += move.nodes
        self.evaluations += move.evaluations
        if move.branching:
            self.branching_sum += move.branching
            self.branching_moves += 1

    @property
    def average_seconds(self) -> float:
        return self.seconds / self.moves if self.moves else 0.0

    @property
    def average_evaluations(self) -> float:
        return self.evaluations / self.moves if self.moves else 0.0

    @property
    def average_nodes(self) -> float:
        return self.nodes / self.moves if self.moves else 0.0

    @property
    def average_branching(self) -> float | None:
        """Mean over moves of children per interior node; None for players that do not search."""
        return self.branching_sum / self.branching_moves if self.branching_moves else None

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "wins_as_x": self.wins_as_x,
            "moves": self.moves,
            "avg_move_seconds": self.average_seconds,
            "max_move_seconds": self.max_seconds,
            "avg_evaluations": self.average_evaluations,
            "avg_nodes": self.average_nodes,
            "avg_branching": self.average_branching,
        }


@dataclass(frozen=True)
class EloEstimate:
    """Elo of A relative to B with a 95% interval, as cutechess and fastchess compute it.

    ``elo`` is None when A scored 0% or 100% (the estimate is infinite); ``margin`` is None
    when the interval reaches a 0% or 100% score (its half-width is infinite).
    """

    score: float  # A's mean score per game, draws counting one half
    elo: float | None
    margin: float | None
    low: float | None
    high: float | None

    def describe(self) -> str:
        if self.elo is None:
            side = "+inf" if self.score >= 1 else "-inf"
            return f"{side} (A scored {self.score:.0%}: no finite estimate)"
        if self.margin is None:
            return f"{self.elo:+.0f} (95% interval unbounded: too few games or too one-sided)"
        return f"{self.elo:+.0f} ± {self.margin:.0f} (95%)"


def _elo_from_score(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no "-0" at an even score


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo difference from a score, with the error bar from the per-game score variance."""
    games = wins + draws + losses
    if games == 0:
        return EloEstimate(0.5, None, None, None, None)
    score = (wins + 0.5 * draws) / games
    variance = (
        wins * (1.0 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * (0.0 - score) ** 2
    ) / games
    deviation = math.sqrt(variance / games) * NormalDist().inv_cdf(0.5 + confidence / 2)
    if score <= 0.0 or score >= 1.0:
        return EloEstimate(score, None, None, None, None)
    elo = _elo_from_score(score)
    lo_score, hi_score = score - deviation, score + deviation
    if lo_score <= 0.0 or hi_score >= 1.0:
        return EloEstimate(score, elo, None, None, None)
    low, high = _elo_from_score(lo_score), _elo_from_score(hi_score)
    return EloEstimate(score, elo, (high - low) / 2, low, high)


@dataclass
class MatchResult:
    """A match so far: the games played and each side's statistics."""

    variant: str
    seed: int
    limit: Limit
    a: PlayerStats
    b: PlayerStats
    records: list[ArenaGame] = field(default_factory=list)

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def draws(self) -> int:
        return self.a.draws

    def elo(self) -> EloEstimate:
        return elo_estimate(self.a.wins, self.a.draws, self.a.losses)

    def add(self, record: ArenaGame) -> None:
        self.records.append(record)
        for move in record.moves:
            (self.a if move.player == A else self.b).add_move(move)
        winner = record.winner
        if winner is None:
            self.a.draws += 1
            self.b.draws += 1
            return
        won, lost = (self.a, self.b) if winner == A else (self.b, self.a)
        won.wins += 1
        lost.losses += 1
        if (winner == A) == record.a_is_x:
            won.wins_as_x += 1

    def to_json(self, with_games: bool = True) -> dict[str, Any]:
        elo = self.elo()
        data: dict[str, Any] = {
            "variant": self.variant,
            "seed": self.seed,
            "limit": {"time": self.limit.time, "depth": self.limit.depth},
            "games": self.games,
            "a_wins": self.a.wins,
            "b_wins": self.b.wins,
            "draws": self.draws,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "elo": {"a_minus_b": elo.elo, "margin95": elo.margin, "low": elo.low,
                    "high": elo.high, "score": elo.score},
        }
        if with_games:
            geometry = variant(self.variant)
            data["game_list"] = [
                {
                    "index": r.index,
                    "x": A if r.a_is_x else B,
                    "result": r.outcome.result,
                    "termination": r.outcome.termination.value,
                    "winner": r.winner,
                    "seeds": {"a": r.seed_a, "b": r.seed_b},
                    "moves": format_moves(r.cells(), geometry),
                }
                for r in self.records
            ]
        return data


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """The seeds of A and B in game ``index`` of a match seeded ``seed``."""
    rng = random.Random(f"arena/{seed}/{index}")
    return rng.getrandbits(31), rng.getrandbits(31)


def play_game(
    player_x: Player,
    player_o: Player,
    variant_name: str = "4x4x4",
    limit: Limit | None = None,
    names: tuple[str, str] = (A, B),
    start: Board | None = None,
) -> tuple[Board, list[ArenaMove]]:
    """Play one game to its end; returns the final board and a record per move.

    ``names`` labels the players of X and O in the move records. The game starts from the
    empty board of ``variant_name``, or from a copy of ``start``.
    """
    board = start.copy() if start is not None else Board(variant_name)
    players = (player_x, player_o)
    records: list[ArenaMove] = []
    while board.outcome() is None:
        side = board.turn
        started = time.perf_counter()
        decision = players[side].decide(board, limit)
        seconds = time.perf_counter() - started
        board.push(decision.move)
        records.append(ArenaMove(names[side], decision.move, seconds, decision.nodes,
                                  decision.evaluations, decision.branching))
    return board, records


def match_game(
    spec_a: str, spec_b: str, index: int, variant_name: str = "4x4x4", seed: int = 0,
    limit: Limit | None = None,
) -> ArenaGame:
    """Game ``index`` of a match of A against B seeded ``seed``: A has X when ``index`` is
    even. Games are independent, so a match can be spread over processes game by game."""
    seed_a, seed_b = game_seeds(seed, index)
    player_a, player_b = make_player(spec_a, seed_a), make_player(spec_b, seed_b)
    a_is_x = index % 2 == 0
    if a_is_x:
        board, moves = play_game(player_a, player_b, variant_name, limit, (A, B))
    else:
        board, moves = play_game(player_b, player_a, variant_name, limit, (B, A))
    outcome = board.outcome()
    assert outcome is not None
    return ArenaGame(index, a_is_x, seed_a, seed_b, tuple(moves), outcome)


def run_match(
    spec_a: str,
    spec_b: str,
    games: int,
    variant_name: str = "4x4x4",
    seed: int = 0,
    limit: Limit | None = None,
    on_game: Callable[[ArenaGame, MatchResult], None] | None = None,
) -> MatchResult:
    """Play ``games`` games of A against B, A having X in the even-numbered games.

    Raises ``UnknownPlayer`` for a bad spec before any game starts. ``on_game`` is called
    after each game with its record and the match so far.
    """
    limit = limit or Limit()
    geometry = variant(variant_name)
    result = MatchResult(geometry.name, seed, limit,
                         PlayerStats(make_player(spec_a).spec),
                         PlayerStats(make_player(spec_b).spec))
    for index in range(games):
        record = match_game(spec_a, spec_b, index, geometry.name, seed, limit)
        result.add(record)
        if on_game is not None:
            on_game(record, result)
    return result


__all__ = [
    "ArenaGame",
    "ArenaMove",
    "EloEstimate",
    "MatchResult",
    "PlayerStats",
    "elo_estimate",
    "game_seeds",
    "match_game",
    "play_game",
    "run_match",
]
