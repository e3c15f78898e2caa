"""Grow the opening book with positions the proof-number solver proves for the side to move.

Six modes:

- ``games``: play master games (self-play and against the seed players), collect the
  positions the first player meets, and prove the ones the online threat search does not
  already win; every proved position gets its winning move in the book.
- ``defence``: for the second player, who loses with best play, choose moves that make the
  first player's win as hard to find as we can: at every position O meets up to ``--max-ply``
  (every X move up to symmetry through ``--full-ply``, then positions from games against the
  seed players and the master), the search ranks O's moves, the solver tries to prove X's win
  after each of the best ``--candidates`` within ``--nodes``, and the move whose proof is
  hardest (not found, highest proof number) goes in the book as a ``hold`` entry.
- ``learn``: book learning for the second player from lost games: rounds of games of the
  attackers (as X) against the master (as O); after each loss the solver finds the first O
  move it proves lost, and the best-ranked O move there that it cannot refute goes in the book
  (before ``--trust-ply``, only if it also loses fewer trial games from there than the old
  move). Rounds go on until one loses no game.
- ``exact``: book learning without sampling, against a searching seed player that breaks ties
  at random: every game it can play against the master as O is walked
  (``engine.players.exact_match.exact_match``), and where the likeliest lost games went wrong, the
  old O move and the solver-sound alternatives are each followed through every game from there;
  the one least likely to lose goes in the book. Each walk's moves of the defender before
  ``--freeze`` plies go in the book as they were played, so that the next walk meets the
  same opening whatever the time limit makes of the search. Rounds go on until no game is
  lost.
- ``try``: weigh second-player moves in one position before booking one by hand: for each,
  whether the solver refutes it, how many of ``--games`` games the ``--attacker`` wins
  against the master from there, and (with ``--walk SPEC``) the master's exact chance of
  losing every game that searcher can play from there.
- ``tree``: walk the first player's strategy from a root position breadth-first: prove the
  first player's position, store the proving move, and queue every reply of the second
  player (one per symmetry class). Positions the solver cannot prove within the budget are
  listed as open; when none is left, the root is proved and the book is the strategy.

    .venv/bin/python bench/research/build_book.py games --games 20 --seconds 30
    .venv/bin/python bench/research/build_book.py defence --full-ply 3 --max-ply 9 --games 40
    .venv/bin/python bench/research/build_book.py --seconds 20 learn --fresh --match-seed 7 \\
        --seeds 40
    .venv/bin/python bench/research/build_book.py --seconds 10 exact --time 0.1 --lines 8
    .venv/bin/python bench/research/build_book.py --seconds 20 try \\
        "1a1 1d4 4d4 4d1 1a4 3c3 4a1" 1a3 3a2 --attacker level7 --games 4 --walk bogenschutz
    .venv/bin/python bench/research/build_book.py tree --root "1a1 2b2 1d4 1b2 3b2 2c3 4d1" \\
        --seconds 60

The book is written to engine/data/book_<variant>.txt (merged with what is there). One tool
that reads best whole (about 600 lines): its subcommands share the walk, the solver's budget
and the book's merge.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine import Board, Cell, format_cell, parse_cell  # noqa: E402
from engine.kernels.deepening import Master  # noqa: E402
from engine.kernels.solver import Solver  # noqa: E402
from engine.kernels.threats import threat_win  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.players.arena import ArenaGame, match_game, play_game  # noqa: E402
from engine.players.exact_match import chances_after, exact_match  # noqa: E402
from engine.players.master import root_moves  # noqa: E402
from engine.solved.book import HOLD, PRACTICAL, Book, Key, board_of, book_for, canonical_frame  # noqa: E402
from engine.warm import warm_up  # noqa: E402


def prove_into(book: Book, solver: Solver, board: Board, seconds: float) -> bool | None:
    """Prove ``board`` for the side to move and store its winning move; True if proved,
    False if disproved, None if the budget ran out."""
    proof = solver.prove(board, seconds=seconds)
    if proof.proved:
        move = solver.winning_move(board)
        if move is not None:
            book.add(board, move)
            return True
    return False if proof.disproved else None


def cmd_games(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    opponents = ["master", "bogenschutz", "rubinoff:eval=eval2,depth=4", "wood", "freeness"]
    seen: set[tuple[int, int]] = set()
    for game in range(args.games):
        spec_o = opponents[game % len(opponents)]
        players = (make_player("master", seed=game), make_player(spec_o, seed=game + 1))
        board = Board(args.variant)
        while board.outcome() is None:
            if board.turn == 0 and board.ply >= args.min_ply:
                key, _ = canonical_frame(board)
                if key not in seen and book.move(board) is None and threat_win(board) is None:
                    seen.add(key)
                    result = prove_into(book, solver, board, args.seconds)
                    print(f"game {game} ply {board.ply}: {result} ({len(book)} in book)",
                          flush=True)
            board.push(players[board.turn].decide(board, Limit(time=args.time)).move)
        book.save()


def defend(book: Book, solver: Solver, master: Master, board: Board,
           args: argparse.Namespace) -> Cell | None:
    """Put a ``hold`` move for ``board`` (the defender to move) in the book; returns it, or
    None when the solver proved the attacker's win after every candidate."""
    thought = master.think(board, deadline=time.perf_counter() + args.think,
                           root_moves=root_moves(board, 0.0))
    if thought.proved and thought.score > 0:
        return None  # the defender wins here: not a position for a defence
    best: tuple[int, int, Cell] | None = None
    report = []
    for rank, cell in enumerate((thought.ranking or [thought.move])[:args.candidates]):
        board.push(cell)
        proof = solver.prove(board, nodes=args.nodes)
        board.pop()
        report.append(f"{format_cell(cell, board.geometry)}:"
                      f"{'lost' if proof.proved else proof.pn}")
        if not proof.proved and (best is None or (proof.pn, -rank) > best[:2]):
            best = (proof.pn, -rank, cell)
    move = best[2] if best is not None else None
    print(f"ply {board.ply} {board.notation()!r}: {' '.join(report)} -> "
          f"{format_cell(move, board.geometry) if move is not None else 'all lost'}",
          flush=True)
    if move is not None:
        book.add(board, move, HOLD)
        book.save()
    return move


def cmd_defence(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    started = time.perf_counter()
    master = Master(book.geometry)
    defender = 1

    def needs(board: Board) -> bool:
        return (board.turn == defender and board.ply <= args.max_ply
                and board.outcome() is None and book.move(board) is None
                and threat_win(board) is None and threat_win(board, side=defender ^ 1) is None)

    # every attacker move up to symmetry, through --full-ply, the defence from the book
    frontier = [Board(args.variant)]
    while frontier and time.perf_counter() - started < args.total:
        board = frontier.pop(0)
        if board.turn == defender:
            if needs(board):
                defend(book, solver, master, board, args)
            move = book.move(board)
            if move is not None and board.ply + 1 < args.full_ply:
                child = board.copy()
                child.push(move)
                frontier.append(child)
        else:
            for cell in root_moves(board, 0.0):
                child = board.copy()
                child.push(cell)
                if child.ply <= args.full_ply and child.outcome() is None:
                    frontier.append(child)
    # then the attacker's plausible moves: what the papers' searchers and a 3-ply master (with
    # --x-seeds seeds each) play in every defended position so far, breadth first
    attackers = ["bogenschutz", "rubinoff:eval=eval2,depth=4", "master:depth=3"]
    queue = book.positions(defender)
    while queue and args.x_seeds and time.perf_counter() - started < args.total:
        board = queue.pop(0)
        move = book.move(board)
        if move is None or board.ply + 2 > args.max_ply:
            continue
        board.push(move)
        replies = set()
        for spec in attackers:
            for seed in range(args.x_seeds):
                if board.outcome() is None:
                    replies.add(make_player(spec, seed).decide(board, Limit(time=args.time)).move)
        for reply in sorted(replies):
            child = board.copy()
            child.push(reply)
            if needs(child):
                defend(book, solver, master, child, args)
            if book.move(child) is not None:
                queue.append(child)
    # then the positions the defender meets in games, the book growing as they go
    opponents = ["bogenschutz", "rubinoff:eval=eval2,depth=4", "master", "rubinoff:depth=3",
                 "wood", "freeness", "level6", "level7"]
    for game in range(args.games):
        if time.perf_counter() - started > args.total:
            break
        players = (make_player(opponents[game % len(opponents)], seed=game),
                   make_player("master", seed=game))
        board = Board(args.variant)
        while board.outcome() is None and board.ply <= args.max_ply:
            if needs(board):
                defend(book, solver, master, board, args)
            board.push(players[board.turn].decide(board, Limit(time=args.time)).move)
    holds = len(book.kinds)
    print(f"done: {holds} defences in the book ({time.perf_counter() - started:.0f} s)")


def fork_pool(jobs: int) -> ProcessPoolExecutor:
    """Worker processes forked from this one, so they start with the book as it is now."""
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))


def play_round(attackers: list[str], seeds: range,
               args: argparse.Namespace) -> list[tuple[str, ArenaGame]]:
    """The games of one round, with their attackers: each attacker as X against the master as
    O, one game per seed (game ``2 * seed + 1`` of a seeded match, as
    bench/research/engine_strength.py plays it), spread over ``--jobs`` processes."""
    limit = Limit(time=args.time)
    with fork_pool(args.jobs) as pool:
        futures = [(spec, pool.submit(match_game, args.defender, spec, 2 * seed + 1,
                                      args.variant, args.match_seed, limit))
                   for spec in attackers for seed in seeds]
        return [(spec, future.result()) for spec, future in futures]


def trial_game(attacker: str, defender: str, moves: list[Cell], args: argparse.Namespace,
               seed: int) -> bool:
    """Whether ``attacker`` (X) beats ``defender`` (O) from the position after ``moves``."""
    board, _ = play_game(make_player(attacker, seed), make_player(defender, seed + 1),
                         args.variant, Limit(time=args.time), start=Board(args.variant, moves))
    outcome = board.outcome()
    return outcome is not None and outcome.winner == 0


def trial(attacker: str, moves: list[Cell], args: argparse.Namespace) -> int:
    """Games lost by the defender in ``--trials`` games from the position after ``moves``."""
    with fork_pool(args.jobs) as pool:
        return sum(pool.map(partial(trial_game, attacker, args.defender, moves, args),
                            range(1000, 1000 + args.trials)))


def mend_points(solver: Solver, moves: list[Cell],
                args: argparse.Namespace) -> tuple[list[str], list[tuple[int, Board]]] | str:
    """For a lost game: the log, begun with the first O move the solver proves lost (within
    ``--seconds``), and O's positions to mend as (ply, board), from that move back to O's
    first; or why there is none to mend."""
    blunder = solver.losing_ply(moves, 1, args.seconds)
    if blunder is None:
        return "no losing move proved"
    if blunder > args.max_ply:
        return f"lost by ply {blunder + 1}: past the book's plies"
    header = f"lost by ply {blunder + 1} ({format_cell(moves[blunder], solver.geometry)})"
    return [header], [(ply, Board(args.variant, moves[:ply])) for ply in range(blunder, 0, -2)]


def ranked(master: Master, board: Board, args: argparse.Namespace) -> list[Cell]:
    """The side to move's moves, best first, by ``--think`` seconds of search."""
    thought = master.think(board, deadline=time.perf_counter() + args.think,
                           root_moves=root_moves(board, 0.0))
    return thought.ranking or [thought.move]


def refuted_after(solver: Solver, board: Board, cell: Cell, seconds: float,
                  known: set[tuple[Key, Key]] | None = None) -> bool:
    """Whether the solver proves X's win after O plays ``cell`` on ``board`` (or ``known``
    holds that (position, position after) pair already; a refuted pair is added to it)."""
    key = canonical_frame(board)[0]
    board.push(cell)
    after = canonical_frame(board)[0]
    lost = (known is not None and (key, after) in known) or (
        board.winning_line is None and solver.prove(board, attacker=0, seconds=seconds).proved)
    board.pop()
    if lost and known is not None:
        known.add((key, after))
    return lost


def learn_from(book: Book, solver: Solver, master: Master, attacker: str, moves: list[Cell],
               refuted: set[tuple[Key, Key]], args: argparse.Namespace) -> str:
    """Mend the book after a game the defender lost as O. The first O move the solver proves
    lost gives way to the best-ranked O move there that the solver cannot refute (nor was
    refuted before); when every candidate is refuted, the O move before it is changed
    instead. Early in the game (before ``--trust-ply``), where a position is met in many
    lines, and for that earlier move, the new move must also lose fewer ``--trials`` games
    against the attacker than the old one; when both lose a quarter of them or more, the O
    move before is looked at. Returns what was done, for the log."""
    found = mend_points(solver, moves, args)
    if isinstance(found, str):
        return found
    log, points = found
    blunder = points[0][0]
    geometry = book.geometry
    for ply, before in points:
        key, _ = canonical_frame(before)
        if ply == blunder:
            refuted.add((key, canonical_frame(Board(args.variant, moves[:ply + 1]))[0]))
        tried = []
        for cell in ranked(master, before, args)[:args.candidates]:
            if cell == moves[ply]:
                continue
            lost = refuted_after(solver, before, cell, args.seconds / 4, refuted)
            tried.append(format_cell(cell, geometry) + ("x" if lost else ""))
            if lost:
                continue
            log.append(f"after {before.notation()!r}: {' '.join(tried)}")
            trusted = ply == blunder and ply >= args.trust_ply
            if not trusted:
                old = trial(attacker, moves[:ply + 1], args)
                new = trial(attacker, moves[:ply] + [cell], args)
                log.append(f"(trials: {old} lost before, {new} after)")
                if new >= old and 4 * old < args.trials:
                    return " ".join(log + ["kept"])
            if trusted or new < old:
                book.add(before, cell, HOLD)
                return " ".join(log)
            break  # a quarter or more of the trials lost either way: look one move earlier
        else:
            log.append(f"after {before.notation()!r}: {' '.join(tried)} all refuted;")
    return " ".join(log)


def cmd_learn(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    """Book learning: play rounds of games against the attackers; mend the book after every
    loss (``learn_from``) and start the next round, until a round is lost by none."""
    started = time.perf_counter()
    master = Master(book.geometry)
    refuted: set[tuple[Key, Key]] = set()  # (position, position after) pairs
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.fresh:  # in place: the master players share this book object
        book.entries.clear()
        book.kinds.clear()
        book.max_ply = -1
    for round_number in range(1, args.rounds + 1):
        records = play_round(args.attackers, seeds, args)
        lost = [(spec, record) for spec, record in records if record.winner == "b"]
        print(f"round {round_number}: {len(lost)} of {len(records)} games lost "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
        if not lost or time.perf_counter() - started > args.total:
            break
        for spec, record in lost:
            print("  " + learn_from(book, solver, master, spec,
                                    [m.cell for m in record.moves], refuted, args), flush=True)
        book.save()
    print(f"done: {len(book)} positions in the book ({time.perf_counter() - started:.0f} s)")


def follows_book(book: Book, moves: list[Cell], side: int) -> bool:
    """Whether ``side``'s moves in a game are the book's, wherever the book has a move (up to
    the symmetries of the position)."""
    board = Board(book.geometry, [])
    for cell in moves:
        if board.turn == side:
            move = book.move(board)
            if move is not None:
                board.push(move)
                ours = canonical_frame(board)[0]
                board.pop()
                board.push(cell)
                if canonical_frame(board)[0] != ours:
                    return False
                continue
        board.push(cell)
    return True


def subtree_loss(args: argparse.Namespace, moves: list[Cell]) -> float:
    """The defender's exact chance to lose every game the attacker can play after ``moves``."""
    found, _ = chances_after(args.defender, args.attacker, Limit(time=args.time), 1,
                             Board(args.variant, moves))
    return found.loss


def mend_exactly(book: Book, solver: Solver, master: Master, moves: list[Cell],
                 refuted: set[tuple[Key, Key]], args: argparse.Namespace) -> str:
    """Mend the book after a game the defender (O) loses in the exact walk: at the first O
    move the solver proves lost, the old move and the best-ranked ``--candidates`` that the
    solver cannot refute are each followed through every game the attacker can play from
    there; the one with the least chance to lose goes in the book (the master's ranking breaks
    ties). When none does better than the old move, the O move before it is looked at."""
    found = mend_points(solver, moves, args)
    if isinstance(found, str):
        return found
    log, points = found
    geometry = book.geometry
    for ply, before in points:
        tried = [moves[ply]]
        for cell in ranked(master, before, args):
            if len(tried) > args.candidates:
                break
            if cell != moves[ply] and not refuted_after(solver, before, cell,
                                                         args.seconds / 4, refuted):
                tried.append(cell)
        with fork_pool(args.jobs) as pool:
            losses = list(pool.map(partial(subtree_loss, args),
                                   [moves[:ply] + [cell] for cell in tried]))
        log.append(f"after {before.notation()!r}: " + " ".join(
            f"{format_cell(cell, geometry)} {loss:.2%}" for cell, loss in zip(tried, losses,
                                                                           strict=True)))
        best = min(range(len(tried)), key=lambda i: (losses[i], i))
        if losses[best] < losses[0]:
            book.add(before, tried[best], HOLD)
            return " ".join(log + [f"-> {format_cell(tried[best], geometry)}"])
    return " ".join(log + ["nothing better"])


def make_sound(book: Book, solver: Solver, master: Master, keys: list[Key],
               args: argparse.Namespace) -> bool:
    """Replace the booked moves at ``keys`` that the solver refutes within ``--seconds``/5 by
    the best-ranked move of the search that it cannot refute (among ``--candidates``), or
    leave the position to the search when there is none; with ``--keep-refuted``, keep them
    and mark them ``practical``. The next walk shows what that does
    to the games. Returns whether the book changed."""
    changed = False
    for key in keys:
        board = board_of(book.geometry, key)
        tried: list[Cell] = []
        ranking: list[Cell] | None = None  # searched once the booked move is refuted
        while True:
            cell = (book.entries[key] if ranking is None
                    else next((c for c in ranking if c not in tried), None))
            if cell is None or len(tried) > args.candidates:
                break
            tried.append(cell)
            if not refuted_after(solver, board, cell, args.seconds / 5):
                break
            if ranking is None:
                ranking = ranked(master, board, args)
        if ranking is None:
            continue  # the booked move stands
        if args.keep_refuted:
            book.kinds[key] = PRACTICAL
            print(f"  refuted after {board.notation()}: {tried[0]}; kept as practical",
                  flush=True)
            book.save()
            continue
        changed = True
        log = " ".join(format_cell(c, book.geometry) for c in tried)
        if cell is None or len(tried) > args.candidates:
            del book.entries[key]
            book.kinds.pop(key, None)
            print(f"  refuted after {board.notation()}: {log}; left to the search", flush=True)
        else:
            book.add(board, cell, HOLD)
            print(f"  refuted after {board.notation()}: {log} (booked)", flush=True)
        book.save()
    return changed


def cmd_try(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    """Weigh the second player's candidate moves in one position (see the module docstring)."""
    before = Board.from_notation(args.variant, args.position)
    for text in args.moves:
        moves = list(before.moves) + [parse_cell(text, before.geometry)]
        refuted = refuted_after(solver, before, moves[-1], args.seconds, set())
        with fork_pool(args.jobs) as pool:
            lost = sum(pool.map(partial(trial_game, args.attacker, args.defender, moves, args),
                                range(args.games)))
        line = (f"{text}: {'refuted' if refuted else 'not refuted'} in {args.seconds:g} s; "
                f"{args.attacker} won {lost} of {args.games}")
        if args.walk:
            found, decisions = chances_after(args.defender, args.walk, Limit(time=args.time), 1,
                                             Board(args.variant, moves))
            line += (f"; every {args.walk} game: won {found.win:.2%}, drawn {found.draw:.2%}, "
                     f"lost {found.loss:.2%} ({len(decisions)} positions)")
        print(line, flush=True)


def cmd_exact(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    """Book learning from every game: walk every game the attacker (a searching player that
    breaks ties at random) can play against the defender as O, mend the book where the likeliest
    lost games went wrong (``mend_exactly``), and walk again, until no game is lost. The
    defender's opening moves are booked as played, except where the solver refutes them
    (``make_sound``)."""
    started = time.perf_counter()
    master = Master(book.geometry)
    refuted: set[tuple[Key, Key]] = set()
    checked: set[tuple[Key, Cell]] = set()  # booked moves the solver did not refute
    for round_number in range(1, args.rounds + 1):
        found, decisions = exact_match(args.defender, args.attacker, 1,
                                       Limit(time=args.time), jobs=args.jobs, split=args.split)
        print(f"round {round_number}: lost {found.loss:.3%} won {found.win:.3%} "
              f"({len(decisions)} positions, {len(found.lost)} lost games, "
              f"{time.perf_counter() - started:.0f} s)", flush=True)
        opening = {key: cell for key, cell in decisions.items()
                   if key[0].bit_count() + key[1].bit_count() < args.freeze
                   and key not in book.entries}
        for key, cell in opening.items():
            book.add(board_of(book.geometry, key), cell, HOLD)
        book.save()
        print(f"  {len(opening)} of the defender's moves before ply {args.freeze + 1} "
              "booked as played", flush=True)
        unchecked = [key for key, cell in book.entries.items()
                     if key[0].bit_count() + key[1].bit_count() < args.freeze
                     and (key, cell) not in checked]
        changed = make_sound(book, solver, master, unchecked, args)
        checked.update(book.entries.items())
        if time.perf_counter() - started > args.total:
            break
        if not found.lost:
            if not changed:
                break  # the walk that lost nothing played the book as it is now: done
            continue
        likeliest = sorted(found.lost.items(), key=lambda e: -e[1])[:args.lines]
        for line, chance in likeliest:
            moves = Board.from_notation(args.variant, line).moves
            print(f"  {chance:.3%} {line}", flush=True)
            if not follows_book(book, moves, 1):
                print("    the book now leaves this game", flush=True)
                continue
            print("    " + mend_exactly(book, solver, master, moves, refuted, args), flush=True)
            book.save()
    print(f"done: {len(book)} positions in the book ({time.perf_counter() - started:.0f} s)")


def cmd_tree(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    root = Board.from_notation(args.variant, args.root)
    queue: deque[Board] = deque([root])
    seen: set[tuple[int, int]] = set()
    open_positions: list[str] = []
    started = time.perf_counter()
    while queue and time.perf_counter() - started < args.total:
        board = queue.popleft()
        key, _ = canonical_frame(board)
        if key in seen or threat_win(board) is not None:
            continue
        seen.add(key)
        move = book.move(board)
        if move is None:
            result = prove_into(book, solver, board, args.seconds)
            if not result:
                open_positions.append(board.notation())
                print(f"open ({result}): {board.notation()}", flush=True)
                continue
            move = book.move(board)
            assert move is not None
        board.push(move)
        if board.outcome() is None:
            for reply in root_moves(board, 0.0):
                child = board.copy()
                child.push(reply)
                if child.outcome() is None:
                    queue.append(child)
        print(f"{len(book)} in book, {len(queue)} queued, {len(open_positions)} open: "
              f"{board.notation()} ({format_cell(move, board.geometry)})", flush=True)
        book.save()
    print(f"done: {len(book)} in book, {len(queue)} still queued, {len(open_positions)} open")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="4x4x4")
    parser.add_argument("--seconds", type=float, default=30.0, help="solver budget a position")
    parser.add_argument("--tt-bits", type=int, default=22)
    sub = parser.add_subparsers(dest="mode", required=True)
    games = sub.add_parser("games")
    games.add_argument("--games", type=int, default=10)
    games.add_argument("--time", type=float, default=0.5, help="seconds a move in the games")
    games.add_argument("--min-ply", type=int, default=6)
    # the options of the modes that play games for the second player and rank its moves
    defending = argparse.ArgumentParser(add_help=False)
    defending.add_argument("--time", type=float, default=1.0, help="seconds a move in the games")
    defending.add_argument("--think", type=float, default=1.0, help="seconds to rank the moves")
    defending.add_argument("--total", type=float, default=3600.0, help="seconds in all")
    defence = sub.add_parser("defence", parents=[defending])
    defence.add_argument("--full-ply", type=int, default=3)
    defence.add_argument("--max-ply", type=int, default=9)
    defence.add_argument("--games", type=int, default=40)
    defence.add_argument("--candidates", type=int, default=6)
    defence.add_argument("--nodes", type=int, default=100_000, help="solver nodes a candidate")
    defence.add_argument("--x-seeds", type=int, default=0,
                         help="seeds of each attacker player whose moves are followed")
    learn = sub.add_parser("learn", parents=[defending])
    learn.add_argument("--attackers", nargs="+", default=["bogenschutz"])
    learn.add_argument("--defender", default="master", help="the player whose book it is")
    learn.add_argument("--first-seed", type=int, default=0, help="the attackers' first seed")
    learn.add_argument("--seeds", type=int, default=25, help="games a round per attacker")
    learn.add_argument("--match-seed", type=int, default=0, help="the seed of the match")
    learn.add_argument("--rounds", type=int, default=10)
    learn.add_argument("--fresh", action="store_true", help="start from an empty book")
    learn.add_argument("--jobs", type=int, default=2)
    learn.add_argument("--candidates", type=int, default=8)
    learn.add_argument("--max-ply", type=int, default=15, help="the last ply to mend")
    learn.add_argument("--trust-ply", type=int, default=6,
                       help="below this ply a new move must lose fewer --trials games")
    learn.add_argument("--trials", type=int, default=24, help="trial games a side")
    exact = sub.add_parser("exact", parents=[defending])
    exact.add_argument("--attacker", default="bogenschutz")
    exact.add_argument("--defender", default="master", help="the player whose book it is")
    exact.add_argument("--rounds", type=int, default=10)
    exact.add_argument("--lines", type=int, default=8, help="lost games mended a round")
    exact.add_argument("--jobs", type=int, default=2)
    exact.add_argument("--split", type=int, default=10,
                       help="see engine.players.exact_match.exact_match")
    exact.add_argument("--candidates", type=int, default=5)
    exact.add_argument("--max-ply", type=int, default=15, help="the last ply to mend")
    exact.add_argument("--keep-refuted", action="store_true",
                       help="keep booked moves the solver refutes, marked practical")
    exact.add_argument("--freeze", type=int, default=10,
                       help="book the defender's moves before this ply as played")
    trying = sub.add_parser("try")
    trying.add_argument("position", help='the moves before the second player\'s, "1a1 1d4 ..."')
    trying.add_argument("moves", nargs="+", help="the candidate moves")
    trying.add_argument("--attacker", default="level7")
    trying.add_argument("--defender", default="master")
    trying.add_argument("--games", type=int, default=4, help="games a candidate (seeds 0..)")
    trying.add_argument("--walk", default="", help="a tie-breaking searcher to walk, e.g. "
                        "bogenschutz")
    trying.add_argument("--time", type=float, default=1.0, help="seconds a move in the games")
    trying.add_argument("--jobs", type=int, default=2)
    tree = sub.add_parser("tree")
    tree.add_argument("--root", default="")
    tree.add_argument("--total", type=float, default=3600.0, help="seconds in all")
    args = parser.parse_args()
    warm_up(sparring=True)  # every kernel, before the pools fork and any move is timed
    book = book_for(args.variant)
    solver = Solver(book.geometry, tt_bits=args.tt_bits, tss_budget=500)
    {"games": cmd_games, "tree": cmd_tree, "defence": cmd_defence,
     "learn": cmd_learn, "exact": cmd_exact, "try": cmd_try}[args.mode](args, book, solver)


if __name__ == "__main__":
    main()
