"""Who has each game open: a player is in it while one connection of theirs, on any node,
has it open (pure, then on a real server)."""

from __future__ import annotations

from server.node.delivery import Peer
from server.node.openers import Openers
from tests.server.servers import Server, start_private_game


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


async def test_a_connection_gone_before_its_open_arrived_leaves_the_player_away(
        server: Server) -> None:
    """On a cluster a player's open travels from their node to the game's; when the
    connection closes first (banned the moment the game starts: the simulation's
    ``presence.as_told``, seed 240 step 150), its leave comes from a connection the holder
    never heard open. The player has no other connection on the game: they are away."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    assert server.running is not None
    rooms = server.running.hub.rooms
    (session,) = server.running.hub.delivery.of_player("ann")
    assert rooms.openers.closed(game, Peer.of(session))  # as if it had never been heard open
    rooms.leave(Peer("b", 999, "ann"), game, rooms.now())  # her connection on node b, gone
    told = await bob.expect("presence", game=game)
    assert (told["side"], told["online"]) == ("x", False)
    rooms.leave(Peer("b", 999, "ann"), game, rooms.now())  # told again: nothing more to say
    rooms.leave(Peer("b", 998, "bob"), game, rooms.now())  # bob's own connection has it open
    assert not [m for m in await bob.quiet(0.5) if m["t"] == "presence"]
    assert [m for m in await ann.quiet(0.1) if m["t"] == "presence"] == []
