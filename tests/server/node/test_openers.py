"""Who has each game open: a player is in it while one connection of theirs, on any node,
has it open (pure: no event loop)."""

from __future__ import annotations

from server.node.delivery import Peer
from server.node.openers import Openers


def test_a_player_leaves_a_game_with_their_last_connection_to_it() -> None:
    openers = Openers()
    phone, laptop = Peer("a", 1, "ann"), Peer("b", 7, "ann")
    openers.opened("g1", phone)
    openers.opened("g1", laptop)
    assert openers.has_open("g1", phone) and not openers.has_open("g2", phone)
    assert not openers.closed("g1", phone)  # the laptop still has it open
    assert not openers.has_open("g1", phone)
    assert openers.closed("g1", laptop)  # her last one
    assert not openers.closed("g1", laptop)  # closed already: nothing to say
    assert not openers.closed("g9", laptop)


def test_the_connections_on_a_node_that_went_away_are_found_and_a_game_forgotten() -> None:
    openers = Openers()
    openers.opened("g1", Peer("a", 1, "ann"))
    openers.opened("g1", Peer("b", 2, "bob"))
    openers.opened("g2", Peer("b", 3, "cat"))
    assert sorted(openers.on_node("b")) == [("g1", Peer("b", 2, "bob")),
                                           ("g2", Peer("b", 3, "cat"))]
    openers.forget("g1")
    assert len(openers) == 1 and openers.on_node("a") == []
