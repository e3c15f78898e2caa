"""``GET /api/games/{id}/review``: a finished game's review, computed once and kept.

The server reviews a game the first time anyone asks (``server.node.reviews``: the solver's
worker, one computation however many ask at once) and keeps it. The request waits up to
``REVIEW_WAIT`` seconds for it: a kept review, or one of a game on the proof's tree, comes
back at once with 200; a longer one answers 202 ``{"game", "state": "computing"}`` with
``Retry-After``, and the same request later gets the review. A missing game is 404
``no_such_game``; a game still being played 409 ``game_not_over``; a solver that cannot
answer 503 ``unavailable``; a review that would be computed for an address past its rate of
reviews, or with ``MAX_JOBS`` questions in the solver already, 429 ``solver_busy`` with
``Retry-After`` (``server.node.reviews``).
"""

from __future__ import annotations

import asyncio
import math

import msgspec
from aiohttp import web

from server.errors import ServerError
from server.http.api import GAME_ID, HUB_KEY, ApiError, ApiReviewPending
from server.http.rate import client_of
from server.protocol import ErrorCode, error_message

REVIEW_WAIT = 3.0  # seconds a request waits for a review being computed before 202
RETRY_AFTER = 2  # seconds, in a 202's Retry-After
STATUS: dict[str, int] = {ErrorCode.NO_SUCH_GAME: 404, ErrorCode.GAME_NOT_OVER: 409,
                          ErrorCode.SOLVER_BUSY: 429}  # else 503


async def api_review(request: web.Request) -> web.Response:
    game_id = request.match_info["id"]
    reviews = request.app[HUB_KEY].reviews
    try:
        future = await reviews.start(game_id, client_of(request))
        review = await asyncio.wait_for(asyncio.shield(future), REVIEW_WAIT)
    except TimeoutError:
        return web.Response(body=msgspec.json.encode(ApiReviewPending(game=game_id)),
                            status=202, content_type="application/json",
                            headers={"Retry-After": str(RETRY_AFTER)})
    except ServerError as error:
        status = STATUS.get(str(error.code), 503)
        retry_in = getattr(error, "retry_in", None) or 5
        headers = {"Retry-After": str(math.ceil(retry_in))} if status in (429, 503) else None
        said = error_message(error)  # words that name nothing of the server's
        body = msgspec.json.encode(ApiError(code=said.code, message=said.message))
        return web.Response(body=body, status=status, content_type="application/json",
                            headers=headers)
    return web.Response(body=msgspec.json.encode(review), content_type="application/json")


def add_review(app: web.Application) -> None:
    app.router.add_get(f"/api/games/{{id:{GAME_ID}}}/review", api_review)
