"""O's best resistance (issue 26, item 4): the master as O with ``resist`` off and on, the same
seeds, against X players it was not tuned on, and against the proof's perfect X.

    .venv/bin/python bench/resist.py --time 0.25 --seeds 12 --seed 2611 \\
        --x alphabeta --x mcts:c=1.0 --x level6 --x level7 [--survival] \\
        [--resist resist=on,bookfirst=off --resist resist=on,bookfirst=on]

For each seed and each X player, a game a setting is played in turn, one process, one game
at a time: O is ``master`` (``--o``) with ``resist=off``, then with each ``--resist``
options (by default ``resist=on``: the master's defaults), each with the same seeds
(``engine.players.arena.game_seeds``) and X the same player. Every move gets ``--time`` seconds.
Reported per X player and setting: O's wins, draws and losses, the median plies of the
games, and how many O moves met a position the proof has O lost (where ``resist`` decides).
With ``--survival``: ``bench/proof.py``'s survival against perfect X (one game per class of
O's reply to 1a1) for every setting. The rows are printed as games end; a markdown table and
the JSON at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # bench/proof.py imports ``harness`` (imported, not run)

from bench.proof import survival  # noqa: E402
from engine import Board  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.players.arena import game_seeds  # noqa: E402
from engine.players.resistance import ProofTables  # noqa: E402
from engine.warm import warm_up  # noqa: E402


def play(x_spec: str, o_spec: str, seeds: tuple[int, int], seconds: float) -> dict[str, object]:
    """One game from the empty board; O's moves counted where the proof has O lost."""
    board = Board("4x4x4")
    players = (make_player(x_spec, seeds[0]), make_player(o_spec, seeds[1]))
    lost_by_proof = 0
    while board.outcome() is None:
        if board.turn == 1:
            lost_by_proof += ProofTables().o_lost(*board.stones)
        board.push(players[board.turn].decide(board, Limit(time=seconds)).move)
    outcome = board.outcome()
    assert outcome is not None
    winner = {0: "X", 1: "O", None: "draw"}[outcome.winner]
    return {"plies": board.ply, "winner": winner, "o_moves_lost_by_proof": lost_by_proof,
            "moves": board.notation()}


def rows(games: list[dict[str, object]], xs: list[str],
         settings: list[str]) -> list[dict[str, object]]:
    """The table's rows: per X player and setting that played a game, O's results, the
    median plies and the O moves the proof had lost (none with no games: ``--seeds 0``)."""
    table = []
    for x_spec in xs:
        for setting in settings:
            mine = [g for g in games if g["x"] == x_spec and g["setting"] == setting]
            if not mine:
                continue
            table.append({
                "x": x_spec, "resist": setting,
                "o_won": sum(g["winner"] == "O" for g in mine),
                "draws": sum(g["winner"] == "draw" for g in mine),
                "x_won": sum(g["winner"] == "X" for g in mine),
                "median_plies": statistics.median(g["plies"] for g in mine),  # type: ignore[type-var]
                "o_moves_lost_by_proof": sum(g["o_moves_lost_by_proof"]  # type: ignore[misc]
                                             for g in mine)})
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--x", action="append", dest="xs", metavar="SPEC",
                        help="an X player (repeat); default alphabeta, mcts:c=1.0, level6, "
                             "level7")
    parser.add_argument("--o", default="master", help="O's spec, with resist=off and with "
                        "each --resist")
    parser.add_argument("--resist", action="append", metavar="OPTIONS",
                        help="options added to --o for a setting (repeat); default resist=on")
    parser.add_argument("--time", type=float, default=0.25, help="seconds a move")
    parser.add_argument("--seeds", type=int, default=12,
                        help="games a player and setting (0: none, with --survival only)")
    parser.add_argument("--seed", type=int, default=2611, help="the match seed")
    parser.add_argument("--survival", action="store_true",
                        help="also O against the proof's perfect X, every setting")
    args = parser.parse_args()
    if args.seeds < 0 or (args.seeds == 0 and not args.survival):
        parser.error(f"--seeds {args.seeds}: no game to play (0 only with --survival)")
    xs = args.xs or ["alphabeta", "mcts:c=1.0", "level6", "level7"]
    join = "," if ":" in args.o else ":"
    specs = {options: f"{args.o}{join}{options}"
             for options in ["resist=off", *(args.resist or ["resist=on"])]}
    warm_up()
    print(f"`.venv/bin/python bench/resist.py {shlex.join(sys.argv[1:])}` "
          f"(load average {os.getloadavg()[0]:.2f} before)", flush=True)
    started = time.perf_counter()
    games: list[dict[str, object]] = []
    for index in range(args.seeds):
        seeds = game_seeds(args.seed, index)
        for x_spec in xs:
            for setting in specs:
                game = play(x_spec, specs[setting], seeds, args.time)
                game.update(x=x_spec, setting=setting, index=index)
                games.append(game)
                print(f"{index} {x_spec} {setting}: {game['winner']} in "
                      f"{game['plies']} plies, {game['o_moves_lost_by_proof']} O moves lost "
                      f"by the proof", flush=True)
    report: dict[str, object] = {"command": f"bench/resist.py {shlex.join(sys.argv[1:])}",
                                 "games": games}
    report["rows"] = table = rows(games, xs, list(specs))
    if table:
        print("\n| X | O's options | O won | draws | X won | median plies | O moves the proof "
              "had lost |\n|---|---|---|---|---|---|---|")
    for row in table:
        print(f"| {row['x']} | {row['resist']} | {row['o_won']} | {row['draws']} "
              f"| {row['x_won']} | {row['median_plies']} | {row['o_moves_lost_by_proof']} |",
              flush=True)
    if args.survival:
        report["survival"] = {setting: survival(args.time, specs[setting])
                              for setting in specs}
        for setting, data in report["survival"].items():  # type: ignore[attr-defined]
            at_bound = sum(g["plies"] == g["bound"] for g in data["games"])
            print(f"perfect X, {setting}: median {data['median_plies']} plies, "
                  f"X won {data['x_won']} of {len(data['games'])}, {at_bound} as long as the "
                  f"proof allows", flush=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
