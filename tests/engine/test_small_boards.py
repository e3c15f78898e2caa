"""The small boards' shipped tables and the exact search below them: minimax over
themselves, the same positions as the rules give, the file intact, and the solver's own
verdicts (threat search and df-pn, tables off) never contradicting them nor claiming a win
faster than the table's.

The sampled checks rebuild positions with :class:`engine.Board` and
:meth:`Geometry.canonical`, not with the numba kernels that wrote the tables; one check runs
those kernels again over every entry, so that no single entry can be wrong unseen. The
samples' seeds were fixed before the first run and never changed."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from engine import Board
from engine.kernels.small_search import BUILD_TT_BITS, ExactSearch, back_up_level, rules_for
from engine.rules.geometry import variant
from engine.solved import small_boards
from engine.solved.small_boards import SmallTable, decode, encode, table, table_path
from engine.solved.truth import BOOK, DRAW, LOSS, SEARCH, UNKNOWN, WIN, solve

Result = tuple[str, int]
SAMPLE_PER_PLY = 120
COUNTS = {  # positions by ply up to symmetry, as docs/proof.md gives them
    "3x3": (1, 3, 12, 38, 108, 174, 204, 153, 57, 12),
    "4x4": (1, 2, 12, 66, 394, 1446, 5158, 12760, 28452, 45270, 61884, 61884, 48761, 27874,
            10270, 2601, 103),
    "3x3x3": (1, 4, 31, 254, 2512, 17834, 124162, 644288, 3038859),
}


def position(name: str, x: int, o: int) -> Board:
    """A board holding the stones of ``x`` and ``o`` (a reachable position), in an order that
    completes no line before the last move."""
    g = variant(name)
    xs = [c for c in range(g.size) if x >> c & 1]
    os = [c for c in range(g.size) if o >> c & 1]
    last = xs if len(xs) > len(os) else os
    if any(sum(1 << c for c in last) & m == m for m in g.line_masks):
        bits = sum(1 << c for c in last)
        keep = next(c for c in last  # a stone without which no line of the mover is left
                    if not any((bits & ~(1 << c)) & m == m for m in g.line_masks))
        last.remove(keep)
        last.append(keep)
    moves = [c for pair in zip(xs, os + [-1], strict=False) for c in pair if c >= 0]
    return Board(name, moves)


def looked_up(found: SmallTable) -> Callable[[Board], Result | None]:
    def oracle(board: Board) -> Result | None:
        x, o = board.geometry.canonical(*board.stones)
        value = found.value(x << board.geometry.size | o)
        if value is None:
            return None
        return small_boards.VERDICTS[value >> 6], value & 63
    return oracle


def minimax_error(board: Board, claimed: Result,
                  oracle: Callable[[Board], Result | None]) -> str | None:
    """Why ``claimed`` is not the minimax of ``board``'s children as ``oracle`` gives them
    (the winner fastest, the loser and a drawn side longest), or None when it is."""
    outcome = board.outcome()
    if outcome is not None:
        verdict = DRAW if outcome.winner is None else LOSS
        return None if claimed == (verdict, 0) else f"finished: {claimed}"
    children = []
    for cell in board.legal_moves:
        board.push(cell)
        children.append(_finished(board) or oracle(board))
        board.pop()
    if None in children:
        return "a child is missing"
    if any(v == LOSS for v, _ in children):
        expected = (WIN, 1 + min(p for v, p in children if v == LOSS))
    elif any(v == DRAW for v, _ in children):
        expected = (DRAW, 1 + max(p for v, p in children if v == DRAW))
    else:
        expected = (LOSS, 1 + max(p for _, p in children))
    return None if claimed == expected else f"{claimed} but its children give {expected}"


def _finished(board: Board) -> Result | None:
    outcome = board.outcome()
    if outcome is None:
        return None
    return (DRAW if outcome.winner is None else LOSS), 0


def sample(found: SmallTable, seed: int, per_ply: int = SAMPLE_PER_PLY) -> list[int]:
    """Indices of up to ``per_ply`` entries of each ply (the deep plies hold most entries)."""
    rng = np.random.default_rng(seed)
    plies = _plies(found.keys, variant(found.variant).size)
    chosen: list[int] = []
    for ply in range(found.depth + 1):
        where = np.flatnonzero(plies == ply)
        chosen += rng.choice(where, size=min(per_ply, len(where)), replace=False).tolist()
    return chosen


def _plies(keys: np.ndarray, size: int) -> np.ndarray:
    """The stones of each key (X's bits above O's: a key's bits are its stones)."""
    return np.bitwise_count(keys)


def entry(found: SmallTable, index: int) -> tuple[Board, Result]:
    size = variant(found.variant).size
    key = int(found.keys[index])
    value = int(found.values[index])
    board = position(found.variant, key >> size, key & ((1 << size) - 1))
    return board, (small_boards.VERDICTS[value >> 6], value & 63)


@pytest.mark.parametrize("name,seed", [("3x3", 0), ("4x4", 7919), ("3x3x3", 104729)])
def test_the_tables_are_minimax_over_themselves(name: str, seed: int) -> None:
    """Every 3x3 entry, and a sample of each ply of 4x4 and 3x3x3, is the minimax of its
    children: from the table where they are in it, else (3x3x3's deepest ply) from the exact
    search, which the next test checks in turn."""
    found = table(name)
    assert found is not None
    oracle = looked_up(found)
    chosen = range(len(found.keys)) if name == "3x3" else sample(found, seed)
    for index in chosen:
        board, claimed = entry(found, index)
        deep = board.ply == found.depth and not found.complete
        errors = minimax_error(board, claimed, _by_result if deep else oracle)
        assert errors is None, f"{board.notation()}: {errors}"


@pytest.mark.parametrize("name", small_boards.TABLED)
def test_every_entry_is_the_minimax_of_the_next_ply(name: str) -> None:
    """All of each table: each result backed up again from the shipped next ply by the
    builder's kernel equals the shipped one, and 3x3x3's deepest ply is the exact search's
    again (which the sampled tests check against the rules), so no entry can be wrong."""
    found = table(name)
    assert found is not None
    rules = rules_for(variant(name))
    plies = _plies(found.keys, rules.size)
    levels = [(found.keys[plies == p], found.values[plies == p]) for p in range(found.depth + 1)]
    for ply in range(found.depth if not found.complete else found.depth + 1):
        keys, values = levels[ply]
        next_keys, next_values = levels[ply + 1] if ply < found.depth else (
            np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint8))
        again = back_up_level(keys, next_keys, next_values, rules.size, rules.n, rules.lines,
                              rules.images)
        wrong = np.flatnonzero(again != values)
        assert not len(wrong), f"ply {ply}: {len(wrong)} wrong, e.g. key {int(keys[wrong[0]])}"
    if not found.complete:
        keys, values = levels[-1]
        wrong = np.flatnonzero(ExactSearch(variant(name), BUILD_TT_BITS).values(keys) != values)
        assert not len(wrong), f"deepest: {len(wrong)} wrong, e.g. key {int(keys[wrong[0]])}"


def test_the_exact_search_agrees_with_the_3x3x3_table_at_every_ply() -> None:
    """The two ways to the same results (levels backed up, and the alpha-beta search with a
    full window) agree on a sample of every ply of the table."""
    found = table("3x3x3")
    assert found is not None
    chosen = np.array(sample(found, 2718, per_ply=2000))
    searched = ExactSearch(variant("3x3x3")).values(found.keys[chosen])
    assert searched.tolist() == found.values[chosen].tolist()


def _by_result(board: Board) -> Result | None:
    found = small_boards.result(board)
    return None if found is None else found[:2]


def test_the_exact_search_below_the_3x3x3_table_is_minimax() -> None:
    """Positions past the table (random games, a seed fixed before the first run): each
    answer of the exact search is the minimax of its children's answers, and none comes from
    the table."""
    rng = random.Random(31337)
    depth = table("3x3x3").depth  # type: ignore[union-attr]
    checked = 0
    while checked < 300:
        board = Board("3x3x3")
        stop = rng.randrange(depth + 1, 18)
        while board.ply < stop and board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
        if board.outcome() is not None:
            continue
        found = small_boards.result(board)
        assert found is not None and found[2] is False
        errors = minimax_error(board, found[:2], _by_result)
        assert errors is None, f"{board.notation()}: {errors}"
        checked += 1


def test_a_wrong_entry_is_caught() -> None:
    """The minimax check fails on a table with one result changed (so the tests above can)."""
    found = table("4x4")
    assert found is not None
    index = sample(found, 5, per_ply=1)[9]  # a position at ply 9, with moves
    values = found.values.copy()
    values[index] ^= 1  # one ply more or less
    broken = SmallTable(found.variant, found.depth, found.complete, found.counts, found.keys,
                        values)
    board, claimed = entry(broken, index)
    assert minimax_error(board, claimed, looked_up(broken)) is not None


@pytest.mark.parametrize("name", small_boards.TABLED)
def test_the_shipped_file_is_intact(name: str) -> None:
    """The counts by ply in the header are those of the keys, the checksum holds (a changed
    byte is refused), and the first plies are the positions the rules reach."""
    found = table(name)
    assert found is not None
    size = variant(name).size
    plies = _plies(found.keys, size)
    assert list(np.bincount(plies, minlength=found.depth + 1)) == list(found.counts)
    assert found.counts == COUNTS[name] and found.complete == (name != "3x3x3")
    assert found.depth == len(found.counts) - 1
    assert bool(np.all(np.diff(found.keys.astype(np.int64)) > 0))
    levels = reachable(name, {"3x3": 9, "4x4": 6, "3x3x3": 4}[name])
    for ply, level in enumerate(levels):
        assert sorted(level) == sorted(int(k) for k in found.keys[plies == ply])
    blob = bytearray(lzma_payload_with_one_result_changed(name))
    with pytest.raises(ValueError, match="checksum"):
        decode(bytes(blob))


def lzma_payload_with_one_result_changed(name: str) -> bytes:
    import lzma

    payload = bytearray(lzma.decompress(table_path(name).read_bytes()))
    payload[-1] ^= 1
    return lzma.compress(bytes(payload), preset=0)


def reachable(name: str, depth: int) -> list[set[int]]:
    """Canonical keys of every position reachable ply by ply, by the Board's own rules."""
    g = variant(name)
    levels = [{0}]
    for _ in range(depth):
        found: set[int] = set()
        for key in levels[-1]:
            board = position(name, key >> g.size, key & ((1 << g.size) - 1))
            if board.outcome() is not None:
                continue
            for cell in board.legal_moves:
                board.push(cell)
                x, o = g.canonical(*board.stones)
                found.add(x << g.size | o)
                board.pop()
        levels.append(found)
    return levels


def test_encode_and_decode_round_trip() -> None:
    levels = [np.array([0], dtype=np.uint64), np.array([3, 17, 1 << 40], dtype=np.uint64)]
    values = [np.array([129], dtype=np.uint8), np.array([1, 2, 3], dtype=np.uint8)]
    found = decode(encode("3x3x3", levels, values, complete=False))
    assert found.counts == (1, 3) and found.depth == 1 and not found.complete
    assert found.keys.tolist() == [0, 3, 17, 1 << 40] and found.values.tolist() == [129, 1, 2, 3]
    assert found.value(17) == 2 and found.value(18) is None


def test_the_boards_values() -> None:
    """3x3 and 4x4 are draws, 3x3x3 a first-player win in 7 plies by the centre alone."""
    for name, expected in (("3x3", (DRAW, 8)), ("4x4", (DRAW, 15)), ("3x3x3", (WIN, 7))):
        verdict = solve(Board(name), budget_s=0.0, moves=False)
        assert (verdict.verdict, verdict.plies, verdict.proved_by) == (*expected, BOOK)
    verdict = solve(Board("3x3x3"), budget_s=0.0)
    assert [(m.move, m.plies) for m in verdict.moves if m.verdict == LOSS] == [(13, 6)]
    assert all(m.verdict == WIN and m.proved_by == BOOK for m in verdict.moves[1:])


def test_below_the_3x3x3_table_the_answer_is_searched() -> None:
    depth = table("3x3x3").depth  # type: ignore[union-attr]
    board = Board.from_notation("3x3x3", "3b1 1c3 3b3 2a2 3c3 3c2 3a1 1a1 2c3 2a1 1c1")
    assert board.ply > depth and board.outcome() is None
    verdict = solve(board, budget_s=0.0, moves=False)
    assert verdict.proved_by == SEARCH and verdict.verdict in (WIN, LOSS)
    assert verdict.plies is not None


SOLVER_SAMPLE = {"4x4": (271828, 40, 13), "3x3x3": (161803, 40, 16)}


@pytest.mark.parametrize("name", sorted(SOLVER_SAMPLE))
def test_the_solver_agrees_with_the_tables(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the tables switched off, the threat search and df-pn (0.2 s a position) never
    contradict the table where they answer, never claim fewer plies than its exact plies,
    and answer a good share of random positions."""
    from engine.solved import truth

    seed, count, longest = SOLVER_SAMPLE[name]
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        board = Board(name)
        stop = rng.randrange(0, longest)
        while board.ply < stop and board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
        if board.outcome() is None:
            positions.append(board)
    exact = [small_boards.result(board) for board in positions]
    truth._cache.clear()  # noqa: SLF001 (verdicts the tables gave)
    monkeypatch.setattr(truth, "_table", lambda board: None)
    try:
        answered = 0
        for board, known in zip(positions, exact, strict=True):
            assert known is not None
            verdict = solve(board, budget_s=0.2, moves=False)
            if verdict.verdict == UNKNOWN:
                continue
            answered += 1
            assert verdict.verdict == known[0], board.notation()
            assert verdict.plies is None or verdict.plies >= known[1], board.notation()
    finally:
        truth._cache.clear()  # noqa: SLF001
    assert answered >= count // 2
