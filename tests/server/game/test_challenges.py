"""Challenges by name: the pure book (no event loop) and end to end on a real server."""

from __future__ import annotations

import random

from server.errors import MatchmakingError
from server.game.challenges import MAX_RECEIVED, MAX_SENT, Challenges
from server.game.records import TimeControl
from tests.server.servers import Client, Server

# -- the book ---------------------------------------------------------------------------------


class _Raises:
    """Expects a ``MatchmakingError`` with ``code``."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: object, tb: object) -> bool:
        assert isinstance(error, MatchmakingError), error
        assert error.code == self.code
        return True


def test_a_challenge_becomes_a_pairing_with_its_terms() -> None:
    book = Challenges(random.Random(1))
    clock = TimeControl(300, 5)
    sent = book.create("ann", "bob", "3x3x3", clock, True, "o")
    assert book.sent_by("ann") == [sent] and book.sent_to("bob") == [sent]
    challenge, pairing = book.accept(sent.id, "bob")
    assert challenge == sent and len(book) == 0
    assert (pairing.x, pairing.o) == ("bob", "ann")
    assert (pairing.variant, pairing.clock, pairing.rated, pairing.private) == (
        "3x3x3", clock, True, False)


def test_refusals_have_stable_codes() -> None:
    book = Challenges()
    with _Raises("own_challenge"):
        book.create("ann", "ann", "4x4x4", None, False, "random")
    first = book.create("ann", "bob", "4x4x4", None, False, "random")
    with _Raises("already_challenged"):
        book.create("ann", "bob", "4x4", None, False, "x")
    for n in range(MAX_SENT - 1):
        book.create("ann", f"p{n}", "4x4x4", None, False, "random")
    with _Raises("too_many_challenges"):
        book.create("ann", "zed", "4x4x4", None, False, "random")
    for n in range(MAX_RECEIVED - 1):
        book.create(f"q{n}", "bob", "4x4x4", None, False, "random")
    with _Raises("too_many_challenges"):
        book.create("cat", "bob", "4x4x4", None, False, "random")
    with _Raises("not_allowed"):
        book.accept(first.id, "ann")  # only the one challenged answers
    with _Raises("not_allowed"):
        book.cancel(first.id, "bob")  # only the challenger cancels
    book.decline(first.id, "bob")
    with _Raises("no_such_challenge"):
        book.accept(first.id, "bob")


def test_a_player_going_offline_lapses_both_directions() -> None:
    book = Challenges()
    out = book.create("ann", "bob", "4x4x4", None, False, "random")
    into = book.create("cat", "ann", "4x4x4", None, False, "random")
    kept = book.create("cat", "bob", "4x4x4", None, False, "random")
    assert book.lapse("ann") == [out, into]
    assert book.sent_by("cat") == [kept]
    with _Raises("no_such_challenge"):
        book.cancel(out.id, "ann")


# -- end to end -------------------------------------------------------------------------------


async def test_a_challenge_accepted_starts_the_game_for_both(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    lobby = await bob.request(t="lobby_sub")
    assert [p["name"] for p in lobby["players"]] == ["ann", "bob"]
    assert all(p["rating"] == 1500 for p in lobby["players"])
    seek = (await bob.request(t="seek", variant="4x4"))["seek"]["id"]
    sent = await ann.request(t="challenge", name="bob", variant="3x3x3", rated=True, colour="x",
                             clock={"initial": 60, "increment": 1})
    assert sent["t"] == "challenge_sent"
    challenge = sent["challenge"]
    assert (challenge["by"], challenge["to"], challenge["variant"]) == ("ann", "bob", "3x3x3")
    received = await bob.expect("challenge")
    assert received["challenge"] == challenge
    game = await bob.request(t="challenge_accept", challenge=challenge["id"])
    assert game["t"] == "game" and game["you"] == "o" and game["rated"]
    assert game["variant"] == "3x3x3" and game["clock"] == {"initial": 60, "increment": 1}
    assert (await ann.expect("game", id=game["id"]))["you"] == "x"
    await bob.expect("lobby_delta", seeks_removed=[seek])
    await bob.send(t="challenge_accept", challenge=challenge["id"])
    await bob.error("no_such_challenge")


async def test_declined_cancelled_refused_and_lapsed(server: Server) -> None:
    ann, bob, cat = [await server.client(name) for name in ("ann", "bob", "cat")]
    for name, code in (("ann", "own_challenge"), ("nobody", "no_such_player"),
                       ("bad.name", "bad_name")):
        await ann.send(t="challenge", name=name)
        await ann.error(code)
    sent = await ann.request(t="challenge", name="bob")
    await ann.send(t="challenge", name="bob")
    await ann.error("already_challenged")
    first = sent["challenge"]["id"]
    await bob.expect("challenge")
    assert (await bob.request(t="challenge_decline", challenge=first))["t"] == "ack"
    gone = await ann.expect("challenge_gone", challenge=first)
    assert gone["reason"] == "declined"
    again = (await ann.request(t="challenge", name="bob"))["challenge"]["id"]
    await ann.send(t="challenge_cancel", challenge=again)
    assert (await bob.expect("challenge_gone", challenge=again))["reason"] == "cancelled"
    to_cat = (await ann.request(t="challenge", name="cat"))["challenge"]["id"]
    from_bob = (await bob.request(t="challenge", name="ann"))["challenge"]["id"]
    await cat.expect("challenge")
    await lobby_watch(cat, "ann")
    await server.clients[0].close()  # ann leaves
    assert (await cat.expect("challenge_gone", challenge=to_cat))["reason"] == "offline"
    assert (await bob.expect("challenge_gone", challenge=from_bob))["reason"] == "offline"
    await cat.expect("lobby_delta", players=[{"name": "bob", "rating": 1500, "bot": False},
                                             {"name": "cat", "rating": 1500, "bot": False}])
    await cat.send(t="challenge_accept", challenge=to_cat)
    await cat.error("no_such_challenge")


async def lobby_watch(client: Client, name: str) -> None:
    lobby = await client.request(t="lobby_sub")
    assert name in [p["name"] for p in lobby["players"]]
