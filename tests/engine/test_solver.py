"""The proof-number solver and the opening book."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from engine_helpers import FORCED_WINS, ShortWins, random_position

from engine import Board
from engine.kernels.solver import Solver
from engine.solved.book import Book, canonical_frame


@pytest.mark.parametrize(("name", "first_player_wins"), [("3x3", False), ("4x4", False),
                                                         ("3x3x3", True)])
def test_solves_the_small_boards(name: str, first_player_wins: bool) -> None:
    board = Board(name)
    proof = Solver(board.geometry, tt_bits=18, sym_plies=6).prove(board, nodes=2_000_000)
    assert proof.proved == first_player_wins
    assert proof.disproved == (not first_player_wins)


def test_proofs_agree_with_the_exhaustive_short_win_solver() -> None:
    rng = random.Random(3)
    short = ShortWins("4x4x4")
    solver = Solver(Board("4x4x4").geometry, tt_bits=18)
    checked = 0
    while checked < 30:
        board = random_position(rng, (10, 30))
        if board is None:
            continue
        mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
        proof = solver.prove(board, nodes=20_000)
        if short.wins_within(mine, theirs, 5):
            assert proof.proved, board.notation()
        if proof.disproved:
            assert not short.wins_within(mine, theirs, 7), board.notation()
        if proof.proved:
            move = solver.winning_move(board)
            assert move is not None
            board.push(move)
            if board.winning_line is None:
                again = solver.prove(board, attacker=board.turn ^ 1, nodes=20_000)
                assert again.proved
            board.pop()
        checked += 1


@pytest.mark.parametrize(("moves", "side", "blunder"), [
    # X centre, O an edge (the losing reply in tic-tac-toe), then O can only block
    ([4, 1, 0, 8, 6, 3, 2], 1, 1),
    # O holds the draw for three moves, then leaves X's line open
    ([4, 0, 8, 2, 1, 7, 5, 6, 3], 1, 7),
    # a game O won: X's threat let O block with a double threat
    ([4, 0, 1, 7, 2, 6, 3, 8], 0, 4),
])
def test_losing_ply_finds_the_first_move_proved_lost(moves: list[int], side: int,
                                                     blunder: int) -> None:
    board = Board("3x3", moves)
    assert board.outcome() is not None and board.outcome().winner == side ^ 1
    solver = Solver(board.geometry, tt_bits=12, sym_plies=4)
    assert solver.losing_ply(moves, side, seconds=5.0) == blunder


def test_book_moves_map_through_symmetries() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2")
    g = board.geometry
    book = Book(g)
    move = g.cell_at([3, 3, 0])  # 1d4
    book.add(board, move)
    board.push(move)
    expected, _ = canonical_frame(board)
    rng = random.Random(0)
    for sym in rng.sample(g.symmetries, 20):
        image = Board("4x4x4", [sym[c] for c in Board.from_notation("4x4x4", "1a1 2b2").moves])
        answer = book.move(image)
        assert answer is not None
        image.push(answer)
        assert canonical_frame(image)[0] == expected
    assert Book.loads(g, book.dumps()).entries == book.entries
    assert book.move(Board.from_notation("4x4x4", "1a1 2c2")) is None


def test_the_master_plays_the_book_move(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.players.master as master_module
    from engine.players import Limit, make_player

    board = Board.from_notation("4x4x4", "1a1 2b2")
    book = Book(board.geometry)
    book.add(board, board.geometry.cell_at([3, 3, 0]))
    monkeypatch.setattr(master_module, "book_for", lambda name: book)
    # X's book move: with the proved strategy off (on, the strategy decides X's moves first)
    assert make_player("master:proof=off").decide(board, Limit(time=0.2)).move == 15  # 1d4
    off = make_player("master:book=off").decide(board, Limit(depth=1))
    assert off.depth == 1


def test_the_master_plays_a_book_file_given_by_its_spec(tmp_path: Path) -> None:
    from engine.players import Limit, make_player

    board = Board.from_notation("4x4x4", "1a1")
    book = Book(board.geometry)
    book.add(board, board.geometry.cell_at([1, 1, 1]))  # 2b2, not the shipped book's 1d4
    path = book.save(tmp_path / "candidate.txt")
    assert make_player(f"master:bookfile={path}").decide(board, Limit(time=0.2)).move == 21
    assert make_player("master").decide(board, Limit(time=0.2)).move == 15  # shipped: 1d4


def test_book_entries_keep_their_kind_through_a_save() -> None:
    from engine.solved.book import HOLD, WIN

    g = Board("4x4x4").geometry
    book = Book(g)
    won = Board.from_notation("4x4x4", "1a1 2b2")
    held = Board.from_notation("4x4x4", "1a1")
    book.add(won, g.cell_at([3, 3, 0]))
    book.add(held, g.cell_at([1, 1, 1]), HOLD)
    again = Book.loads(g, book.dumps())
    assert again.entries == book.entries
    assert (again.kind(won), again.kind(held)) == (WIN, HOLD)
    assert again.kind(Board.from_notation("4x4x4", "1a2")) is None
    again.add(held, g.cell_at([1, 1, 1]))  # proved later: the entry becomes a win
    assert again.kind(held) == WIN


def test_the_shipped_book_holds_only_legal_moves_of_the_side_to_move() -> None:
    from engine.solved.book import HOLD, PRACTICAL, book_for

    book = book_for("4x4x4")
    assert len(book) > 0, "engine/data/book_4x4x4.txt is shipped"
    for (x, o), cell in book.entries.items():
        assert x & o == 0 and not (x | o) >> cell & 1
        assert x.bit_count() - o.bit_count() in (0, 1)
        if book.kinds.get((x, o)) in (HOLD, PRACTICAL):
            assert x.bit_count() == o.bit_count() + 1, "a defence is for the second player"


def test_no_shipped_defence_is_refuted_by_a_short_proof() -> None:
    from engine.solved.book import HOLD, book_for

    book = book_for("4x4x4")
    solver = Solver(book.geometry, tt_bits=18)
    for board in book.positions(1):
        if book.kind(board) != HOLD:
            continue
        move = book.move(board)
        assert move is not None
        board.push(move)
        assert board.winning_line is None
        assert not solver.prove(board, attacker=0, nodes=20_000).proved, board.notation()


def test_proof_plies_bound_the_win_from_the_table() -> None:
    """The plies read off df-pn's table (what /api/solve shows beside a df-pn proof, which
    had none before) are a true bound: the exhaustive short-win solver finds the win within
    them, and never fewer than the suite's exact distance."""
    suite = json.loads((FORCED_WINS / "suite.json").read_text())
    short = ShortWins("4x4x4")
    bounded = 0
    for entry in suite[::3]:
        board = Board.from_notation("4x4x4", entry["moves"])
        solver = Solver(board.geometry, tt_bits=18)
        assert solver.prove(board, nodes=200_000).proved, entry["moves"]
        plies = solver.proof_plies(board, board.turn)
        if plies is None:
            continue
        bounded += 1
        assert plies >= entry["plies"] and plies % 2 == 1, entry["moves"]
        mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
        if plies <= 9:
            assert short.wins_within(mine, theirs, plies), entry["moves"]
    assert bounded >= len(suite[::3]) * 3 // 4
    # the defender's side: the position after the winning move, attacker not to move
    board = Board.from_notation("4x4x4", suite[0]["moves"])
    solver = Solver(board.geometry, tt_bits=18)
    board.push(Board.from_notation("4x4x4", "1a1").moves[0])  # the suite's first winning move
    assert solver.prove(board, attacker=board.turn ^ 1, nodes=200_000).proved
    plies = solver.proof_plies(board, board.turn ^ 1)
    assert plies is not None and plies % 2 == 0 and plies >= suite[0]["plies"] - 1
