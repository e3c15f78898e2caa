"""Figures of the proof (docs/proof.md): the shipped strategy's size and load time, the replay
of the whole proof from it, the master's time per move along the proof, and the latency of
``engine.solved.truth.solve`` on and off the proof's tree.

    .venv/bin/python bench/proof.py [--positions 40] [--budget 1.0] [--no-verify]

The full proof itself is ``qubic prove --json`` (one process) or ``qubic prove --processes 2
--json``: its counts and seconds are printed by the command.

- load: seconds to read ``engine/data/qubic.strategy.xz`` (a fresh process, median of 3).
- verify: ``qubic prove --verify --json`` in a subprocess: its seconds and counts.
- on the tree: positions of games where X (the master) plays the strategy against random O
  moves; off the tree: the same games with X's moves random too. ``solve(board, budget)``
  latency, p50 and p99 (by ``harness.stats``' rule), and how many verdicts were not ``unknown``.
- with ``--survival S``: ``--o-spec`` (the master) as O at S seconds a move against the
  master as X (which plays the proved strategy from the first move), one game per class of
  O's first reply to 1a1: the plies each game lasted beside the proof's bound from that
  reply (the longest line of the strategy below it, ``strategy_height``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.stats import percentiles  # noqa: E402

from engine import Board, format_moves  # noqa: E402
from engine.solved.strategy import strategy_move, strategy_path  # noqa: E402
from engine.solved.truth import UNKNOWN, solve  # noqa: E402


def load_seconds() -> float:
    code = ("import time; t = time.perf_counter();"
            " from engine.solved.strategy import shipped_strategy;"
            " shipped_strategy(); print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout) for _ in range(3)]
    return statistics.median(runs)


def verify() -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "qubic_cli", "prove", "--verify", "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    data: dict[str, object] = json.loads(done.stdout)
    data["exit"] = done.returncode
    return data


def positions(count: int, seed: int, on_tree: bool) -> list[Board]:
    rng = random.Random(seed)
    out: list[Board] = []
    while len(out) < count:
        board = Board("4x4x4")
        while board.outcome() is None and len(out) < count:
            if board.ply >= 2 and rng.random() < 0.25:
                out.append(board.copy())
            move = strategy_move(board) if on_tree and board.turn == 0 else None
            board.push(move if move is not None else rng.choice(board.legal_moves))
    return out


def latency(boards: list[Board], budget: float) -> dict[str, float]:
    seconds, known = [], 0
    for board in boards:
        started = time.perf_counter()
        verdict = solve(board, budget)
        seconds.append(time.perf_counter() - started)
        known += verdict.verdict != UNKNOWN
    p50, p99 = percentiles(seconds, (0.5, 0.99))
    return {"p50": p50, "p99": p99, "known": known, "positions": len(boards)}


def survival(seconds: float, o_spec: str) -> dict[str, object]:
    from engine.players import Limit, make_player
    from engine.solved.proof import strategy_height

    board = Board("4x4x4", [0])
    seen: set[tuple[int, int]] = set()
    games = []
    for reply in board.legal_moves:
        key = board.geometry.canonical(1, 1 << reply)
        if key in seen:
            continue
        seen.add(key)
        game = Board("4x4x4", [0, reply])
        bound = strategy_height(game, 5.0)
        players = (make_player("master", seed=1), make_player(o_spec, seed=2))
        while game.outcome() is None:
            game.push(players[game.turn].decide(game, Limit(time=seconds)).move)
        outcome = game.outcome()
        games.append({"reply": format_moves([reply], game.geometry), "plies": game.ply,
                      "bound": None if bound is None else bound + 2,
                      "winner": None if outcome is None else outcome.winner})
    lasted = [g["plies"] for g in games]
    return {"games": games, "median_plies": statistics.median(lasted),  # type: ignore[type-var]
            "x_won": sum(g["winner"] == 0 for g in games)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--survival", type=float, metavar="S",
                        help="also play --o-spec as O at S s a move against perfect X")
    parser.add_argument("--o-spec", default="master", help="O for --survival (default master)")
    args = parser.parse_args()
    path = strategy_path()
    report: dict[str, object] = {"strategy_bytes": path.stat().st_size,
                                 "load_seconds": load_seconds()}
    if not args.no_verify:
        report["verify"] = verify()
    solve(Board("4x4x4"), 0.1)  # load the tables and the compiled kernels first
    report["solve_on_tree"] = latency(positions(args.positions, 1, True), args.budget)
    report["solve_off_tree"] = latency(positions(args.positions, 2, False), args.budget)
    if args.survival:
        report["survival"] = survival(args.survival, args.o_spec)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
