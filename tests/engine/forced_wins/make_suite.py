"""Build the forced-win suite: positions from plausible games, labelled by the solver.

Plays games between the seed players and weakened masters, and keeps positions whose side to
move has a forced win in exactly 5 or exactly 7 plies (a win within that many plies, none
within two fewer), one per symmetry class and at most one per label and game, with every
move that wins within that many plies. Half of each label are "quiet": the solver finds no
win in which every attacker move makes a three, so the winner needs a quiet move somewhere.

    .venv/bin/python tests/engine/forced_wins/make_suite.py [--per-label 24] [--seed 1] \\
        [--out suite.json]

A held-out suite for the benchmark (``engine_strength.py suite --file F``) is the same with
another ``--seed``, and ``--labels 5 7 9`` to add longer wins.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from solver import Solver  # noqa: E402

from engine import Board, format_cell  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402

PAIRINGS = [
    ("bogenschutz:depth=2", "wood"),
    ("wood", "freeness"),
    ("rubinoff:depth=2", "bogenschutz:depth=2"),
    ("freeness", "rubinoff:eval=eval1,depth=2"),
    ("master:depth=2,tss=off,noise=20", "bogenschutz:depth=3"),
    ("master:depth=3,tss=off,noise=40", "master:depth=2,tss=off,noise=40"),
]
LABELS = (5, 7)


def collect(per_label: int, seed: int, labels: tuple[int, ...] = LABELS) -> list[dict[str, object]]:
    """``per_label`` positions per label, half of them won only with a quiet move."""
    solver = Solver("4x4x4")
    found: dict[tuple[int, bool], list[dict[str, object]]] = {
        (p, quiet): [] for p in labels for quiet in (False, True)
    }
    quota = {(p, quiet): per_label // 2 if quiet else per_label - per_label // 2
             for p, quiet in found}
    seen: set[tuple[int, int]] = set()
    game = 0
    while any(len(v) < quota[b] for b, v in found.items()):
        spec_x, spec_o = PAIRINGS[game % len(PAIRINGS)]
        players = (make_player(spec_x, seed + game), make_player(spec_o, seed + game + 1000))
        board = Board("4x4x4")
        taken: set[int] = set()  # one position per label per game
        while board.outcome() is None:
            mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
            key = board.geometry.canonical(*board.stones)
            if key not in seen and board.ply >= 6:
                seen.add(key)
                shortest = solver.shortest_win(mine, theirs, max(labels))
                quiet = shortest is not None and not solver.continuous(mine, theirs, shortest)
                bucket = (shortest, quiet)
                if bucket in found and shortest not in taken and len(found[bucket]) < quota[bucket]:
                    taken.add(shortest)
                    winning = solver.winning_moves(mine, theirs, shortest)
                    found[bucket].append({
                        "moves": board.notation(),
                        "to_move": "XO"[board.turn],
                        "plies": shortest,
                        "quiet": quiet,
                        "winning": [format_cell(c, board.geometry) for c in winning],
                        "game": f"{spec_x} vs {spec_o}, seeds {seed + game}/{seed + game + 1000}",
                    })
            mover = players[board.turn]
            board.push(mover.decide(board, Limit(depth=3)).move)
        game += 1
    return [entry for bucket in sorted(found) for entry in found[bucket]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-label", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--labels", type=int, nargs="+", default=list(LABELS),
                        help="win lengths in plies (odd); a held-out suite may go past 7")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("suite.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    suite = collect(args.per_label, args.seed, tuple(args.labels))
    args.out.write_text(json.dumps(suite, indent=1) + "\n")
    print(f"{len(suite)} positions in {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
