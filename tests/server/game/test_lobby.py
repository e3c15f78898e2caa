"""The lobby's pure core: matchmaking requests in, effects out, with no event loop."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from server.errors import ServerError
from server.game.lobby import (
    COMPUTER_GAMES_PER_PLAYER,
    LiveGames,
    LobbyCore,
    Pair,
    PlayComputer,
    Reply,
    Tell,
    ToLobby,
)
from server.game.room import GameRoom, RoomSeat
from server.protocol import (
    AcceptSeek,
    Ack,
    Challenge,
    ChallengeDecline,
    ChallengeGone,
    ChallengeReceived,
    ChallengeSent,
    PlayAI,
    Queued,
    Quick,
    Seek,
    Seeking,
)


class Online:
    """Who is online, as a test says."""

    def __init__(self, *names: str) -> None:
        self.here = set(names)

    @property
    def online(self) -> int:
        return len(self.here)

    def names(self) -> Iterable[str]:
        return self.here

    def rating(self, name: str) -> float | None:
        return 1500.0 if name in self.here else None

    def is_online(self, name: str) -> bool:
        return name in self.here

    def is_bot(self, name: str) -> bool:
        return name.startswith("bot")


def core(*online: str, watched: bool = True) -> LobbyCore:
    return LobbyCore(Online(*online), lambda: watched, rng=random.Random(1))


def test_a_seek_is_answered_and_shown_and_accepting_it_pairs() -> None:
    lobby = core("ann", "bob")
    reply, shown = lobby.decide("ann", 1500.0, Seek(id=1), 0.0)
    assert isinstance(reply, Reply) and isinstance(reply.message, Seeking)
    assert reply.message.ref == 1
    seek = reply.message.seek
    assert isinstance(shown, ToLobby) and shown.delta.seeks_added == [seek]
    removed, pair = lobby.decide("bob", 1500.0, AcceptSeek(id=2, seek=seek.id), 1.0)
    assert isinstance(removed, ToLobby) and removed.delta.seeks_removed == [seek.id]
    assert isinstance(pair, Pair) and pair.asked and pair.ref == 2
    assert {pair.pairing.x, pair.pairing.o} == {"ann", "bob"}


def test_nobody_watching_the_lobby_hears_no_delta() -> None:
    lobby = core("ann", watched=False)
    (reply,) = lobby.decide("ann", 1500.0, Seek(id=1), 0.0)
    assert isinstance(reply, Reply)
    assert lobby.tick(1.0) == []


def test_quick_pairing_pairs_in_the_pools_round() -> None:
    lobby = core("ann", "bob", watched=False)
    (queued,) = lobby.decide("ann", 1500.0, Quick(id=1), 0.0)
    assert isinstance(queued, Reply) and isinstance(queued.message, Queued)
    queued_too, pair = lobby.decide("bob", 1510.0, Quick(id=2), 0.5)
    assert isinstance(queued_too, Reply)
    assert isinstance(pair, Pair) and not pair.asked and pair.pairing.rated


def test_a_game_against_the_computer_withdraws_the_seek_and_has_a_limit() -> None:
    lobby = core("ann")
    lobby.decide("ann", 1500.0, Seek(id=1), 0.0)
    gone, play = lobby.decide("ann", 1500.0, PlayAI(id=2, level=3, colour="x"), 1.0)
    assert isinstance(gone, ToLobby) and gone.delta.seeks_removed
    assert isinstance(play, PlayComputer) and play.ref == 2
    assert play.seats[0] == RoomSeat("ann", "ann", 1500) and play.seats[1].computer_level == 3
    with pytest.raises(ServerError) as refused:
        lobby.decide("ann", 1500.0, PlayAI(id=3, level=3), 2.0, COMPUTER_GAMES_PER_PLAYER)
    assert refused.value.code == "too_many_computer_games"


def test_a_challenge_reaches_the_player_and_lapses_when_its_sender_goes() -> None:
    lobby = core("ann", "bob")
    with pytest.raises(ServerError) as refused:
        lobby.decide("ann", 1500.0, Challenge(id=1, name="cat"), 0.0)
    assert refused.value.code == "no_such_player"
    sent, told = lobby.decide("ann", 1500.0, Challenge(id=2, name="bob"), 0.0)
    assert isinstance(sent, Reply) and isinstance(sent.message, ChallengeSent)
    assert isinstance(told, Tell) and told.name == "bob"
    assert isinstance(told.message, ChallengeReceived)
    (lapsed,) = lobby.gone("ann")
    assert lapsed == Tell("bob", ChallengeGone(challenge=sent.message.challenge.id,
                                               reason="offline"))
    again, _ = lobby.decide("ann", 1500.0, Challenge(id=3, name="bob"), 1.0)
    assert isinstance(again, Reply) and isinstance(again.message, ChallengeSent)
    ack, declined = lobby.decide("bob", 1500.0,
                                 ChallengeDecline(id=4, challenge=again.message.challenge.id),
                                 2.0)
    assert ack == Reply(Ack(ref=4)) and isinstance(declined, Tell) and declined.name == "ann"


def test_the_live_list_shows_public_games_with_someone_in_them() -> None:
    games = LiveGames()
    room = GameRoom("g1", (RoomSeat("ann", "ann"), RoomSeat("bob", "bob")))
    (added,) = games.relist(room)
    assert [g.id for g in added.games_added or []] == ["g1"]
    assert games.relist(room) == []  # already shown
    assert [g.id for g in games.summaries()] == ["g1"]
    room.leave("ann", 1.0)
    room.leave("bob", 1.0)
    (removed,) = games.relist(room)  # nobody in it any more
    assert removed.games_removed == ["g1"] and games.summaries() == []
    hidden = GameRoom("g2", (RoomSeat("cat", "cat"), RoomSeat("dan", "dan")))
    games.unlist("g2")
    assert games.relist(hidden) == []
    room.join("ann", "ann", 2.0)
    assert games.relist(room) and games.hide("g1") and games.hide("g1") == []
