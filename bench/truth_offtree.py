"""The truth off the proof's tree: how many verdicts are known within the budget, and how
long ``engine.solved.truth.solve`` takes, before and after a change (issue 26, item 3).

    .venv/bin/python bench/truth_offtree.py [--positions 40] [--seed 2] [--budget 1.0]
                                            [--against main]

The positions: games of level 6 against level 7 (sides by the game's parity; 3 plies a move,
no clock, so a seed gives the same games on any machine) where each ply, with probability
1/4, a random legal move is played instead of the player's; from each game
one position at a ply drawn from 5 to 20, unfinished and not covered by the proof (neither
``x_proved`` nor ``o_proved``), each once. ``--seed`` fixes them: say which seeds were used
to tune and which were held out.

Each position is solved by both engines in turn, alternating which goes first (interleaved,
so load on the machine falls on both alike), each with an empty verdict cache: this
checkout's ``engine.solved.truth`` and the one at ``--against`` (a git revision: its
``engine/solved/truth.py`` loaded beside the rest of this checkout's engine; at a revision
before the engine was split into parts (9e50a03), its ``engine/truth.py``, its imports of the
old module names mapped to today's, :data:`OLD_MODULES`). A process warms both up first. It
prints, per engine, the share of root verdicts known (not ``unknown``), the time p50/p95/p99
by ``harness.stats``' rule, the moves left unknown, and every position where the two disagree
on a known verdict (which would be a bug in one of them).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.stats import ms  # noqa: E402
from engine import Board, format_moves  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.solved.strategy import o_proved, x_proved  # noqa: E402

DEVIATE = 0.25
# The engine's modules before 9e50a03 split them into parts: the old name, today's. Not
# engine.puzzles (a module then, the package today) nor engine.truth (the one loaded).
OLD_MODULES = {
    "engine.arena": "engine.players.arena",
    "engine.board": "engine.rules.board",
    "engine.book": "engine.solved.book",
    "engine.dfpn": "engine.kernels.dfpn",
    "engine.dictionary": "engine.solved.dictionary",
    "engine.exact": "engine.players.exact_match",
    "engine.geometry": "engine.rules.geometry",
    "engine.kernel": "engine.kernels.negamax",
    "engine.notation": "engine.rules.notation",
    "engine.perft": "engine.kernels.perft",
    "engine.probe": "engine.solved.probe",
    "engine.proof": "engine.solved.proof",
    "engine.puzzle_sources": "engine.puzzles.sources",
    "engine.pvs": "engine.kernels.pvs",
    "engine.resistance": "engine.players.resistance",
    "engine.review": "engine.solved.review",
    "engine.search": "engine.kernels.deepening",
    "engine.small_boards": "engine.solved.small_boards",
    "engine.small_search": "engine.kernels.small_search",
    "engine.solver": "engine.kernels.solver",
    "engine.strategy": "engine.solved.strategy",
    "engine.threats": "engine.kernels.threats",
}
TRUTH = "engine/solved/truth.py"
OLD_TRUTH = "engine/truth.py"  # before 9e50a03


def positions(count: int, seed: int) -> list[list[int]]:
    """``count`` off-tree positions from games of level 6 and 7 with random deviations."""
    rng = random.Random(seed)
    found: list[list[int]] = []
    seen: set[tuple[int, ...]] = set()
    game = 0
    while len(found) < count:
        game += 1
        specs = ("level6", "level7") if game % 2 else ("level7", "level6")
        players = [make_player(spec, seed * 1000 + game) for spec in specs]
        stop_at = rng.randint(5, 20)
        board = Board("4x4x4")
        while board.ply < stop_at and board.outcome() is None:
            if rng.random() < DEVIATE:
                board.push(rng.choice(board.legal_moves))
            else:
                board.push(players[board.turn].decide(board, Limit(depth=3)).move)
        if board.outcome() is not None or tuple(board.moves) in seen:
            continue
        if x_proved(board) if board.turn == 0 else o_proved(board):
            continue
        seen.add(tuple(board.moves))
        found.append(list(board.moves))
    return found


def engine_at(revision: str, root: Path = ROOT) -> ModuleType:
    """``engine/solved/truth.py`` as it is at ``revision`` (``engine/truth.py`` before the
    split, its old imports mapped to today's modules), as a module of its own; SystemExit
    saying why when the revision has neither or its truth does not load beside today's
    engine."""
    text, old = _show(root, revision, TRUTH), False
    if text is None:
        text, old = _show(root, revision, OLD_TRUTH), True
    if text is None:
        raise SystemExit(f"--against {revision}: neither {TRUTH} nor {OLD_TRUTH} there "
                         "(not a revision of this repository, or before engine/truth.py)")
    if old:
        for name, today in OLD_MODULES.items():
            sys.modules.setdefault(name, importlib.import_module(today))
    with tempfile.TemporaryDirectory() as folder:  # read once: gone after the import
        path = Path(folder) / "truth_before.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location("engine.truth_before", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        try:
            spec.loader.exec_module(module)
        except (ImportError, AttributeError) as error:
            raise SystemExit(f"--against {revision}: its {OLD_TRUTH if old else TRUTH} does "
                             f"not load beside today's engine: {error}") from error
    return module


def _show(root: Path, revision: str, path: str) -> str | None:
    """The file ``path`` at ``revision``, or None when the revision has none."""
    shown = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{path}"],
                           capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--against", default="main", help="git revision to compare with")
    args = parser.parse_args()
    from engine.solved import truth

    engines = {"before": engine_at(args.against), "after": truth}
    sample = positions(args.positions, args.seed)
    for module in engines.values():  # compile and load the proof before the clock runs
        module.solve(Board.from_notation("4x4x4", "1a1 1d4 4a4 3b3"), 0.2)
    times: dict[str, list[float]] = {name: [] for name in engines}
    known = dict.fromkeys(engines, 0)
    unknown_moves = dict.fromkeys(engines, 0)
    for index, moves in enumerate(sample):
        order = list(engines) if index % 2 == 0 else list(reversed(engines))
        verdicts = {}
        for name in order:
            module = engines[name]
            module._cache.clear()  # noqa: SLF001 - every position from scratch
            board = Board("4x4x4", moves)
            began = time.perf_counter()
            verdict = module.solve(board, args.budget)
            times[name].append(time.perf_counter() - began)
            verdicts[name] = verdict.verdict
            known[name] += verdict.verdict != "unknown"
            unknown_moves[name] += sum(m.verdict == "unknown" for m in verdict.moves)
        if "unknown" not in verdicts.values() and len(set(verdicts.values())) > 1:
            print(f"DISAGREE {format_moves(moves, board.geometry)}: {verdicts}", flush=True)
        print(f"{index + 1:3} ply {len(moves):2} {format_moves(moves, board.geometry):60} "
              + "  ".join(f"{n} {verdicts[n]:7} {times[n][-1]:5.2f} s" for n in engines),
              flush=True)
    for name in engines:
        print(f"{name:6} seed {args.seed}, {len(sample)} positions, budget {args.budget} s: "
              f"known {known[name]}/{len(sample)}, {ms(times[name])}, "
              f"moves unknown {unknown_moves[name]}", flush=True)


if __name__ == "__main__":
    main()
