"""Exact chances of a match against a player that breaks ties at random: every game it can
play walked once (with memo and symmetry), not sampled (``exact_match``; ``qubic arena``'s
sampled matches are ``engine.players.arena``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from engine.kernels.negamax import mate_plies
from engine.players import Limit, Player, make_player
from engine.rules.board import Board
from engine.rules.geometry import Cell
from engine.solved.book import Key, board_of, canonical_frame


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
                branches = merge_dead_cells(board, moves)
            chances = Chances()
            total = sum(branches.values())
            for cell, count in branches.items():
                board.push(cell)
                chances.add(walk(), count / total)
                board.pop()
            memo[key] = chances
        return memo[key]

    return walk(), decisions


def merge_dead_cells(board: Board, moves: list[Cell]) -> dict[Cell, int]:
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


__all__ = ["Chances", "chances_after", "every_game", "exact_match"]
