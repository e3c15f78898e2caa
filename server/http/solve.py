"""``GET /api/solve?variant=4x4x4&moves=1a1+2b2``: who wins a position, with best play.

The answer has the shape of lichess's tablebase API: a ``verdict`` for the side to move
(``win``, ``loss``, ``draw`` or ``unknown``), ``plies`` (an upper bound on the plies to the end
under the proof's play, when known), ``proved_by`` (``book``: the shipped proof of 4x4x4 or a
small board's table; ``search``: the threat search, the probe, df-pn or 3x3x3's exact search
within the budget, docs/api.md), and the same for every legal move,
best first (a move's verdict is its opponent's: a winning move shows ``loss``). On the proof's
tree the answer is instant; elsewhere the solver has ``SOLVE_BUDGET`` seconds and says
``unknown`` rather than guess (``server.engine_pool.truth``, ``engine.truth``).

Bad input is refused with the protocol's codes: an unknown ``variant`` (``bad_variant``), a
cell that is not one (``bad_cell``), a move on a taken cell (``illegal_move``), a move after
the game was over (``game_over``), more moves than the board has cells or a query past
``MAX_QUERY`` characters (``bad_message``). Each client address (an IPv6 /64 as one) may
ask ``rate`` times a second (``--solve-rate``, 2 by default; a burst of five times that);
past that, 429 ``rate_limited`` with ``Retry-After`` (``server.http.rate``). The solver's one
worker takes the addresses' questions in turn (``server.engine_pool.truth``); an address with
``MAX_JOBS`` questions in already is answered 429 ``solver_busy`` with ``Retry-After``.
"""

from __future__ import annotations

import math
import re

import msgspec
from aiohttp import web

from engine import Board, GameOver, IllegalMove, NotationError, format_cell, parse_cell, variant
from server.engine_pool.computer_moves import ComputerError
from server.engine_pool.truth import SolverBusy, TruthPool
from server.game.addresses import address_key
from server.http.rate import Limits, client_of, limited
from server.protocol import VARIANTS, ErrorCode

TRUTH_KEY = web.AppKey("truth", TruthPool)
SOLVE_BUDGET = 1.0  # seconds of search for a position off the proof's tree
RATE = 2.0  # requests a second per client address (the default of --solve-rate)
MAX_QUERY = 2048


class ApiMoveVerdict(msgspec.Struct):
    """One legal move and the verdict after it (for the side to move then)."""

    move: str
    cell: int
    verdict: str
    plies: int | None
    proved_by: str | None


class ApiVerdict(msgspec.Struct):
    """A position's verdict for the side to move, and each legal move's, best first."""

    variant: str
    position: str  # the moves that led to it, in notation
    to_move: str  # "x" or "o"
    verdict: str
    plies: int | None
    proved_by: str | None
    moves: list[ApiMoveVerdict]


class SolveRefused(Exception):
    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def parse_position(variant_name: str, moves: str) -> Board:
    """The board after ``moves`` (cells in notation, separated by spaces, commas or ``+``),
    or ``SolveRefused`` saying what is wrong."""
    if variant_name not in VARIANTS:
        raise SolveRefused(400, ErrorCode.BAD_VARIANT,
                           f"variant is one of {', '.join(VARIANTS)}")
    geometry = variant(variant_name)
    words = [w for w in re.split(r"[\s,+]+", moves.strip()) if w]
    if len(words) > geometry.size:
        raise SolveRefused(400, ErrorCode.BAD_MESSAGE,
                           f"{len(words)} moves: a {variant_name} board has {geometry.size} cells")
    board = Board(variant_name)
    for ply, word in enumerate(words, 1):
        try:
            cell = parse_cell(word, geometry)
        except NotationError:
            raise SolveRefused(400, ErrorCode.BAD_CELL,
                               f"move {ply}: {word[:16]!r} is not a cell") from None
        try:
            board.push(cell)
        except GameOver:
            raise SolveRefused(400, ErrorCode.GAME_OVER,
                               f"move {ply} ({word}): the game was over before it") from None
        except IllegalMove:
            raise SolveRefused(400, ErrorCode.ILLEGAL_MOVE,
                               f"move {ply} ({word}): the cell is taken") from None
    return board


def _refusal(status: int, code: ErrorCode, message: str,
             headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"code": code.value, "message": message}, status=status,
                             headers=headers)


async def api_solve(request: web.Request) -> web.Response:
    if len(request.query_string) > MAX_QUERY:
        return _refusal(400, ErrorCode.BAD_MESSAGE, f"the query is over {MAX_QUERY} characters")
    try:
        board = parse_position(request.query.get("variant", "4x4x4"),
                               request.query.get("moves", ""))
    except SolveRefused as refused:
        return _refusal(refused.status, refused.code, refused.message)
    try:
        truth = await request.app[TRUTH_KEY].truth(board.geometry.name, board.moves,
                                                   SOLVE_BUDGET, address_key(client_of(request)))
    except SolverBusy as busy:
        return _refusal(429, ErrorCode.SOLVER_BUSY, busy.message,
                        {"Retry-After": str(math.ceil(busy.retry_in or 1))})
    except ComputerError:
        return _refusal(503, ErrorCode.UNAVAILABLE, "the solver cannot answer just now",
                        {"Retry-After": "5"})
    answer = ApiVerdict(
        variant=board.geometry.name,
        position=" ".join(format_cell(c, board.geometry) for c in board.moves),
        to_move="x" if board.ply % 2 == 0 else "o", verdict=truth["verdict"],
        plies=truth["plies"], proved_by=truth["proved_by"],
        moves=[ApiMoveVerdict(move=m["move"], cell=m["cell"], verdict=m["verdict"],
                                      plies=m["plies"], proved_by=m["proved_by"])
                       for m in truth["moves"]])
    return web.Response(body=msgspec.json.encode(answer), content_type="application/json")


def add_solve(app: web.Application, truth: TruthPool, rate: float = RATE) -> None:
    app[TRUTH_KEY] = truth
    app.router.add_get("/api/solve", limited(Limits(rate), "too many positions asked: wait a "
                                             "moment", api_solve))
