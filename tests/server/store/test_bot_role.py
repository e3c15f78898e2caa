"""The bot role on both databases: a flag on the player's row that every read of the player
carries, granted, revoked and taken up by the player as the other roles are, each in the
audit log (issue 43)."""

from __future__ import annotations

import time

from server.game.records import Seat
from server.node import levers
from server.store.base import Store


async def test_the_bot_role_is_granted_revoked_and_taken_up(store: Store) -> None:
    await store.create_player("robo", time.time())
    await store.create_player("ann", time.time())
    assert (await store.get_player("robo")).bot is False  # type: ignore[union-attr]
    assert await levers.grant(store, "host", "robo", "bot") == "robo"
    robo = await store.get_player("robo")
    assert robo is not None and robo.bot
    assert await levers.roles_of(store, "robo") == {"bot"}
    assert await levers.revoke_role(store, "host", "robo", "bot")
    assert not await levers.revoke_role(store, "host", "robo", "bot")  # had it no more
    assert (await store.get_player("robo")).bot is False  # type: ignore[union-attr]
    assert await levers.become_bot(store, "ann") == "ann"
    assert (await store.get_player("ann")).bot is True  # type: ignore[union-attr]
    audit = [(e.action, e.actor, e.target, e.detail) for e in await levers.audit(store)]
    assert ("grant", "ann", "ann", "bot") in audit and ("grant", "host", "robo", "bot") in audit


async def test_a_game_read_back_says_which_seats_are_bots(store: Store) -> None:
    """A game's seats carry their players' bot flag as it is now (the join that reads their
    names), in a game read alone and in a page of a player's games."""
    for name in ("robo", "ann"):
        await store.create_player(name, time.time())
    await levers.grant(store, "host", "robo", "bot")
    game = await store.create_game(variant="4x4", x=Seat.human("ann"), o=Seat.human("robo"),
                                   clock=None, rated=False, now=time.time())
    computer = await store.create_game(variant="4x4", x=Seat.computer(3),
                                       o=Seat.human("robo"), clock=None, rated=False,
                                       now=time.time() + 1)
    read = await store.get_game(game.id)
    assert read is not None and (read.x.bot, read.o.bot) == (False, True)
    assert read.o == Seat.human("robo")  # the flag is not part of the seat's identity
    page = await store.player_games("robo", viewer="robo")  # unlisted: its players see it
    assert page is not None
    assert [(g.id, g.x.bot, g.o.bot) for g in page.games] == [
        (computer.id, False, True), (game.id, False, True)]
