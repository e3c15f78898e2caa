"""Figures for the master engine: strength against the seed players, self-play, the ladder of
levels, speed and the forced-win suite.

    .venv/bin/python bench/research/engine_strength.py vs --games 50 --time 1
    .venv/bin/python bench/research/engine_strength.py --side o --record lost.jsonl vs bogenschutz
    .venv/bin/python bench/research/engine_strength.py --side o --x-openings 2 --games 80 \\
        vs mcts alphabeta
    .venv/bin/python bench/research/engine_strength.py blame lost.jsonl
    .venv/bin/python bench/research/engine_strength.py tally o901.jsonl
    .venv/bin/python bench/research/engine_strength.py held o921.jsonl --seconds 3
    .venv/bin/python bench/research/engine_strength.py --side o --jobs 2 tree bogenschutz
    .venv/bin/python bench/research/engine_strength.py self --games 20 --time 1
    .venv/bin/python bench/research/engine_strength.py replies 1a1
    .venv/bin/python bench/research/engine_strength.py --jobs 2 replies "1a1 1d4 4a1" --x alphabeta
    .venv/bin/python bench/research/engine_strength.py levels --games 40 --time 0.2
    .venv/bin/python bench/research/engine_strength.py speed --time 1
    .venv/bin/python bench/research/engine_strength.py suite --time 1
    .venv/bin/python bench/research/engine_strength.py deadline 0.05 0.2 1
    .venv/bin/python bench/research/engine_strength.py solve "1a1 2b2 1d4 1b2 3b2" --seconds 600

Each prints the command that made it and a markdown table for docs/benchmarks.md. Matches
alternate colours (the master has X in the even-numbered games) and use engine.players.arena.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.harness.line_engine import LinePlayer  # noqa: E402
from bench.harness.stats import percentiles  # noqa: E402
from engine import Board, format_cell, parse_cell  # noqa: E402
from engine.players import LEVELS, Decision, Limit, Player, make_player  # noqa: E402
from engine.players.arena import (  # noqa: E402
    A,
    ArenaGame,
    B,
    MatchResult,
    PlayerStats,
    game_seeds,
    match_game,
    play_game,
)
from engine.players.exact_match import exact_match  # noqa: E402
from engine.players.master import root_moves  # noqa: E402
from engine.warm import warm_up  # noqa: E402

OPPONENTS = ["bogenschutz", "rubinoff:eval=eval2,depth=4", "wood", "freeness", "random"]
GEOMETRY = Board("4x4x4").geometry
RECORD: Path | None = None  # --record: every game appended here as a JSON line
X_OPENINGS = 0  # --x-openings: X's first moves drawn from the symmetry classes
SIDE = "both"  # --side: the games where A is X, O or both (A is X in the even-numbered ones)
START = ""  # --start: the moves every game starts from
SUITE = ROOT / "tests" / "engine" / "forced_wins" / "suite.json"


def command() -> str:
    return ".venv/bin/python bench/research/engine_strength.py " + shlex.join(sys.argv[1:])


class OpeningPlayer(Player):
    """X with its first ``plies`` moves drawn uniformly from the symmetry classes of the
    position (seeded by the game), then ``inner``: varied openings for a second player."""

    name = "opening"
    summary = "random-class opening moves, then another player"

    def __init__(self, inner: Player, plies: int, seed: int) -> None:
        super().__init__(seed)
        self.inner, self.plies = inner, plies

    def _decide(self, board: Board, limit: Limit) -> Decision:
        if board.ply >= 2 * self.plies:
            return self.inner.decide(board, limit)
        rng = self.rng(board)
        return Decision(move=rng.choice(root_moves(board, rng.random())))


OUTSIDE: dict[str, str] = {}  # --outside NAME=CMD: the player ``outside:NAME`` runs CMD


def make(spec: str, seed: int = 0) -> Player:
    """The player ``spec`` names: ``outside:NAME`` a program given by ``--outside``
    (bench/harness/line_engine.py), else one of the engine's."""
    kind, _, label = spec.partition(":")
    if kind == "outside":
        if label not in OUTSIDE:
            raise SystemExit(f"{spec}: no --outside {label}=CMD given")
        return LinePlayer(OUTSIDE[label], label, seed)
    return make_player(spec, seed)


def opening_game(spec_a: str, spec_b: str, index: int, seed: int, limit: Limit,
                 x_openings: int) -> ArenaGame:
    """:func:`engine.players.arena.match_game`, with X's first ``x_openings`` moves from
    :class:`OpeningPlayer`."""
    if not x_openings and not START and not OUTSIDE:
        return match_game(spec_a, spec_b, index, "4x4x4", seed, limit)
    seed_a, seed_b = game_seeds(seed, index)
    player_a, player_b = make(spec_a, seed_a), make(spec_b, seed_b)
    a_is_x = index % 2 == 0
    x, o = (player_a, player_b) if a_is_x else (player_b, player_a)
    if x_openings:
        x = OpeningPlayer(x, x_openings, seed_a ^ seed_b)
    try:
        board, moves = play_game(x, o, "4x4x4", limit, (A, B) if a_is_x else (B, A),
                                 start=Board.from_notation("4x4x4", START) if START else None)
    finally:
        for player in (player_a, player_b):
            if isinstance(player, LinePlayer):
                player.close()
    outcome = board.outcome()
    assert outcome is not None
    return ArenaGame(index, a_is_x, seed_a, seed_b, tuple(moves), outcome)


def play_match(spec_a: str, spec_b: str, games: int, seconds: float, seed: int,
               jobs: int) -> MatchResult:
    """The match of A against B, its games spread over ``jobs`` processes."""
    started = time.perf_counter()
    limit = Limit(time=seconds)
    result = MatchResult("4x4x4", seed, limit, PlayerStats(make(spec_a).spec),
                         PlayerStats(make(spec_b).spec))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(opening_game, spec_a, spec_b, index, seed, limit, X_OPENINGS)
                   for index in range(games) if SIDE == "both" or index % 2 == (SIDE == "o")]
        for future in as_completed(futures):
            record = future.result()
            result.add(record)
            if RECORD is not None:
                with RECORD.open("a") as out:
                    out.write(json.dumps({
                        "a": spec_a, "b": spec_b, "seconds": seconds, "seed": seed,
                        "index": record.index, "a_is_x": record.a_is_x,
                        "winner": record.winner, "moves": " ".join(
                            START.split() + [format_cell(m.cell, GEOMETRY)
                                             for m in record.moves]),
                    }) + "\n")
            print(f"  game {record.index}: {record.winner or 'draw'} in {len(record.moves)} "
                  f"plies ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    result.records.sort(key=lambda r: r.index)
    return result


def by_opening(result: MatchResult, plies: int = 2) -> str:
    """A's won-drawn-lost by the game's first ``plies`` moves (--start's included)."""
    tally: dict[str, list[int]] = {}
    for record in result.records:
        key = " ".join((START.split() + [format_cell(m.cell, GEOMETRY)
                                         for m in record.moves])[:plies])
        row = tally.setdefault(key, [0, 0, 0])
        row[0 if record.winner == A else 2 if record.winner == B else 1] += 1
    return "; ".join(f"{key}: {w}-{d}-{lost}" for key, (w, d, lost) in sorted(tally.items()))


def match_row(spec_a: str, spec_b: str, games: int, seconds: float, seed: int,
              jobs: int = 1) -> str:
    result = play_match(spec_a, spec_b, games, seconds, seed, jobs)
    print(f"  by opening (A's won-drawn-lost): {by_opening(result)}", file=sys.stderr,
          flush=True)
    a = result.a
    return (f"| {spec_a} | {spec_b} | {result.games} | {a.wins} | {result.draws} | {a.losses} "
            f"| {a.wins_as_x}/{sum(r.a_is_x for r in result.records)} | {a.average_seconds:.2f} "
            f"| {a.max_seconds:.3f} | {os.getloadavg()[0]:.2f} |")


MATCH_HEADER = ("| A | B | games | A won | drawn | A lost | A's wins as X | A s/move "
                "| A max s/move | load average |\n|---|---|---|---|---|---|---|---|---|---|")


def cmd_vs(args: argparse.Namespace) -> None:
    print(MATCH_HEADER)
    for spec in args.opponents or OPPONENTS:
        print(match_row(args.master, spec, args.games, args.time, args.seed, args.jobs),
              flush=True)


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a share ``wins`` of ``games`` (95% with the default z)."""
    if games == 0:
        return 0.0, 1.0
    share = wins / games
    middle = (share + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(share * (1 - share) / games + z * z / (4 * games * games)) / (
        1 + z * z / games)
    return max(0.0, middle - half), min(1.0, middle + half)


def tally(lines: list[dict[str, object]]) -> list[tuple[str, str, int, int, int]]:
    """A's won-drawn-lost in recorded games (``--record``'s lines), per opponent and A's
    side, and over all of them: (B, side, won, drawn, lost)."""
    rows: dict[tuple[str, str], list[int]] = {}
    for line in lines:
        side = "X" if line["a_is_x"] else "O"
        outcome = 0 if line["winner"] == A else 2 if line["winner"] == B else 1
        for key in ((str(line["b"]), side), ("all", side)):
            rows.setdefault(key, [0, 0, 0])[outcome] += 1
    order = sorted(rows, key=lambda key: (key[0] == "all", key[1], key[0]))
    return [(b, side, rows[b, side][0], rows[b, side][1], rows[b, side][2]) for b, side in order]


def cmd_tally(args: argparse.Namespace) -> None:
    lines = [json.loads(text) for path in args.records for text in path.read_text().splitlines()
             if text.strip()]
    seeds = sorted({int(line["seed"]) for line in lines})
    print(f"{len(lines)} games, match seeds {', '.join(map(str, seeds))}\n")
    print("| B | A's side | games | A won | drawn | A lost | A's share | 95% (Wilson) |\n"
          "|---|---|---|---|---|---|---|---|")
    for b, side, won, drawn, lost in tally(lines):
        games = won + drawn + lost
        low, high = wilson(won, games)
        print(f"| {b} | {side} | {games} | {won} | {drawn} | {lost} | {won / games:.0%} "
              f"| {low:.0%}-{high:.0%} |")


def cmd_self(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    result = play_match(args.master, args.master, args.games, args.time, args.seed,
                        args.jobs)
    x_wins = sum(1 for r in result.records if r.outcome.winner == 0)
    o_wins = sum(1 for r in result.records if r.outcome.winner == 1)
    plies = [len(r.moves) for r in result.records]
    print("| games | X won | O won | drawn | median plies | minutes |\n|---|---|---|---|---|---|")
    print(f"| {result.games} | {x_wins} | {o_wins} | {result.draws} "
          f"| {statistics.median(plies):.0f} | {(time.perf_counter() - started) / 60:.1f} |")


def play_out(spec: str, moves: str, seconds: float, seed: int,
             x_spec: str = "") -> tuple[int | None, int, str]:
    """``spec`` against itself (or ``x_spec`` as X against ``spec`` as O) from the position
    after ``moves``: (winner, plies, the game)."""
    board, _ = play_game(make_player(x_spec or spec, seed), make_player(spec, seed + 1),
                         limit=Limit(time=seconds), start=Board.from_notation("4x4x4", moves))
    outcome = board.outcome()
    assert outcome is not None
    return outcome.winner, board.ply, board.notation()


def cmd_replies(args: argparse.Namespace) -> None:
    """Self-play from every reply (one per symmetry class) to the moves ``first``; with
    ``--x SPEC``, SPEC as X against the master as O there (which replies hold against it)."""
    board = Board.from_notation("4x4x4", args.first)
    starts = []
    for cell in root_moves(board, 0.0):
        board.push(cell)
        starts.append(board.notation())
        board.pop()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(play_out, [args.master] * len(starts), starts,
                                [args.time] * len(starts),
                                range(args.seed, args.seed + len(starts)),
                                [args.x] * len(starts)))
    x_wins = sum(winner == 0 for winner, _, _ in results)
    o_wins = sum(winner == 1 for winner, _, _ in results)
    print(f"| moves | X | replies (one per class) | X won | O won | drawn | median plies |\n"
          f"|---|---|---|---|---|---|---|\n| {args.first} | {args.x or args.master} "
          f"| {len(starts)} | {x_wins} | {o_wins} "
          f"| {len(starts) - x_wins - o_wins} "
          f"| {statistics.median(p for _, p, _ in results):.0f} |")
    for start, (winner, plies, game) in zip(starts, results, strict=True):
        if winner != 0:
            print(f"  {start}: {'draw' if winner is None else 'O won'} in {plies} plies: {game}")


def cmd_levels(args: argparse.Namespace) -> None:
    print(MATCH_HEADER)
    levels = args.levels or list(range(2, 9))
    for level in levels:
        print(match_row(f"level{level}", f"level{level - 1}", args.games, args.time,
                        args.seed, args.jobs), flush=True)


def positions(count: int) -> list[Board]:
    """Positions from games of a 3-ply master with noise (level 5 when these figures were
    first taken) against a 2-ply bogenschutz, every fourth ply from the sixth."""
    out: list[Board] = []
    seed = 0
    while len(out) < count:
        players = (make_player("master:depth=3,noise=120", seed),
                   make_player("bogenschutz:depth=2", seed))
        board = Board("4x4x4")
        while board.outcome() is None and len(out) < count:
            if board.ply >= 6 and board.ply % 4 == 2:
                out.append(board.copy())
            board.push(players[board.turn].decide(board).move)
        seed += 1
    return out


def cmd_speed(args: argparse.Namespace) -> None:
    print("| positions | s/move | nodes/s (main + threat search + df-pn) | median depth "
          "| proved | slowest answer s |\n|---|---|---|---|---|---|")
    nodes = seconds = proved = 0.0
    depths = []
    slowest = 0.0
    for board in positions(args.positions):
        started = time.perf_counter()
        decision = make_player(args.master).decide(board, Limit(time=args.time))
        slowest = max(slowest, time.perf_counter() - started)
        nodes += decision.nodes
        seconds += decision.elapsed
        depths.append(decision.depth)
        proved += decision.forced is not None
    print(f"| {args.positions} | {args.time} | {nodes / seconds:,.0f} "
          f"| {statistics.median(depths):.0f} | {proved:.0f} | {slowest:.3f} |")


def cmd_deadline(args: argparse.Namespace) -> None:
    """How far past its time limit the master answers, measured from outside ``decide``."""
    boards = positions(args.positions)
    print("| s/move | moves | median over (ms) | p99 over (ms) | max over (ms) "
          "| over by more than 50 ms |\n|---|---|---|---|---|---|")
    for seconds in args.budgets:
        player = make_player(args.master)
        overs = []
        for board in boards:
            started = time.perf_counter()
            player.decide(board, Limit(time=seconds))
            overs.append((time.perf_counter() - started - seconds) * 1000)
        p50, p99 = percentiles(overs, (0.5, 0.99))
        print(f"| {seconds} | {len(overs)} | {p50:+.1f} | {p99:+.1f} "
              f"| {max(overs):+.1f} | {sum(o > 50 for o in overs)} |", flush=True)


def cmd_suite(args: argparse.Namespace) -> None:
    suite = json.loads(args.file.read_text())
    rows: dict[tuple[int, bool], list[float]] = {}
    misses = slower = longer = 0
    for entry in suite:
        board = Board.from_notation("4x4x4", entry["moves"])
        decision = make_player(args.master).decide(board, Limit(time=args.time))
        winning = {parse_cell(c, board.geometry) for c in entry["winning"]}
        if decision.forced is None or decision.forced.result != "win":
            misses += 1
        elif decision.forced.plies != entry["plies"]:
            longer += 1
        rows.setdefault((entry["plies"], entry["quiet"]), []).append(decision.elapsed)
        if decision.move not in winning:
            slower += 1
            print(f"  slower win: {entry['moves']} -> {decision.move} {decision.forced}",
                  file=sys.stderr)
    print("| label | positions | median s | max s | total s |\n|---|---|---|---|---|")
    for (plies, quiet), times in sorted(rows.items()):
        kind = "quiet" if quiet else "continuous threats"
        print(f"| win in exactly {plies}, {kind} | {len(times)} "
              f"| {statistics.median(times):.3f} | {max(times):.3f} | {sum(times):.2f} |")
    print(f"not proved within {args.time} s: {misses}; proved but not in the labelled number of "
          f"plies: {longer}; move not among the labelled winning moves: {slower}")


def cmd_blame(args: argparse.Namespace) -> None:
    """For every game A lost in a --record file: the first move of A after which the solver
    proves the opponent's win, and which of A's other moves there the solver cannot refute."""
    from engine.kernels.solver import Solver

    for line in args.record_file.read_text().splitlines():
        game = json.loads(line)
        a_side = 0 if game["a_is_x"] else 1
        if game["winner"] != "b":
            continue
        moves = game["moves"].split()
        solver = Solver(GEOMETRY, tt_bits=args.tt_bits)
        blunder = solver.losing_ply([parse_cell(m, GEOMETRY) for m in moves], a_side,
                                    args.seconds)
        print(f"{game['b']} game {game['index']} (A is {'XO'[a_side]}, {len(moves)} plies): ",
              end="")
        if blunder is None:
            print("no losing move proved")
            continue
        before = Board.from_notation("4x4x4", " ".join(moves[:blunder]))
        holding = []
        for cell in before.legal_moves:
            before.push(cell)
            if before.winning_line is not None or not solver.prove(
                    before, attacker=a_side ^ 1, seconds=args.seconds / 4).proved:
                holding.append(format_cell(cell, GEOMETRY))
            before.pop()
        print(f"lost by ply {blunder + 1} ({moves[blunder]}) after \"{' '.join(moves[:blunder])}\";"
              f" not refuted there: {' '.join(holding) or 'none (lost already)'}", flush=True)


HELD, ONE_MOVE, NOT_HELD, OPEN = "P", "W", "-", "?"  # held's marks (see x_held)


def x_held(moves: list[str], seconds: float, nodes: int = 0) -> list[str]:
    """Whether X holds a win after each ply of a 4x4x4 game: ``P`` where the proof's tables
    prove it (X to move in a position of the proof, or O to move with every reply into one),
    else df-pn's answer within ``seconds`` (or ``nodes``): ``W`` proved, ``-`` disproved (X has
    no forced win there), ``?`` open; the game's last position (a line or a full board) is
    left out. One solver a game, its table kept from ply to ply."""
    from engine.kernels.solver import Solver
    from engine.players.resistance import OutOfLookups, ProofTables

    solver = Solver(GEOMETRY, tt_bits=22)
    board = Board(GEOMETRY)
    marks = []
    for move in moves:
        board.push(parse_cell(move, GEOMETRY))
        if board.outcome() is not None:
            break
        tables = ProofTables()
        try:
            proof_has_it = (tables.x_holds(*board.stones) if board.turn == 0
                            else tables.o_lost(*board.stones))
        except OutOfLookups:
            proof_has_it = False
        if proof_has_it:
            marks.append(HELD)
            continue
        proof = solver.prove(board, attacker=0, seconds=seconds, nodes=nodes)
        marks.append(ONE_MOVE if proof.proved else NOT_HELD if proof.disproved else OPEN)
    return marks


def slips(marks: list[str]) -> list[tuple[int, int | None]]:
    """The plies (1-based) where X let its win go (a ``-`` after a proved win, X's move) and
    where O gave it back (the next proved win after it, O's move; None if never)."""
    found: list[tuple[int, int | None]] = []
    held = True  # the empty board: X wins (the proof)
    for index, mark in enumerate(marks):
        if mark == NOT_HELD and held:
            found.append((index + 1, None))
            held = False
        elif mark in (HELD, ONE_MOVE) and not held:
            found[-1] = (found[-1][0], index + 1)
            held = True
    return found


def cmd_held(args: argparse.Namespace) -> None:
    """For every game of a record where A is O (lost only, unless ``--all``): after each
    ply, whether X holds a proved win (:func:`x_held`), and where X let it go and O gave it
    back: a loss with no slip is one X's play won from the first move to the last."""
    kept = slipped = 0
    for path in args.records:
        for text in path.read_text().splitlines():
            game = json.loads(text)
            if game["a_is_x"] or not (args.all or game["winner"] == B):
                continue
            moves = str(game["moves"]).split()
            marks = x_held(moves, args.seconds)
            found = slips(marks)
            kept += not found
            slipped += bool(found)
            said = "; ".join(
                f"X let it go at ply {x} ({moves[x - 1]})" + (
                    f", O gave it back at ply {o} ({moves[o - 1]})" if o else "")
                for x, o in found) or ("X held its win throughout" if OPEN not in marks else
                                       f"no slip of X's shown ({marks.count(OPEN)} open)")
            print(f"{game['b']} seed {game['seed']} game {game['index']} "
                  f"({game['winner'] or 'draw'}, {len(moves)} plies): {said}\n  {''.join(marks)}",
                  flush=True)
    print(f"{kept} games with no slip of X's, {slipped} with one (marks: P the proof's, W df-pn "
          f"proved, - X has no win, ? open within {args.seconds} s)")


def cmd_tree(args: argparse.Namespace) -> None:
    """A's exact chances in every game a tie-breaking searcher (B) can play against it.

    The games are split at ``--split`` plies: the positions there, with their chances, are
    walked to the end in ``--jobs`` processes."""
    a_side = 1 if SIDE == "o" else 0
    started = time.perf_counter()

    def progress(done: int, parts: int) -> None:
        print(f"  {done}/{parts} parts ({time.perf_counter() - started:.0f} s)",
              file=sys.stderr, flush=True)

    total, decisions = exact_match(args.master, args.opponent, a_side, Limit(time=args.time),
                                   jobs=args.jobs, split=args.split, on_part=progress)
    print("| A | B | A plays | A won | drawn | A lost | A's positions | lost games "
          "| minutes | load average |\n|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.master} | {args.opponent} | {'XO'[a_side]} | {total.win:.2%} "
          f"| {total.draw:.2%} | {total.loss:.2%} | {len(decisions)} | {len(total.lost)} "
          f"| {(time.perf_counter() - started) / 60:.1f} | {os.getloadavg()[0]:.2f} |")
    for line, chance in sorted(total.lost.items(), key=lambda e: -e[1])[:args.show]:
        print(f"  lost with chance {chance:.3%}: {line}")


def cmd_solve(args: argparse.Namespace) -> None:
    from engine.kernels.solver import Solver

    print("| position (moves) | to move | result | df-pn nodes | threat-search nodes | s |")
    print("|---|---|---|---|---|---|")
    for moves in args.positions:
        board = Board.from_notation("4x4x4", moves)
        solver = Solver(board.geometry, tt_bits=args.tt_bits)
        proof = solver.prove(board, attacker=0, seconds=args.seconds)
        result = ("X wins" if proof.proved else "X does not win" if proof.disproved
                  else f"open (pn {proof.pn}, dn {proof.dn})")
        print(f"| {moves or '(empty)'} | {'XO'[board.turn]} | {result} | {proof.nodes:,} "
              f"| {proof.tss_nodes:,} | {proof.seconds:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="master", help="the spec under test")
    parser.add_argument("--time", type=float, default=1.0, help="seconds a move")
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="games played at once (processes)")
    parser.add_argument("--record", type=Path, help="append every game's moves (JSON lines)")
    parser.add_argument("--outside", action="append", default=[], metavar="NAME=CMD",
                        help="a program outside the project, played as outside:NAME: it reads "
                             "'position 4x4x4 <millis> <moves>' lines and writes a move line "
                             "(bench/harness/line_engine.py)")
    parser.add_argument("--x-openings", type=int, default=0, metavar="K",
                        help="X's first K moves drawn uniformly from the symmetry classes of "
                             "the position (seeded by the game): varied openings")
    parser.add_argument("--start", default="", metavar="MOVES",
                        help='every game starts after these moves, e.g. "1a1" (the '
                             "player to move then is the one whose turn it is)")
    parser.add_argument("--side", choices=["both", "x", "o"], default="both",
                        help="play only the games where A is X (or O)")
    sub = parser.add_subparsers(dest="what", required=True)
    vs = sub.add_parser("vs", help="the master against the seed players")
    vs.add_argument("opponents", nargs="*")
    sub.add_parser("self", help="master against master: how often the first player wins")
    rp = sub.add_parser("replies", help="self-play from every reply to a first move")
    rp.add_argument("first", nargs="?", default="1a1")
    rp.add_argument("--x", default="", metavar="SPEC",
                    help="X played by SPEC, O by the master (default: the master both sides)")
    lv = sub.add_parser("levels", help="each level against the one below")
    lv.add_argument("levels", nargs="*", type=int)
    sp = sub.add_parser("speed", help="nodes per second on positions from real games")
    sp.add_argument("--positions", type=int, default=20)
    su = sub.add_parser("suite", help="time to find the win in each forced-win suite position")
    su.add_argument("--file", type=Path, default=SUITE,
                    help="a suite made by tests/engine/forced_wins/make_suite.py "
                         "(held out: another --seed)")
    dl = sub.add_parser("deadline", help="how far past the time limit the master answers")
    dl.add_argument("--positions", type=int, default=100)
    dl.add_argument("budgets", nargs="*", type=float, default=[0.05, 0.2, 1.0])
    bl = sub.add_parser("blame", help="the losing move of A in each lost game of a record")
    bl.add_argument("record_file", type=Path)
    bl.add_argument("--seconds", type=float, default=20.0)
    bl.add_argument("--tt-bits", type=int, default=22)
    ta = sub.add_parser("tally", help="A's results in --record files, with 95%% intervals")
    ta.add_argument("records", nargs="+", type=Path)
    he = sub.add_parser("held", help="where X let its win go, and O gave it back, in the "
                                      "games of --record files where A is O")
    he.add_argument("records", nargs="+", type=Path)
    he.add_argument("--seconds", type=float, default=3.0, help="df-pn's time a position")
    he.add_argument("--all", action="store_true", help="every game, not only those A lost")
    tr = sub.add_parser("tree", help="A's exact chances in every game a searcher can play")
    tr.add_argument("opponent", nargs="?", default="bogenschutz")
    tr.add_argument("--split", type=int, default=10, help="plies walked before the processes")
    tr.add_argument("--show", type=int, default=10, help="lost games listed, likeliest first")
    so = sub.add_parser("solve", help="df-pn: does X force a win from these positions?")
    so.add_argument("positions", nargs="+", help='moves, e.g. "1a1 2b2 1d4"')
    so.add_argument("--seconds", type=float, default=60.0)
    so.add_argument("--tt-bits", type=int, default=22)
    args = parser.parse_args()
    global RECORD, SIDE, START, X_OPENINGS
    RECORD, SIDE, START, X_OPENINGS = args.record, args.side, args.start, args.x_openings
    OUTSIDE.update(item.split("=", 1) for item in args.outside)
    if args.what == "tally":  # records only: no engine to warm up
        cmd_tally(args)
        return
    seconds = warm_up(sparring=True)  # every kernel, before the worker processes fork
    print(f"compile/load: {seconds:.1f} s; levels: {LEVELS}", file=sys.stderr)
    print(f"`{command()}`\n")
    {"vs": cmd_vs, "self": cmd_self, "levels": cmd_levels, "speed": cmd_speed,
     "suite": cmd_suite, "solve": cmd_solve, "deadline": cmd_deadline, "replies": cmd_replies,
     "blame": cmd_blame, "tree": cmd_tree, "held": cmd_held}[args.what](args)


if __name__ == "__main__":
    main()
