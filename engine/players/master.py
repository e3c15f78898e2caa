"""The master: as X on 4x4x4, the proved strategy (:mod:`engine.solved.strategy`, proved by
:mod:`engine.solved.proof`) wherever it covers the position, with no search; otherwise threat-space
search inside PVS alpha-beta (see :mod:`engine.kernels.deepening`), the opening book
(:mod:`engine.solved.book`), and from ply 8 df-pn (:mod:`engine.kernels.solver`) to prove wins the
search does not see. As O on 4x4x4 where the proof has O lost and the book is silent, the reply that
makes X's win hardest (:mod:`engine.players.resistance`); elsewhere, when the search proves the game
lost, the time it leaves goes to setting a trap (:mod:`engine.players.traps`): the losing move whose
win is hardest to find.

With its default options it plays as strongly as we can make it within the time it is given.
Its options weaken it for the lower levels of the ladder: a depth cap, no threat search,
noise on the evaluation and a share of careless moves.
"""

from __future__ import annotations

import time

from engine.kernels.deepening import Master, SearchParams, Thought, mate_plies, wary_weights
from engine.kernels.solver import Solver
from engine.players.base import (
    Decision,
    Forced,
    Limit,
    Option,
    Player,
    parse_bool,
    parse_float,
    parse_int,
)
from engine.players.resistance import choose as choose_resistance
from engine.players.resistance import guard, refuted_alone
from engine.players.traps import TrapFinder
from engine.rules.board import Board, line_value
from engine.rules.geometry import Cell, Geometry
from engine.solved.book import book_at, book_for
from engine.solved.proof import strategy_height
from engine.solved.strategy import strategy_move, x_proved

SAFETY = 0.04  # seconds kept back from a time limit for the answer to travel
SYMMETRY_PLIES = 10  # below this many stones, root moves are reduced by symmetry
PROOF_PLY = 8  # from this many stones on, the time the search leaves goes to df-pn
PROOF_MIN = 0.05  # seconds: less than this left is not worth a proof attempt
PROOF_SHARE = 0.55  # the first player's search gets this share of the time, df-pn the rest
# (unless its threat search finds a win at the root: then it looks for a faster one instead)
PROOF_TT_BITS = 20  # the solver's table: 32 bytes an entry, kept between moves
PROOF_LOOKUP = 0.02  # seconds kept back to find the proved move in the solver's table
RESIST_SHARE = 0.8  # of a move's time, for ranking O's replies when the proof has O lost
GUARD_SHARE = 0.75  # of O's search time on 4x4x4 with guard on: the rest checks its choice
REPLAY = 0.2  # seconds: the most a replay of the proved strategy may take to confirm a move
WARY = 100  # the second player's search: percent on the side not to move's evaluation terms
QUICK_DEPTH = 2  # the deepest capped search ``quick`` tries, as plain Python ...
QUICK_SECONDS = 1.5  # ... for at most this long (levels 1-4 take 0.3 s at most)


class MasterPlayer(Player):
    """Iterative-deepening PVS with a transposition table and threat-space search.

    It answers with a proved result (``Decision.forced``) whenever the search proved one: a
    continuous-threat win, or a mate score of the full-width search.
    """

    name = "master"
    summary = "threat-space search + PVS alpha-beta with a transposition table; proves wins"
    options = {
        "depth": Option(parse_int(1, 64), 64, "maximum depth of the main search"),
        "time": Option(parse_float(0.01, 3600.0, " seconds"), 1.0,
                       "seconds a move if the limit has none"),
        "tss": Option(parse_bool, True, "threat-space search on/off"),
        "noise": Option(parse_int(0, 1_000_000), 0, "noise amplitude on the evaluation"),
        "careless": Option(parse_int(0, 100), 0, "percent of moves played at random"),
        "book": Option(parse_bool, True, "play the opening book's proved moves"),
        "bookfile": Option(str, "", "another book file (a path) instead of the shipped one: "
                           "for measuring a candidate book (bench/learn_o_book.py)"),
        "leaf": Option(parse_int(0, 1_000_000), 300, "threat-search nodes at a leaf"),
        "inner": Option(parse_int(0, 1_000_000), 4000, "threat-search nodes at an inner node"),
        "prove": Option(parse_bool, True,
                        "spend the time the search leaves on a df-pn proof (no depth cap only)"),
        "iterate": Option(parse_int(1, 100), 50,
                          "percent of the time after which the search starts no new "
                          "iteration"),
        "traps": Option(parse_bool, True,
                        "when the search proves the game lost, play the losing move whose win "
                        "is hardest to find (no depth cap only)"),
        "proof": Option(parse_bool, True,
                        "as X on 4x4x4, play the proved strategy (engine/solved/proof.py) at "
                        "once on the proof's tree (no depth cap only)"),
        "resist": Option(parse_bool, True,
                         "as O on 4x4x4 in a position the proof has lost, play the reply "
                         "that makes X's win hardest (engine/players/resistance.py: the proof's "
                         "longest line, then X's fewest winning replies, then traps; no "
                         "depth cap only)"),
        "bookfirst": Option(parse_bool, True,
                            "with resist on, the opening book's move where the book has one, "
                            "and the resistance only where it is silent (off: the "
                            "resistance from O's first move)"),
        "guard": Option(parse_bool, True,
                        "as O on 4x4x4 off the proof's tree, play the search's best reply "
                        "that the proof's tree does not refute two plies down "
                        "(engine/players/resistance.py: guard; no depth cap only)"),
        "bookguard": Option(parse_bool, False,
                            "with guard on, search and guard instead of playing a book move "
                            "the proof's tree refutes where it does not refute every reply "
                            "(engine/players/resistance.py: refuted_alone); off: it did "
                            "worse against the held-out programs than the book's moves "
                            "(docs/benchmarks.md)"),
        "wary": Option(parse_int(0, 1000), WARY,
                       "as the second player, percent on the evaluation terms of the side "
                       "not to move"),
    }

    def __init__(self, seed: int = 0, **settings: object) -> None:
        super().__init__(seed, **settings)
        self._masters: dict[tuple[str, int], Master] = {}
        self._solvers: dict[str, Solver] = {}
        self._traps: dict[str, TrapFinder] = {}

    def master(self, geometry: Geometry, side: int = 0) -> Master:
        """The search (and its tables, kept between moves) for one board and side: the second
        player's evaluation weighs the lines, threats and forks of the side not to move at
        ``wary`` percent (a knob for experiments: 200 did not make a better second player,
        docs/benchmarks-history.md, "The master as O, continued")."""
        found = self._masters.get((geometry.name, side))
        if found is None:
            params = SearchParams(
                noise=int(self.settings["noise"]), salt=self.seed,
                tss_leaf=int(self.settings["leaf"]), tss_interior=int(self.settings["inner"]),
                weights=wary_weights(int(self.settings["wary"]) if side else 100),
                iterate=int(self.settings["iterate"]),
            )
            if not self.settings["tss"]:
                params.tss_interior = params.tss_leaf = params.tss_root = 0
            found = Master(geometry, params=params)
            self._masters[geometry.name, side] = found
        return found

    def solver(self, geometry: Geometry) -> Solver:
        """The df-pn solver (its table kept between moves) for one board."""
        found = self._solvers.get(geometry.name)
        if found is None:
            found = Solver(geometry, tt_bits=PROOF_TT_BITS)
            self._solvers[geometry.name] = found
        return found

    def _decide(self, board: Board, limit: Limit) -> Decision:
        decision = self._choose(board, limit, quick=False)
        assert decision is not None  # only the quick path gives up
        return decision

    def quick(self, board: Board) -> Decision | None:
        """The move :meth:`decide` makes here, when it comes without a compiled kernel or a
        clock: the proved strategy's move (as X on 4x4x4; its "win in N" only when the
        replay that counts it is done within its time), the opening book's, a careless
        move, or a search with a depth cap of at most :data:`QUICK_DEPTH` that reaches the
        cap within :data:`QUICK_SECONDS` (as plain Python), and that, with the threat search
        on, starts where the side to move has no threat to make (the root's threat search,
        whose budget is the clock's, then finds nothing at once; the threat searches inside
        the tree count nodes, not time). The compiled search reaches those caps well within a
        move's time, so the move is the same. None where ``decide`` would search against the
        clock (no depth cap), rank O's replies with the proof's compiled look-ups, or where
        the cap is not reached in time (see :meth:`engine.players.base.Player.quick`)."""
        super().quick(board)
        return self._choose(board.copy(), Limit(), quick=True)

    def _choose(self, board: Board, limit: Limit, *, quick: bool) -> Decision | None:
        """``decide``'s steps in order; with ``quick``, None at the first step that needs a
        compiled kernel or the clock."""
        started = limit.start()
        rng = self.rng(board)
        moves = board.legal_moves
        cell: Cell | None
        if self.settings["proof"] and self.settings["depth"] == 64 and limit.depth is None:
            played = _proved_move(board)
            if played is not None:
                cell, plies = played
                return Decision(move=cell, elapsed=time.perf_counter() - started,
                                forced=None if plies is None else Forced("win", plies))
        book = self._book_move(board, limit)
        if (self.settings["resist"] and self.settings["depth"] == 64 and limit.depth is None
                and not (self.settings["bookfirst"] and book is not None)):
            if quick:
                return None
            budget = limit.time if limit.time is not None else float(self.settings["time"])
            finder = self.trap_finder(board.geometry) if self.settings["traps"] else None
            resisted = choose_resistance(board, started + RESIST_SHARE * budget, finder)
            if resisted is not None:
                chosen = resisted[0]
                return Decision(move=chosen.move, elapsed=time.perf_counter() - started,
                                forced=Forced("loss", chosen.plies))
        forced_moves = _forced_moves(board)
        if forced_moves is not None:
            moves = forced_moves
        elif self.settings["careless"] and rng.randrange(100) < self.settings["careless"]:
            return Decision(move=rng.choice(moves), elapsed=time.perf_counter() - started)
        if forced_moves is None and book is not None:
            return Decision(move=book, elapsed=time.perf_counter() - started)
        seconds = limit.time
        if seconds is None and limit.depth is None:
            seconds = float(self.settings["time"])
        deadline = started + max(seconds - SAFETY, 0.001) if seconds else 0.0
        depth = min(limit.depth or 64, int(self.settings["depth"]))
        if quick:
            if depth > QUICK_DEPTH or (self.settings["tss"] and _threat_to_make(board)):
                return None
            deadline = started + QUICK_SECONDS
        if forced_moves is None:
            moves = root_moves(board, rng.random())
        master = self.master(board.geometry, board.turn)
        proving = (bool(deadline) and self.settings["prove"] and depth == 64
                   and board.ply >= PROOF_PLY)
        guarding = (bool(deadline) and self.settings["guard"] and depth == 64
                    and board.turn == 1 and forced_moves is None and len(moves) > 1
                    and board.geometry.name == "4x4x4")
        thought = master.think(
            board, deadline=deadline, max_depth=depth, stop=limit.stop, root_moves=moves,
            share=(PROOF_SHARE if proving and board.turn == 0
                   else GUARD_SHARE if guarding else 1.0),
        )
        if quick and not (time.perf_counter() < deadline and (
                thought.proved or thought.depth >= min(depth, board.empty.bit_count()))):
            return None  # the cap not reached, or a threat search cut short by the deadline
        if guarding and not thought.proved:
            self._guard(board, deadline, thought)
        if proving and not thought.proved and (board.turn == 0 or thought.score >= 0):
            proved = self._prove(board, deadline, limit, thought)
            if proved is not None:
                thought.move, thought.pv = proved, (proved,)
        elif (thought.proved and thought.score < 0 and self.settings["traps"] and deadline
              and depth == 64 and len(moves) > 1):
            self._set_trap(board, deadline, thought)
        return _decision(thought, time.perf_counter() - started)

    def book_move(self, board: Board) -> Cell | None:
        """The opening book's move here (the shipped book or ``bookfile``), or None (also
        with ``book=off``)."""
        if not self.settings["book"]:
            return None
        path = str(self.settings["bookfile"])
        book = book_at(path, board.geometry.name) if path else book_for(board.geometry.name)
        return book.move(board)

    def _book_move(self, board: Board, limit: Limit) -> Cell | None:
        """The book's move as the master plays it: with ``bookguard``, none where the master
        guards (O on 4x4x4, no depth cap) and the proof's tree refutes the book's move but not
        every reply (:func:`engine.players.resistance.refuted_alone`): O then searches and
        guards as off the book (a refuted reply is a loss X may know or find, whoever chose
        it)."""
        cell = self.book_move(board)
        if (cell is not None and self.settings["bookguard"] and self.settings["guard"]
                and self.settings["depth"] == 64
                and limit.depth is None and refuted_alone(board, cell)):
            return None
        return cell

    def trap_finder(self, geometry: Geometry) -> TrapFinder:
        """The trap model (its small tables kept between moves) for one board."""
        finder = self._traps.get(geometry.name)
        if finder is None:
            finder = self._traps[geometry.name] = TrapFinder(geometry)
        return finder

    def _set_trap(self, board: Board, deadline: float, thought: Thought) -> None:
        """Lost: the time the search left goes to choosing the losing move whose win is
        hardest for the opponent to find (:mod:`engine.players.traps`)."""
        finder = self.trap_finder(board.geometry)
        ranking = thought.ranking or [thought.move]
        move, _ = finder.choose(board, ranking, thought.scores, deadline - PROOF_LOOKUP)
        if move != thought.move:
            thought.move, thought.pv = move, (move,)
            thought.score = thought.scores.get(move, thought.score)

    def _guard(self, board: Board, deadline: float, thought: Thought) -> None:
        """O off the proof's tree: the search's best reply that the proof's tree does not
        prove lost two plies down (:func:`engine.players.resistance.guard`), when its best is."""
        ranking = [thought.move] + [cell for cell in thought.ranking if cell != thought.move]
        refused = {cell for cell, score in thought.scores.items()
                   if score < 0 and mate_plies(score) is not None}
        cell = guard(board, ranking, refused, deadline)
        if cell is not None:
            thought.move, thought.pv = cell, (cell,)
            thought.score = thought.scores.get(cell, thought.score)

    def _prove(self, board: Board, deadline: float, limit: Limit,
               thought: Thought) -> Cell | None:
        """A move after which the side to move is proved to win, by df-pn until ``deadline``,
        or None.

        The search proves the wins it sees with its threat search and its mate scores; df-pn
        proves wins that need quiet moves deeper than that (Allis 1994), and its table,
        kept between moves, carries the work on. The first player (whose win the game is)
        gives it the search's last ``1 - PROOF_SHARE`` of the time; the second player only
        the time its search left, and only when the search does not rate it behind."""
        if deadline - time.perf_counter() < PROOF_MIN + PROOF_LOOKUP:
            return None
        solver = self.solver(board.geometry)  # about 40 ms to make, the first time
        seconds = deadline - PROOF_LOOKUP - time.perf_counter()
        if seconds < PROOF_MIN:
            return None
        proof = solver.prove(board, seconds=seconds, stop=limit.stop)
        thought.tss_nodes += proof.nodes + proof.tss_nodes  # reported with the search's
        return solver.proved_child(board) if proof.proved else None


def _decision(thought: Thought, elapsed: float) -> Decision:
    forced = None
    plies = mate_plies(thought.score)
    if thought.proved and plies is not None:
        forced = Forced("win" if thought.score > 0 else "loss", plies)
    return Decision(
        move=thought.move,
        score=thought.score,
        depth=thought.depth,
        nodes=thought.nodes + thought.tss_nodes,
        evaluations=thought.evaluations,
        pv=thought.pv,
        elapsed=elapsed,
        forced=forced,
    )


def _proved_move(board: Board) -> tuple[Cell, int | None] | None:
    """X's move by the proved strategy, when the position is one the proof proved, and the
    plies to the win along it when a replay of the strategy (no search) finds them within
    :data:`REPLAY` seconds; None elsewhere."""
    cell = strategy_move(board)
    if cell is None or not x_proved(board):
        return None
    return cell, strategy_height(board, REPLAY)


def _forced_moves(board: Board) -> list[Cell] | None:
    """The only moves worth searching when a line is one stone from done: the wins, or the
    block of the opponent's single win cell; None when the position is not forcing."""
    mine = _win_cells(board, board.turn)
    if mine:
        return mine
    theirs = _win_cells(board, board.turn ^ 1)
    return theirs if len(theirs) == 1 else None


def _threat_to_make(board: Board) -> bool:
    """Whether the side to move has a line holding n-2 of its stones or more and none of the
    opponent's: a move that makes a threat (n-1 in a line)."""
    me, them = board.stones[board.turn], board.stones[board.turn ^ 1]
    need = board.geometry.n - 2
    return any(not m & them and (m & me).bit_count() >= need for m in board.geometry.line_masks)


def _win_cells(board: Board, side: int) -> list[Cell]:
    g = board.geometry
    me, them = board.stones[side], board.stones[side ^ 1]
    return sorted({
        (m & ~me).bit_length() - 1 for m in g.line_masks
        if not m & them and (m & ~me).bit_count() == 1
    })


def root_moves(board: Board, shuffle: float) -> list[Cell]:
    """The legal moves, one per class of moves equivalent under the symmetries that fix the
    position (early in the game), in a seeded order."""
    moves = board.legal_moves
    if board.ply < SYMMETRY_PLIES:
        g = board.geometry
        x, o = board.stones
        fixing = [s for s in g.symmetries if g.transform(x, s) == x and g.transform(o, s) == o]
        if len(fixing) > 1:
            seen: set[Cell] = set()
            kept = []
            for cell in moves:
                if cell not in seen:
                    kept.append(cell)
                    seen.update(s[cell] for s in fixing)
            moves = kept
    rotation = int(shuffle * len(moves))
    moves = moves[rotation:] + moves[:rotation]
    return sorted(moves, key=lambda c: -line_value(board, c))


__all__ = ["MasterPlayer", "root_moves"]
