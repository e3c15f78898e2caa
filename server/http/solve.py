"""``GET /api/solve?variant=4x4x4&moves=1a1+2b2``: who wins a position, with best play.

The answer (a verdict for the side to move and for every legal move, with plies and what proved
it) is ``engine.solved.truth``'s, computed in the solver's worker (``server.computer.truth``)
within ``SOLVE_BUDGET``. docs/api.md, "``/api/solve``", has the answer's shape, the refusals and the
rate limits."""

from __future__ import annotations

import math
import re

import msgspec
from aiohttp import web

from engine import Board, GameOver, IllegalMove, NotationError, format_cell, parse_cell, variant
from server.computer.moves import ComputerError
from server.computer.truth import SolverBusy, TruthPool
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
