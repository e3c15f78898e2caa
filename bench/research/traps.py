"""Do the master's traps hide the win? (issue 17, item 3)

From recorded games the master lost as O (``bench/research/engine_strength.py --record``), the first
position of each where the master's search (traps off, 0.5 s) proves the loss. There, each
losing move the search ranks first (up to ``--candidates``) is examined by the trap model
(:mod:`engine.players.traps`), then played: the opponent answers at ``--time`` a move, and the
master (traps off) searches the position after that answer for ``--time``. Reported, for the trap's
choice, the search's choice (the longest loss) and every examined move:

- *found*: the opponent announced a proved win with its answer (it saw its win at once);
- *kept*: after its answer the master still proves its own loss (the answer kept the win).

A good trap is found and kept less often than the other losing moves.

    .venv/bin/python bench/research/traps.py RECORD... --opponent level7 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.kernels.deepening import mate_plies  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.players.master import MasterPlayer  # noqa: E402
from engine.players.traps import TrapFinder, best  # noqa: E402
from engine.rules.board import Board  # noqa: E402
from engine.rules.notation import format_cell  # noqa: E402

FAR = 1e18


def lost_positions(paths: list[Path]) -> list[str]:
    """The move lists (as text, before O's move) of the distinct games A lost as O."""
    seen: dict[str, None] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            game = json.loads(line)
            if game["winner"] == "b" and not game["a_is_x"]:
                seen.setdefault(game["moves"], None)
    return list(seen)


def probe(moves: str, opponent: str, seconds: float, candidates: int) -> dict | None:
    """The trap model's view and the opponent's answers at the game's first proved loss."""
    played = moves.split()
    for ply in range(1, len(played), 2):
        board = Board.from_notation("4x4x4", " ".join(played[:ply]))
        player = make_player("master:traps=off", 1)
        assert isinstance(player, MasterPlayer)
        master = player.master(board.geometry, board.turn)
        thought = master.think(board, deadline=time.perf_counter() + 0.5)
        if thought.proved and thought.score < 0:
            break
    else:
        return None
    finder = TrapFinder(board.geometry)
    ranking = (thought.ranking or [thought.move])[:candidates]
    rows, traps = [], []
    for move in ranking:
        trap = finder.examine(board, move, mate_plies(thought.scores.get(move, 0)) or 0, FAR)
        assert trap is not None
        traps.append(trap)
        board.push(move)
        answer = make_player(opponent, 3).decide(board, Limit(time=seconds))
        board.push(answer.move)
        if board.is_game_over():  # the answer won on the spot
            kept = True
        else:
            after = make_player("master:traps=off", 2).decide(board, Limit(time=seconds))
            kept = after.forced is not None and after.forced.result == "loss"
        board.pop()
        board.pop()
        rows.append({
            "move": format_cell(move, board.geometry),
            "found": answer.forced is not None and answer.forced.result == "win",
            "kept": kept,
        })
    chosen = traps.index(best(traps))
    return {"position": board.notation(), "ply": board.ply, "loss_in": mate_plies(thought.score),
            "rows": rows, "trap": chosen}


def rate(rows: list[dict], what: str) -> str:
    hits = sum(r[what] for r in rows)
    return f"{hits}/{len(rows)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path)
    parser.add_argument("--opponent", default="level7")
    parser.add_argument("--time", type=float, default=1.0)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    games = lost_positions(args.records)
    print(f"`.venv/bin/python bench/research/traps.py {' '.join(sys.argv[1:])}`")
    print(f"{len(games)} distinct lost games; load average {os.getloadavg()[0]:.2f} before")
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        found = [r for r in pool.map(probe, games, [args.opponent] * len(games),
                                     [args.time] * len(games),
                                     [args.candidates] * len(games)) if r is not None]
    traps, searches, every = [], [], []
    for result in found:
        rows, t = result["rows"], result["trap"]
        traps.append(rows[t])
        searches.append(rows[0])
        every.extend(rows)
        marks = " ".join(f"{r['move']}{'*' if i == t else ''}:{'F' if r['found'] else '-'}"
                         f"{'K' if r['kept'] else '-'}" for i, r in enumerate(rows))
        print(f"  ply {result['ply']} loss in {result['loss_in']}: {marks}")
    print(f"\npositions {len(found)}; the trap differs from the search's choice in "
          f"{sum(r['trap'] != 0 for r in found)}; load average {os.getloadavg()[0]:.2f} after")
    print("\n| O's move | moves | opponent found its win at once | its answer kept the win |")
    print("|---|---|---|---|")
    for name, rows in (("the trap's choice", traps), ("the search's choice", searches),
                       ("every examined losing move", every)):
        print(f"| {name} | {len(rows)} | {rate(rows, 'found')} | {rate(rows, 'kept')} |")


if __name__ == "__main__":
    main()

