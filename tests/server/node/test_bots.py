"""The bot API's streams told from the websocket's events (``server.node.bots``), with no
server: a game's start and finish said once, a move and the end it made one ``gameState``,
and a bot's pairing requests refused unless the host allows them."""

from __future__ import annotations

import pytest

from server.errors import ServerError
from server.game.records import PlayerRecord
from server.node.bots import EventFeed, GameFeed, refuse_pairing
from server.protocol import (
    ChallengeAccept,
    Clocks,
    GameEnd,
    GameState,
    MovePlayed,
    Quick,
    SeatInfo,
)
from server.protocol.bot_events import BotGameFinish, BotGameFull, BotGameStart, BotGameState


def state(moves: list[int], status: str = "playing", end: GameEnd | None = None) -> GameState:
    return GameState(id="g1", variant="4x4", clock=None, rated=False,
                     seats=[SeatInfo(name="ann"), SeatInfo(name="robo", bot=True)],
                     moves=moves, clocks=None, status=status,  # type: ignore[arg-type]
                     version=len(moves), you="o", end=end)


END = GameEnd(game="g1", version=8, result="1-0", reason="line", winner="x",
              clocks=Clocks(x=1000, o=2000))


def test_a_game_starts_and_finishes_once_on_the_event_stream() -> None:
    feed = EventFeed()
    [start] = feed.feed(state([0]))
    assert isinstance(start, BotGameStart)
    assert (start.game.color, start.game.my_turn, start.game.opponent.name) == ("o", True, "ann")
    assert feed.feed(state([0])) == []  # a resync is no new start
    assert feed.feed(MovePlayed(game="g1", ply=2, cell=5, notation="b2", side="o",
                                clocks=None, version=2)) == []
    [finish] = feed.feed(END)
    assert isinstance(finish, BotGameFinish)
    assert (finish.game.result, finish.game.ply, finish.game.status) == ("1-0", 2, "over")
    assert feed.feed(state([0, 5], "over", END)) == []


def test_a_move_and_the_end_it_made_are_one_state() -> None:
    feed = GameFeed("g1")
    [full] = feed.feed_all([state([0, 5])])
    assert isinstance(full, BotGameFull) and full.state.moves == "a1 b2"
    move = MovePlayed(game="g1", ply=3, cell=1, notation="b1", side="x", clocks=None,
                      version=3)
    [after] = feed.feed_all([move, END])
    assert isinstance(after, BotGameState)
    assert (after.moves, after.status, after.winner, after.x_time) == (
        "a1 b2 b1", "over", "x", 1000)
    assert feed.over
    assert feed.feed_all([MovePlayed(game="other", ply=1, cell=0, notation="a1", side="x",
                                     clocks=None, version=1)]) == []


def test_a_bot_is_kept_out_of_pairing_unless_allowed() -> None:
    bot, person = PlayerRecord("robo", 0.0, bot=True), PlayerRecord("ann", 0.0)
    with pytest.raises(ServerError) as refused:
        refuse_pairing(bot, Quick(variant="4x4x4"), allowed=False)
    assert refused.value.code == "bot_pairing_off"
    refuse_pairing(bot, Quick(variant="4x4x4"), allowed=True)
    refuse_pairing(person, Quick(variant="4x4x4"), allowed=False)
    refuse_pairing(bot, ChallengeAccept(challenge="c1"), allowed=False)  # its own choice


def test_a_challenge_replayed_and_told_as_it_was_made_is_one_line() -> None:
    """On a cluster the stream's opening replay and the challenge told as it was made may
    both reach it: the bot hears of it once."""
    from server.node.bots import CHALLENGES_KEPT
    from server.protocol import ChallengeInfo, ChallengeReceived
    from server.protocol.bot_events import BotChallenge

    def challenge(number: int) -> ChallengeReceived:
        return ChallengeReceived(challenge=ChallengeInfo(
            id=f"c{number}", by="ann", to="robo", variant="4x4x4", clock=None, rated=False,
            colour="random"))

    feed = EventFeed()
    lines = feed.feed_all([challenge(1), challenge(1), challenge(2)])
    assert [line.challenge.id for line in lines if isinstance(line, BotChallenge)] == [
        "c1", "c2"]
    feed.feed_all([challenge(n) for n in range(3, CHALLENGES_KEPT + 3)])
    assert len(feed.challenges) == CHALLENGES_KEPT  # the oldest forgotten, not every one kept
