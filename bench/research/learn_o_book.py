"""Learn the second player's first replies from many first players (issue 17, item 2).

A bandit over O's replies: X opens with one move of each class (``1a1``, the corner/centre
class, and ``1b1``, the other), O's reply to it is an arm (one per symmetry class of the
position), and from there X is one of many players of other families (``--train``, each at
its own time a move) and O is the master (``--o-spec`` at ``--o-time``). Each game scores its
arm with O's result (won 1, drawn 1/2, lost 0); UCB1 (``--c``) picks the next game's arm, so
replies that lose stop getting games. With ``--deep N``, a position met after X's second
move at least N times becomes a bandit of its own, over the master's best ``--arms``
replies there (ranked by ``--think`` seconds of search; the book's move, if any, among
them). Some X players are held out of the learning (``--held-out`` in the doc's runs: the
master with noise) and measured afterwards at 1 s a move with
``bench/research/engine_strength.py --master master:bookfile=PATH``.

The state (every arm's games) is kept in ``--state`` (JSON) after each game, so a run can be
split into chunks (``--minutes``) that go on where the last stopped. ``--write PATH`` writes
the shipped book with every learnt node's best arm (highest mean among the arms with at
least half the games of the most-played one) as its move.

    .venv/bin/python bench/research/learn_o_book.py --state S.json --minutes 20 --jobs 2 learn
    .venv/bin/python bench/research/learn_o_book.py --state S.json report
    .venv/bin/python bench/research/learn_o_book.py --state S.json write /tmp/book.txt
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine import Board, format_cell, parse_cell  # noqa: E402
from engine.kernels.deepening import Master  # noqa: E402
from engine.players import Decision, Limit, Player, make_player  # noqa: E402
from engine.players.master import root_moves  # noqa: E402
from engine.solved.book import HOLD, Key, board_of, book_for, canonical_frame  # noqa: E402
from engine.warm import warm_up  # noqa: E402

VARIANT = "4x4x4"
FIRST_MOVES = ("1a1", "1b1")  # one of each class of X's first move
# X players of the learning, each with its seconds a move: other families at several
# strengths, and the seed players. The master with noise is held out (measured afterwards).
TRAIN = [
    ("alphabeta", 0.1), ("alphabeta", 0.2), ("alphabeta:depth=4", 0.2), ("mcts", 0.1),
    ("mcts", 0.2), ("bogenschutz", 0.2), ("rubinoff:eval=eval2,depth=4", 0.2), ("wood", 0.2),
]


def key_text(key: Key) -> str:
    return f"{key[0]:x} {key[1]:x}"


class Node:
    """A position with O to move (canonical) and its arms: cell (canonical frame) -> games,
    O's score and the plies of those games."""

    def __init__(self, moves: str, arms: list[int]) -> None:
        self.moves = moves  # a game that reaches the position (for people)
        self.arms: dict[int, list[float]] = {cell: [0, 0.0, 0] for cell in arms}

    def choose(self, c: float, rng: random.Random) -> int:
        total = sum(games for games, _, _ in self.arms.values())
        untried = [cell for cell, (games, _, _) in self.arms.items() if not games]
        if untried:
            return rng.choice(untried)
        return max(self.arms, key=lambda cell: self.arms[cell][1] / self.arms[cell][0]
                   + c * math.sqrt(math.log(total) / self.arms[cell][0]))

    def best(self) -> int:
        most = max(games for games, _, _ in self.arms.values())
        fair = [cell for cell, (games, _, _) in self.arms.items() if games >= most / 2]
        return max(fair, key=lambda cell: self.arms[cell][1] / self.arms[cell][0])

    def cell_text(self, cell: int) -> str:
        """An arm in the frame of ``moves``."""
        board = Board.from_notation(VARIANT, self.moves)
        _, sym = canonical_frame(board)
        return format_cell(sym.index(cell), board.geometry)


class Learner:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodes: dict[str, Node] = {}
        self.seen: dict[str, list] = {}  # ply-3 positions: [count, moves]
        self.games: list[dict] = []
        if path.exists():
            data = json.loads(path.read_text())
            for key, node in data["nodes"].items():
                self.nodes[key] = Node(node["moves"], [])
                self.nodes[key].arms = {int(c): v for c, v in node["arms"].items()}
            self.seen, self.games = data["seen"], data["games"]
        for first in FIRST_MOVES:
            board = Board.from_notation(VARIANT, first)
            key, sym = canonical_frame(board)
            if key_text(key) not in self.nodes:
                self.nodes[key_text(key)] = Node(first, [sym[c] for c in root_moves(board, 0.0)])

    def save(self) -> None:
        self.path.write_text(json.dumps({
            "nodes": {k: {"moves": n.moves, "arms": n.arms} for k, n in self.nodes.items()},
            "seen": self.seen, "games": self.games}))

    def plan(self, c: float, rng: random.Random) -> dict[str, int]:
        """Every node's arm for the next game."""
        return {key: node.choose(c, rng) for key, node in self.nodes.items()}

    def record(self, game: dict) -> None:
        self.games.append(game)
        board = Board(VARIANT)
        score = {1: 1.0, None: 0.5, 0: 0.0}[game["winner"]]
        for move in game["moves"].split():
            if board.turn == 1 and board.outcome() is None:
                key = key_text(canonical_frame(board)[0])
                node = self.nodes.get(key)
                if node is not None:
                    _, sym = canonical_frame(board)
                    cell = sym[parse_cell(move, board.geometry)]
                    if cell in node.arms:
                        arm = node.arms[cell]
                        arm[0] += 1
                        arm[1] += score
                        arm[2] += len(game["moves"].split())
                if board.ply == 3:
                    count = self.seen.setdefault(key, [0, board.notation()])
                    count[0] += 1
            board.push(parse_cell(move, board.geometry))

    def deepen(self, threshold: int, arms: int, think: float) -> None:
        """Make a node of every ply-3 position met ``threshold`` times."""
        for key, (count, moves) in self.seen.items():
            if count < threshold or key in self.nodes:
                continue
            board = Board.from_notation(VARIANT, moves)
            thought = Master(board.geometry).think(
                board, deadline=time.perf_counter() + think, root_moves=root_moves(board, 0.0))
            cells = (thought.ranking or [thought.move])[:arms]
            booked = book_for(VARIANT).move(board)
            if booked is not None and booked not in cells:
                cells.append(booked)
            _, sym = canonical_frame(board)
            self.nodes[key] = Node(moves, [sym[c] for c in cells])
            print(f"  new node {moves}: {' '.join(format_cell(c, board.geometry) for c in cells)}",
                  file=sys.stderr, flush=True)


class PlannedO(Player):
    """O playing the planned arm in the learnt nodes, else ``inner``."""

    name = "planned"

    def __init__(self, inner: Player, plan: dict[str, int]) -> None:
        super().__init__(0)
        self.inner, self.plan = inner, plan

    def _decide(self, board: Board, limit: Limit) -> Decision:
        key, sym = canonical_frame(board)
        cell = self.plan.get(key_text(key))
        if cell is not None:
            return Decision(move=sym.index(cell))
        return self.inner.decide(board, limit)


def play(x_spec: str, x_time: float, o_spec: str, o_time: float, first: str,
         plan: dict[str, int], seed: int) -> dict:
    """One game: X's ``first`` move, then O (planned) against ``x_spec``."""
    board = Board.from_notation(VARIANT, first)
    players = (make_player(x_spec, seed), PlannedO(make_player(o_spec, seed + 1), plan))
    limits = (Limit(time=x_time), Limit(time=o_time))
    while board.outcome() is None:
        board.push(players[board.turn].decide(board, limits[board.turn]).move)
    outcome = board.outcome()
    assert outcome is not None
    return {"x": f"{x_spec}@{x_time}", "winner": outcome.winner, "moves": board.notation(),
            "seed": seed}


def cmd_learn(args: argparse.Namespace, learner: Learner) -> None:
    rng = random.Random(f"learn/{args.seed}/{len(learner.games)}")
    train = [(spec, float(t)) for spec, _, t in (p.rpartition("@") for p in args.train)]
    stop_at = time.time() + args.minutes * 60
    context = multiprocessing.get_context("fork")
    pending: dict[Future, int] = {}
    n = len(learner.games)
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        while True:
            while len(pending) < args.jobs and time.time() < stop_at and n < args.games:
                x_spec, x_time = train[n % len(train)]
                first = FIRST_MOVES[0] if rng.random() < args.share else FIRST_MOVES[1]
                seed = random.Random(f"learn-game/{args.seed}/{n}").getrandbits(31)
                pending[pool.submit(play, x_spec, x_time, args.o_spec, args.o_time, first,
                                    learner.plan(args.c, rng), seed)] = n
                n += 1
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                game = future.result()
                learner.record(game)
                if args.deep:
                    learner.deepen(args.deep, args.arms, args.think)
                learner.save()
                print(f"  {len(learner.games)}: {game['x']} {game['moves'][:16]} "
                      f"{ {0: 'X', 1: 'O', None: 'draw'}[game['winner']] } "
                      f"in {len(game['moves'].split())}", file=sys.stderr, flush=True)
    cmd_report(args, learner)


def cmd_report(args: argparse.Namespace, learner: Learner) -> None:
    print(f"{len(learner.games)} games")
    print("| position (O to move) | O's reply | games | O won | drawn | O lost | score "
          "| mean plies |\n|---|---|---|---|---|---|---|---|")
    for node in learner.nodes.values():
        played = [(cell, arm) for cell, arm in node.arms.items() if arm[0]]
        if not played:
            continue
        best = node.best()
        first = len(node.moves.split()) == 1  # a node made later: its arms' games only
        for cell, (games, score, plies) in sorted(played, key=lambda e: -e[1][0]):
            tally = "- | - | -"
            if first:
                won, lost = _won_lost(learner, node, cell)
                tally = f"{won} | {games - won - lost:.0f} | {lost}"
            print(f"| {node.moves} | {node.cell_text(cell)}{' (best)' if cell == best else ''} "
                  f"| {games:.0f} | {tally} "
                  f"| {score / games:.2f} | {plies / games:.1f} |")
    if args.by_player:
        print("\nBy X player, the best arm of each first-move node (O won-drawn-lost):")
        for key in [k for k, n in learner.nodes.items() if len(n.moves.split()) == 1]:
            node = learner.nodes[key]
            for cell in node.arms:
                if not node.arms[cell][0]:
                    continue
                row: dict[str, list[int]] = {}
                for game in _games_with(learner, node, cell):
                    counts = row.setdefault(game["x"], [0, 0, 0])
                    counts[{1: 0, None: 1, 0: 2}[game["winner"]]] += 1
                print(f"  {node.moves} {node.cell_text(cell)}: "
                      + "; ".join(f"{x} {w}-{d}-{lost}" for x, (w, d, lost) in sorted(row.items())))


def _games_with(learner: Learner, node: Node, cell: int) -> list[dict]:
    out = []
    depth = len(node.moves.split())
    for game in learner.games:
        moves = game["moves"].split()
        if len(moves) <= depth:
            continue
        board = Board.from_notation(VARIANT, " ".join(moves[:depth]))
        key, sym = canonical_frame(board)
        if key_text(key) in learner.nodes and learner.nodes[key_text(key)] is node and \
                sym[parse_cell(moves[depth], board.geometry)] == cell:
            out.append(game)
    return out


def _won_lost(learner: Learner, node: Node, cell: int) -> tuple[int, int]:
    games = _games_with(learner, node, cell)
    return sum(g["winner"] == 1 for g in games), sum(g["winner"] == 0 for g in games)


def cmd_write(args: argparse.Namespace, learner: Learner) -> None:
    book = book_for(VARIANT)
    book = type(book)(book.geometry, book.entries, book.kinds)
    for key, node in learner.nodes.items():
        if sum(arm[0] for arm in node.arms.values()) < args.min_games:
            continue
        x, o = (int(part, 16) for part in key.split())
        book.add(board_of(book.geometry, (x, o)), node.best(), HOLD)
        print(f"{node.moves}: {node.cell_text(node.best())}")
    print(f"written to {book.save(args.path)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, required=True, help="the arms' games (JSON)")
    sub = parser.add_subparsers(dest="what", required=True)
    learn = sub.add_parser("learn")
    learn.add_argument("--minutes", type=float, default=20.0, help="no new game after this")
    learn.add_argument("--games", type=int, default=100_000)
    learn.add_argument("--jobs", type=int, default=2)
    learn.add_argument("--seed", type=int, default=1000, help="not a seed of the measures")
    learn.add_argument("--train", nargs="+", default=[f"{s}@{t}" for s, t in TRAIN],
                       help="X players, SPEC@SECONDS")
    learn.add_argument("--o-spec", default="master")
    learn.add_argument("--o-time", type=float, default=0.15)
    learn.add_argument("--share", type=float, default=0.67, help="share of games on 1a1")
    learn.add_argument("--c", type=float, default=0.4, help="UCB1 exploration")
    learn.add_argument("--deep", type=int, default=0,
                       help="a ply-3 position met this often becomes a node (0: never)")
    learn.add_argument("--arms", type=int, default=6)
    learn.add_argument("--think", type=float, default=1.0)
    learn.add_argument("--by-player", action="store_true")
    report = sub.add_parser("report")
    report.add_argument("--by-player", action="store_true")
    write = sub.add_parser("write")
    write.add_argument("path", type=Path)
    write.add_argument("--min-games", type=int, default=20)
    args = parser.parse_args()
    warm_up(sparring=True)
    learner = Learner(args.state)
    {"learn": cmd_learn, "report": cmd_report, "write": cmd_write}[args.what](args, learner)


if __name__ == "__main__":
    main()
