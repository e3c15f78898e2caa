"""Computer-vs-computer matches: games, per-player statistics and an Elo estimate.

Pure match logic: no printing and no files. ``run_match("rubinoff:eval=eval1", "rubinoff",
games=20)`` plays game ``i`` with A as X when ``i`` is even, each game with its own seeds drawn
from the match seed, so a match (or any single game of it) replays move for move.

The statistics are the ones Rubinoff tabulated: wins, draws and losses, and per move the
average time, static evaluations and branching factor (children expanded per interior node of
the search, averaged over the moves that searched).

Against a searching seed player, whose only randomness is how it breaks ties, a match need
not be sampled: ``exact_match`` walks every game it can play and returns the exact chances.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from statistics import NormalDist
from typing import Any

from engine.board import Board, Outcome, X
from engine.book import Key, board_of, canonical_frame
from engine.geometry import Cell, variant
from engine.kernel import mate_plies
from engine.notation import format_moves
from engine.players import Limit, Player, make_player

A, B = "a", "b"


@dataclass(frozen=True)
class MoveRecord:
    """One move of a game and what it cost the player who made it."""

    player: str  # "a" or "b"
    cell: Cell
    seconds: float  # wall time of the whole decide() call
    nodes: int
    evaluations: int
    branching: float | None


@dataclass(frozen=True)
class GameRecord:
    """One finished game: who had X, the moves and how it ended."""

    index: int
    a_is_x: bool
    seed_a: int
    seed_b: int
    moves: tuple[MoveRecord, ...]
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

    def add_move(self, move: MoveRecord) -> None:
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
    records: list[GameRecord] = field(default_factory=list)

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def draws(self) -> int:
        return self.a.draws

    def elo(self) -> EloEstimate:
        return elo_estimate(self.a.wins, self.a.draws, self.a.losses)

    def add(self, record: GameRecord) -> None:
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
) -> tuple[Board, list[MoveRecord]]:
    """Play one game to its end; returns the final board and a record per move.

    ``names`` labels the players of X and O in the move records. The game starts from the
    empty board of ``variant_name``, or from a copy of ``start``.
    """
    board = start.copy() if start is not None else Board(variant_name)
    players = (player_x, player_o)
    records: list[MoveRecord] = []
    while board.outcome() is None:
        side = board.turn
        started = time.perf_counter()
        decision = players[side].decide(board, limit)
        seconds = time.perf_counter() - started
        board.push(decision.move)
        records.append(MoveRecord(names[side], decision.move, seconds, decision.nodes,
                                  decision.evaluations, decision.branching))
    return board, records


def match_game(
    spec_a: str, spec_b: str, index: int, variant_name: str = "4x4x4", seed: int = 0,
    limit: Limit | None = None,
) -> GameRecord:
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
    return GameRecord(index, a_is_x, seed_a, seed_b, tuple(moves), outcome)


def run_match(
    spec_a: str,
    spec_b: str,
    games: int,
    variant_name: str = "4x4x4",
    seed: int = 0,
    limit: Limit | None = None,
    on_game: Callable[[GameRecord, MatchResult], None] | None = None,
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


@dataclass
class Chances:
    """A's chances over every game an opponent that breaks ties at random can play: each of
    its tied moves equally likely, A playing one move per position."""

    win: float = 0.0
    draw: float = 0.0
    loss: float = 0.0
    lost: dict[str, float] = field(default_factory=dict)  # lost game (moves) -> its chance

    def add(self, other: Chances, weight: float) -> None:
        self.win += other.win * weight
        self.draw += other.draw * weight
        self.loss += other.loss * weight
        for line, chance in other.lost.items():
            self.lost[line] = self.lost.get(line, 0.0) + chance * weight


def every_game(
    play_a: Callable[[Board], Cell],
    choices_b: Callable[[Board], list[Cell] | None],
    start: Board,
    a_side: int,
) -> tuple[Chances, dict[Key, Cell]]:
    """Walk every game from ``start``: A (playing ``a_side``) answers ``play_a(board)``, B
    branches over ``choices_b(board)``, each equally likely; None from ``choices_b`` means B
    has proved itself lost (every move loses to a forced win of A), and ends the game as won
    by A. Positions are met once up to symmetry: A is asked on the canonical image of a
    position (so it plays the same in positions that are images of each other, as the book
    does) and the chances below are reused. B's moves on dead cells (every line through them
    holds both colours) change nothing but the turn, so all of them are walked as one.
    Returns A's chances and A's move in every position it was asked about (both in the
    canonical frame)."""
    memo: dict[Key, Chances] = {}
    decisions: dict[Key, Cell] = {}
    board = start.copy()

    def walk() -> Chances:
        outcome = board.outcome()
        if outcome is not None:
            if outcome.winner is None:
                return Chances(draw=1.0)
            if outcome.winner == a_side:
                return Chances(win=1.0)
            return Chances(loss=1.0, lost={board.notation(): 1.0})
        key, sym = canonical_frame(board)
        if key not in memo:
            if board.turn == a_side:
                decisions[key] = play_a(board_of(board.geometry, key))
                branches = {sym.index(decisions[key]): 1}
            else:
                moves = choices_b(board)
                if moves is None:
                    memo[key] = Chances(win=1.0)
                    return memo[key]
                branches = _merge_dead_cells(board, moves)
            chances = Chances()
            total = sum(branches.values())
            for cell, count in branches.items():
                board.push(cell)
                chances.add(walk(), count / total)
                board.pop()
            memo[key] = chances
        return memo[key]

    return walk(), decisions


def _merge_dead_cells(board: Board, moves: list[Cell]) -> dict[Cell, int]:
    """``moves`` counted, with all those on dead cells counted under the first of them."""
    g = board.geometry
    x, o = board.stones
    out: dict[Cell, int] = {}
    dead: Cell | None = None
    for cell in moves:
        if all(g.line_masks[i] & x and g.line_masks[i] & o for i in g.lines_through[cell]):
            dead = cell if dead is None else dead
            out[dead] = out.get(dead, 0) + 1
        else:
            out[cell] = 1
    return out


_PLAYERS: dict[str, Player] = {}  # per process: A keeps its tables from position to position


def _a_move(spec_a: str, limit: Limit, board: Board) -> Cell:
    player = _PLAYERS.get(spec_a)
    if player is None:
        player = _PLAYERS[spec_a] = make_player(spec_a)
    return player.decide(board, limit).move


def _b_choices(spec_b: str) -> Callable[[Board], list[Cell] | None]:
    """B's choices for :func:`every_game`: None where B's own search proves every move lost."""
    player = make_player(spec_b)
    scored = getattr(player, "scored_choices", None)
    if scored is None:
        raise ValueError(f"{spec_b} does not list its choices: it must be a searching player")

    def choices(board: Board) -> list[Cell] | None:
        moves, score = scored(board)
        return None if score < 0 and mate_plies(score) is not None else moves

    return choices


def chances_after(spec_a: str, spec_b: str, limit: Limit, a_side: int,
                   start: Board) -> tuple[Chances, dict[Key, Cell]]:
    """:func:`every_game` of A (deciding within ``limit``) against the searcher B."""
    return every_game(partial(_a_move, spec_a, limit), _b_choices(spec_b), start, a_side)


def exact_match(
    spec_a: str,
    spec_b: str,
    a_side: int,
    limit: Limit,
    start: Board | None = None,
    jobs: int = 1,
    split: int = 10,
    parts_wanted: int = 64,
    on_part: Callable[[int, int], None] | None = None,
) -> tuple[Chances, dict[Key, Cell]]:
    """:func:`every_game` of A against the tie-breaking searcher B from ``start`` (the empty
    4x4x4 board when None), spread over ``jobs`` processes: the games are walked here to
    ``split`` stones, or further until there are ``parts_wanted`` positions (merged under
    symmetry, with their chances), and each of those is walked to the end in a worker.
    ``on_part(done, parts)`` is called as the workers finish."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    board = start.copy() if start is not None else Board("4x4x4")
    choices_b = _b_choices(spec_b)
    level: dict[Key, tuple[Board, float]] = {canonical_frame(board)[0]: (board, 1.0)}
    parts: dict[Key, tuple[Board, float]] = {}
    decisions: dict[Key, Cell] = {}
    while level:
        deeper: dict[Key, tuple[Board, float]] = {}
        for key, (position, chance) in level.items():
            deep_enough = position.ply >= split and len(level) + len(parts) >= parts_wanted
            if deep_enough or position.outcome() is not None:
                parts[key] = (position, parts.get(key, (position, 0.0))[1] + chance)
                continue
            if position.turn == a_side:
                canonical, sym = canonical_frame(position)
                move = _a_move(spec_a, limit, board_of(position.geometry, canonical))
                decisions[canonical] = move
                branches = [sym.index(move)]
            else:
                moves = choices_b(position)
                if moves is None:  # B is lost: nothing to split
                    parts[key] = (position, parts.get(key, (position, 0.0))[1] + chance)
                    continue
                branches = moves
            for cell in branches:
                child = position.copy()
                child.push(cell)
                child_key = canonical_frame(child)[0]
                child, old = deeper.get(child_key, (child, 0.0))
                deeper[child_key] = (child, old + chance / len(branches))
        level = deeper
    total = Chances()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(chances_after, spec_a, spec_b, limit, a_side, position): chance
                   for position, chance in parts.values()}
        for done, future in enumerate(as_completed(futures), 1):
            found, part_decisions = future.result()
            total.add(found, futures[future])
            decisions.update(part_decisions)
            if on_part is not None:
                on_part(done, len(futures))
    return total, decisions


__all__ = [
    "Chances",
    "EloEstimate",
    "GameRecord",
    "MatchResult",
    "MoveRecord",
    "PlayerStats",
    "elo_estimate",
    "chances_after",
    "every_game",
    "exact_match",
    "game_seeds",
    "match_game",
    "play_game",
    "run_match",
]
