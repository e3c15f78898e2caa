"""Reviews of finished games: computed once in the solver's worker, then kept in the store.

``Reviews.review(game_id)`` answers from the store when the review was kept; otherwise it
starts one computation (``TruthPool.review``: ``engine.solved.review`` in the solver's process,
never on the event loop) that every request for the same game meanwhile shares, and keeps its
result. So a thousand spectators asking for one famous game's review cost one analysis, and
every later request one read. The websocket's ``review`` request is answered here (its reply
is sent when the review is ready, without holding the connection's other requests); the HTTP
API (``server.http.review``) waits a little for it and otherwise says it is being computed.

A review costs the solver's one worker seconds, so the reviews computed for one client
address (an IPv6 /64 as one) are rated: ``REVIEW_BURST`` at once, then one every
``1 / REVIEW_RATE`` seconds (a kept review, or one being computed, costs nothing); past that,
``solver_busy`` with ``retry_in``. In the worker the review waits its address's turn
(``server.computer.truth``), so neither reviews nor positions of one address hold up
another's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial

import msgspec

from server.computer.moves import ComputerError
from server.computer.truth import TruthPool
from server.errors import LimitReached, ServerError
from server.game.addresses import address_key
from server.game.records import GameRecord, GameStatus
from server.game.room import computer_seat
from server.node.rates import Limits
from server.node.session import Session
from server.protocol import ErrorCode, GameReviewed, ReviewGame, ReviewInfo, error_message
from server.store.base import Store

log = logging.getLogger(__name__)

REVIEW_RATE = 0.1  # reviews computed a second for one client address ...
REVIEW_BURST = 3  # ... with this many at once


class Reviews:
    """The reviews of finished games, each computed once (see the module docstring)."""

    def __init__(self, store: Store, truth: TruthPool) -> None:
        self._store = store
        self.truth = truth
        self._computing: dict[str, asyncio.Task[ReviewInfo]] = {}
        self._replies: set[asyncio.Task[None]] = set()
        self.rates = Limits(REVIEW_RATE, REVIEW_BURST)  # reviews computed, by client address

    async def review(self, game_id: str, client: str = "") -> ReviewInfo:
        """The review of a finished game: kept, being computed, or computed now for the
        address ``client``. Raises ``ServerError`` ``no_such_game``, ``game_not_over`` (a game
        still played), ``solver_busy`` (``client`` past its rate of reviews, or with as many
        questions in the solver as it may have) or ``unavailable`` (the solver could not
        answer)."""
        return await asyncio.shield(await self.start(game_id, client))

    async def start(self, game_id: str, client: str = "") -> asyncio.Future[ReviewInfo]:
        """The review of a finished game as a future: done when it was kept, else the one
        computation of it (started now for ``client`` unless it runs already). Refusals as
        ``review``."""
        task = self._computing.get(game_id)
        if task is not None:
            return task
        store = self._store
        game = await store.get_game(game_id)
        if game is None:
            raise ServerError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
        if game.status is GameStatus.ACTIVE:
            raise ServerError("the game is still being played: a review comes once it is over",
                              ErrorCode.GAME_NOT_OVER)
        kept = await store.get_review(game_id)
        loop = asyncio.get_running_loop()
        if kept is not None:
            done: asyncio.Future[ReviewInfo] = loop.create_future()
            done.set_result(_info(game, msgspec.json.decode(kept[0]), kept[1]))
            return done
        task = self._computing.get(game_id)  # started while the store answered
        if task is None:
            wait = self.rates.wait(client, loop.time())
            if wait is not None:
                raise LimitReached("you have asked for many reviews lately: wait a moment",
                                   ErrorCode.SOLVER_BUSY, wait)
            task = loop.create_task(self._compute(game, address_key(client)),
                                    name=f"review-{game_id}")
            self._computing[game_id] = task
            task.add_done_callback(partial(self._done, game_id))
        return task

    def _done(self, game_id: str, task: asyncio.Task[ReviewInfo]) -> None:
        self._computing.pop(game_id, None)
        if not task.cancelled():
            task.exception()  # retrieved: a failure nobody waited for (a 202) is not logged twice

    @property
    def computing(self) -> int:
        """Reviews being computed now."""
        return len(self._computing)

    async def _compute(self, game: GameRecord, client: str) -> ReviewInfo:
        try:
            data = await self.truth.review(game.variant, game.cells, client=client)
        except ComputerError as error:
            log.warning("review of game %s failed: %s", game.id, error)
            raise ServerError("the solver cannot review the game just now: try again soon",
                              ErrorCode.UNAVAILABLE) from None
        computed = time.time()
        await self._store.save_review(game.id, msgspec.json.encode(data).decode(), computed)
        return _info(game, data, computed)

    def handle(self, session: Session, message: ReviewGame) -> None:
        """Answer ``review`` with ``review`` once it is ready (or an error), in a task of its
        own: the connection's other requests go on meanwhile."""
        task = asyncio.get_running_loop().create_task(self._reply(session, message))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    async def _reply(self, session: Session, message: ReviewGame) -> None:
        try:
            review = await self.review(message.game, session.peer)
        except ServerError as error:
            session.send(error_message(error, message.id))
            return
        session.send(GameReviewed(review=review, ref=message.id))

    async def close(self) -> None:
        """Stop the replies still waiting (their computations end with the solver)."""
        for task in (*self._replies, *self._computing.values()):
            task.cancel()
        await asyncio.gather(*self._replies, *self._computing.values(),
                             return_exceptions=True)


def _name(game: GameRecord, side: str) -> str:
    seat = game.x if side == "x" else game.o
    if seat.computer_level is not None:
        return computer_seat(seat.computer_level).name
    return seat.player or ""


def _info(game: GameRecord, data: dict[str, object], computed: float) -> ReviewInfo:
    """The wire form of a review computed by ``engine.solved.review`` for ``game``."""
    return msgspec.convert({
        **data, "game": game.id, "x": _name(game, "x"), "o": _name(game, "o"),
        "result": game.result or "*", "reason": game.reason, "computed": computed,
    }, ReviewInfo)
