"""The proof that X wins: a subtree proved by search, the shipped completed dictionary replayed
with no search, gaps reported, and the strategy file's round trip."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from engine import Board, format_moves, parse_moves
from engine.rules.geometry import cells_of, variant
from engine.solved import proof
from engine.solved.strategy import StrategyFileError, strategy_move

G = variant("4x4x4")
SUBTREE = "1a1 4d4 4a1 1a4 1d1 1b1"  # a few thousand positions: proved in about a second


def moves(text: str) -> list[int]:
    return parse_moves(text, G)


def test_subtree_is_proved_by_search() -> None:
    tally, strategy = proof.prove(moves(SUBTREE))
    assert not tally.gaps
    assert tally.x_positions > 100 and tally.threat_searches > 0
    assert tally.longest > 6 and len(strategy) == tally.threat_searches
    # the strategy found replays with no search
    again, _ = proof.prove(moves(SUBTREE), verify=True, strategy=strategy)
    assert not again.gaps and again.threat_searches == 0 and again.dfpn_searches == 0
    assert again.x_positions == tally.x_positions and again.longest == tally.longest


def test_shipped_strategy_replays_a_subtree() -> None:
    """From the shipped file alone: every position of a ply-4 subtree is covered, and the
    heights recorded for its early positions are those the replay finds."""
    shipped = proof.shipped_strategy()
    assert len(shipped) > 100_000
    prover = proof.Prover(verify=True)
    board = Board.from_notation("4x4x4", "1a1 4d4 4a1 1a4")
    height = prover.prove(board)
    assert not prover.tally.gaps and prover.tally.threat_searches == 0
    assert height is not None and prover.tally.stored_moves > 1000
    found = prover.shallow_heights()
    assert found and all(shipped.heights[key] == plies for key, plies in found.items())


@pytest.mark.slow
def test_shipped_strategy_proves_the_game() -> None:
    """The whole proof replayed from the shipped file with no search (about 30 s)."""
    tally, _ = proof.prove(verify=True)
    assert not tally.gaps and tally.threat_searches == 0 and tally.dfpn_searches == 0
    assert tally.book_moves == 2929  # every dictionary entry is used
    assert tally.stored_moves == len(proof.shipped_strategy())
    assert tally.longest == proof.shipped_strategy().heights[(0, 0)]


def test_gaps_are_listed_with_their_position() -> None:
    empty = proof.Strategy(G)
    tally, _ = proof.prove(moves(SUBTREE), verify=True, strategy=empty)
    assert tally.gaps
    for gap in tally.gaps:
        board = Board.from_notation("4x4x4", gap.moves)  # in our notation, and legal
        assert board.turn == 0 and gap.reason == "not in the completed dictionary"


def test_two_o_threes_are_a_gap() -> None:
    # X to move, O threatens 1a2-1d2 (row 2 of level 1) and 4a4-4d4 (row 4 of level 4)
    board = Board.from_notation("4x4x4", "1a1 1a2 1b1 1b2 3c3 1c2 2c4 4a4 3d1 4b4 2d2 4c4")
    prover = proof.Prover(verify=True)
    assert prover.prove(board) is None
    assert prover.tally.gaps[0].reason == "O has two threes"


def test_start_must_leave_x_to_move() -> None:
    with pytest.raises(ValueError):
        proof.prove(moves("1a1"))


def test_strategy_file_round_trips() -> None:
    _, strategy = proof.prove(moves(SUBTREE))
    back = proof.Strategy.loads(strategy.dumps())
    assert back.entries == strategy.entries and back.heights == strategy.heights
    packed = proof.Strategy.from_bytes(strategy.to_bytes())
    assert dict(packed.entries.items()) == strategy.entries
    assert packed.heights == strategy.heights
    assert packed.entries.get((1, 2)) is None and (1, 2) not in packed.entries
    board = Board.from_notation("4x4x4", SUBTREE)
    assert packed.move(board) == strategy.move(board)


def test_strategy_move_covers_the_start_and_a_block() -> None:
    assert strategy_move(Board("4x4x4")) == 0  # the dictionary's first move, 1a1
    assert strategy_move(Board("4x4x4", [0])) is None  # O to move
    assert strategy_move(Board("3x3x3")) is None
    board = Board.from_notation("4x4x4", "1a1 1a2 1b1 1b2 3c3 1c2")
    assert format_moves([strategy_move(board)], G) == "1d2"  # the block


def _used_entry(strategy: proof.Strategy) -> tuple[proof.Key, Board]:
    """A stored position of the SUBTREE proof and a board in that exact (canonical) frame."""
    for (x, o) in sorted(strategy.entries):
        cells = sorted(cells_of(x)), sorted(cells_of(o))
        if len(cells[0]) == len(cells[1]):  # X to move
            board = Board("4x4x4")
            for a, b in zip(*cells, strict=True):
                board.push(a)
                board.push(b)
            if board.outcome() is None:
                return (x, o), board
    raise AssertionError("no stored X position")


@pytest.mark.parametrize("bad", ["taken", "off the board"])
def test_an_illegal_stored_move_is_a_gap(bad: str, tmp_path: Path) -> None:
    """A stored move on a taken cell, or on no cell at all, read from a file: the replay
    names its position as a gap (it raised IllegalMove, or ValueError, before)."""
    _, found = proof.prove(moves(SUBTREE))
    entries = dict(found.entries)
    key, board = _used_entry(found)
    entries[key] = next(cells_of(key[0])) if bad == "taken" else 200
    path = tmp_path / "bad.strategy.xz"
    proof.Strategy(G, entries).save(path)
    # the position itself, and every line of the subtree through it
    tally, _ = proof.prove(board.moves, verify=True, strategy_file=path)
    assert [gap.moves for gap in tally.gaps] == [format_moves(board.moves, G)]
    assert tally.gaps[0].reason.startswith("the completed dictionary's move (cell ")
    assert tally.gaps[0].reason.endswith(") is not legal here")
    assert proof.Strategy.load(path).move(board) is None  # the players' look-up: no move
    tally, _ = proof.prove(moves(SUBTREE), verify=True, strategy_file=path)
    assert tally.gaps and all("is not legal here" in gap.reason for gap in tally.gaps)
    for gap in tally.gaps:
        Board.from_notation("4x4x4", gap.moves)  # each a legal position in our notation


@pytest.mark.parametrize("damage", ["garbage", "cut", "not a strategy", "tables cut",
                                    "trailing bytes"])
def test_a_broken_strategy_file_is_a_gap_at_the_start(damage: str, tmp_path: Path) -> None:
    """A file that is no xz, an xz cut short, an xz of something else or of tables cut short
    (it raised LZMAError or a numpy error before): one gap, at the start, saying why."""
    good = proof.Strategy(G, {(1, 2): 3}, {(1, 2): 5}).to_bytes()
    raw = lzma.decompress(good)
    data = {
        "garbage": b"\x00not xz at all",
        "cut": good[: len(good) // 2],
        "not a strategy": lzma.compress(b"hello"),
        "tables cut": lzma.compress(raw[:-3]),
        "trailing bytes": lzma.compress(raw + b"\x00"),
    }[damage]
    path = tmp_path / "broken.strategy.xz"
    path.write_bytes(data)
    with pytest.raises(StrategyFileError):
        proof.Strategy.load(path)
    tally, _ = proof.prove(moves(SUBTREE), verify=True, strategy_file=path)
    assert len(tally.gaps) == 1 and tally.gaps[0].moves == SUBTREE
    assert tally.gaps[0].reason.startswith("the completed dictionary cannot be read: ")
    tally, _ = proof.prove_parallel(moves(SUBTREE), imap=map, verify=True, strategy_file=path)
    assert [gap.moves for gap in tally.gaps] == [SUBTREE]
    tally, _ = proof.prove(moves(SUBTREE), verify=True, strategy_file=tmp_path / "missing")
    assert [gap.moves for gap in tally.gaps] == [SUBTREE]



REPLAYED = "1a1 4d4 4a1 1a4"


def _broken_strategy() -> proof.Strategy:
    """The shipped entries that the REPLAYED subtree uses, one in 40 made illegal (a taken
    cell, no cell)."""
    shipped = proof.shipped_strategy()
    walker = proof.Prover(verify=True)
    walker.prove(Board.from_notation("4x4x4", REPLAYED))
    used = sorted(key for key in walker.heights if key in shipped.entries)
    entries = {key: shipped.entries[key] for key in used}
    for i, key in enumerate(used[::40]):
        entries[key] = next(cells_of(key[0])) if i % 2 else 200
    return proof.Strategy(G, entries)


@pytest.mark.parametrize(("start", "strategy"), [
    (REPLAYED, "shipped"),
    (REPLAYED + " 1d4 1b1", "shipped"),  # off the proof: a gap at once
    ("1a1 1a2 1b1 1b2 3c3 1c2 2c4 4a4 3d1 4b4 2d2 4c4", "shipped"),  # O has two threes
    (REPLAYED + " 1d1 1b1", "empty"),  # every stored move missing
    (REPLAYED, "broken"),
])
def test_the_compiled_replay_walks_as_the_prover_does(start: str, strategy: str) -> None:
    """``Prover.replay`` (``--verify``'s walk in one compiled call) and ``Prover.prove`` give
    the same height, tally, gaps (in order) and early heights."""
    chosen = {"shipped": None, "empty": proof.Strategy(G), "broken": None}[strategy]
    if strategy == "broken":
        chosen = _broken_strategy()
    found = []
    for walk in ("prove", "replay"):
        prover = proof.Prover(verify=True, strategy=chosen)
        height = getattr(prover, walk)(Board.from_notation("4x4x4", start))
        found.append((height, prover.tally, prover.shallow_heights()))
    assert found[0] == found[1]
    assert found[0][1].x_positions > 0
    assert bool(found[0][1].gaps) == (strategy != "shipped" or start != REPLAYED)


# X to move with every line holding an O stone, and no three of O's: no forced win for X,
# by the threat search or df-pn (a gap, "no forced win found")
NO_WIN = ("4b2 4a4 3c3 2c3 4c4 1a4 3a4 1d1 1b3 3d2 3b3 2c2 2c1 4d3 1c4 1a1 1a3 2d4 1c1 1a2 2b2 "
          "4b1 2a2 3b1 2b1 4b4 1b1 2b3 2a4 4d2 4d1 2a1 2a3 3b4 2b4 3d4 1d4 3c1 3a1 2c4 1d2 1d3 "
          "2d3 1c3 4c3 3c2 3d1 2d1 1c2 4b3 4a2 4a1 4d4 3a3 3a2 4c1 4a3 1b2")


@pytest.mark.parametrize(("start", "gap", "dfpn"), [
    (SUBTREE, None, 0),
    ("1a1 4d4 4a1 1a4 1d4 1b1 1c1 2b2 3b3 2b4 3c4 3b2", None, 3),
    ("1a1 1a2 1b1 1b2 3c3 1c2 2c4 4a4 3d1 4b4 2d2 4c4", "O has two threes", 0),
    (NO_WIN, "no forced win found", 1),
])
def test_the_compiled_search_walks_as_the_prover_does(start: str, gap: str | None,
                                                      dfpn: int) -> None:
    """``Prover.search`` (``qubic prove``'s walk in one compiled call, its threat searches
    and df-pn inside) and ``Prover.prove`` give the same height, tally (df-pn's positions
    and the search nodes too), gaps, early heights and strategy entries, in order."""
    found = []
    for walk in ("prove", "search"):
        prover = proof.Prover()
        height = getattr(prover, walk)(Board.from_notation("4x4x4", start))
        found.append((height, prover.tally, prover.shallow_heights(),
                      list(prover.strategy.entries.items())))
    assert found[0] == found[1]
    tally = found[0][1]
    assert tally.x_positions > 0
    assert {each.reason for each in tally.gaps} == ({gap} if gap else set())
    assert tally.dfpn_searches == dfpn
