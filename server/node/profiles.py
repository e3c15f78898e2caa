"""A player's page: their record and their games, newest first, read from the store.

The websocket's ``player_games`` and the HTTP API's ``/api/players/{name}/games`` answer with
the same values (``PlayerProfile``, ``PlayedGame``, ``RatingPoint``), made here once from the
store's records. Any node can answer: every node reads the same database.
"""

from __future__ import annotations

from server.errors import ServerError
from server.game.records import GameRecord, GameStatus, PlayerRecord, Seat
from server.game.room import computer_seat
from server.protocol import (
    ClockSpec,
    Colour,
    ErrorCode,
    PlayedGame,
    PlayerGames,
    PlayerGamesPage,
    PlayerProfile,
    RatingPoint,
)
from server.store.base import Store


def seat_name(seat: Seat) -> str:
    """A seat's name as the protocol shows it: the player's, or ``Computer (level n)``."""
    if seat.computer_level is not None:
        return computer_seat(seat.computer_level).name
    return seat.player or ""


def profile_of(record: PlayerRecord) -> PlayerProfile:
    return PlayerProfile(
        name=record.name, created=record.created, rating=round(record.rating),
        rd=round(record.rd), games=record.games, rated_games=record.rated_games,
        wins=record.wins, losses=record.losses, draws=record.draws, bot=record.bot,
    )  # fmt: skip


def played_game(record: GameRecord, name: str) -> PlayedGame:
    """``record`` as the player called ``name`` (as registered) played it."""
    side: Colour = "x" if record.x.player == name else "o"
    over = record.status is not GameStatus.ACTIVE
    rating = record.x_rating if side == "x" else record.o_rating
    change = record.x_rating_change if side == "x" else record.o_rating_change
    clock = record.clock
    return PlayedGame(
        id=record.id, variant=record.variant,  # type: ignore[arg-type]
        clock=None if clock is None else ClockSpec(round(clock.initial), round(clock.increment)),
        rated=record.rated, side=side, x=seat_name(record.x), o=seat_name(record.o),
        x_ai=record.x.computer_level, o_ai=record.o.computer_level,
        status="over" if over else "playing",
        result=(record.result or "*") if over else None,  # type: ignore[arg-type]
        reason=record.reason if over else None,  # type: ignore[arg-type]
        moves=record.cells, created=record.created, ended=record.ended,
        rating=None if rating is None else round(rating),
        rating_change=None if change is None else round(change),
        x_bot=record.x.bot, o_bot=record.o.bot,
    )  # fmt: skip


async def player_games_page(
    store: Store, name: str, before: str | None = None, limit: int = 20,
    viewer: str | None = None,
) -> PlayerGamesPage:
    """The page of ``name``'s games the request asks for, as ``viewer`` (the player asking;
    None: anyone) may see it: a game going on that is not listed (a private room's, the
    computer's) only to its players. ``ServerError`` ``no_such_player``, or the store's
    ``no_such_game`` for a ``before`` that is not one of the games in those pages."""
    found = await store.player_games(name, before, limit, viewer)
    if found is None:
        raise ServerError(f"no player {name}", ErrorCode.NO_SUCH_PLAYER)
    player = found.player
    return PlayerGamesPage(
        player=profile_of(player),
        games=[played_game(game, player.name) for game in found.games],
        next=found.games[-1].id if found.more else None,
        ratings=[RatingPoint(at=at, rating=round(rating)) for at, rating in found.ratings],
    )


async def answer_player_games(
    store: Store, message: PlayerGames, viewer: str | None = None
) -> PlayerGamesPage:
    """The reply to a ``player_games`` request of ``viewer`` (the connection's player, None
    before its hello)."""
    page = await player_games_page(store, message.name, message.before, message.limit,
                                   viewer)
    page.ref = message.id
    return page
