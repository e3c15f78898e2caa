"""Where the master's time goes as the second player: depth reached, main-search and
threat-search nodes, and evaluations, at O's moves of recorded games, for several threat-search
budgets (issue 17, item 1).

    .venv/bin/python bench/research/o_probe.py --record lost.jsonl --plies 5 7 9 --positions 12
    .venv/bin/python bench/research/o_probe.py --moves "1a1 1d4 4a4 3b3 1a4"

Each configuration is a fresh search (no table kept from other positions) with the time a
move given, the master's own root moves and ordering; prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine import Board  # noqa: E402
from engine.kernels.deepening import Master, SearchParams, warm_up  # noqa: E402
from engine.players.master import root_moves  # noqa: E402

CONFIGS = {  # threat-search nodes at an interior node and at a leaf
    "default (inner 4000, leaf 300)": (4000, 300),
    "leaf 50": (4000, 50),
    "inner 500, leaf 50": (500, 50),
    "no threat search in the tree": (0, 0),
}


def lost_positions(record: Path, plies: list[int], count: int) -> list[str]:
    """O's positions at ``plies`` of the games A lost as O in a --record file."""
    out = []
    for line in record.read_text().splitlines():
        game = json.loads(line)
        if game["a_is_x"] or game["winner"] != "b":
            continue
        moves = game["moves"].split()
        out += [" ".join(moves[:p]) for p in plies if p < len(moves)]
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="an engine_strength.py --record file")
    parser.add_argument("--plies", type=int, nargs="+", default=[5, 7, 9],
                        help="stones on the board (O to move: odd)")
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--moves", nargs="*", default=[], help="positions, as moves")
    parser.add_argument("--time", type=float, default=1.0)
    args = parser.parse_args()
    positions = list(args.moves)
    if args.record:
        positions += lost_positions(args.record, args.plies, args.positions)
    warm_up()
    print(f"`.venv/bin/python bench/research/o_probe.py {' '.join(sys.argv[1:])}` "
          f"(load average {os.getloadavg()[0]:.2f})\n")
    print("| threat search | positions | median depth | depths | nodes/s (main + threat) "
          "| threat-search share of the nodes | s used |\n|---|---|---|---|---|---|---|")
    for name, (inner, leaf) in CONFIGS.items():
        depths, nodes, tss, seconds = [], 0, 0, 0.0
        for moves in positions:
            board = Board.from_notation("4x4x4", moves)
            master = Master(board.geometry, params=SearchParams(tss_interior=inner, tss_leaf=leaf))
            started = time.perf_counter()
            thought = master.think(board, deadline=started + args.time - 0.04,
                                   root_moves=root_moves(board, 0.0))
            depths.append(thought.depth)
            nodes += thought.nodes
            tss += thought.tss_nodes
            seconds += thought.elapsed
        print(f"| {name} | {len(positions)} | {statistics.median(depths):g} "
              f"| {' '.join(map(str, depths))} | {(nodes + tss) / seconds:,.0f} "
              f"| {tss / max(nodes + tss, 1):.0%} | {seconds / len(positions):.2f} |", flush=True)


if __name__ == "__main__":
    main()
