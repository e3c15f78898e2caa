"""The lobby's live list after a restart: a public game is listed again once its players are
back in it; a private room's game and a computer game stay off it, as before the restart."""

from __future__ import annotations

from pathlib import Path

from tests.server.servers import Server, start_private_game


async def test_a_restart_lists_public_games_again_and_keeps_private_ones_off(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "q.db")
    await server.start()
    try:
        ann, bob = await server.client("ann"), await server.client("bob")
        cat, dan = await server.client("cat"), await server.client("dan")
        eve = await server.client("eve")
        seeking = await ann.request(t="seek", colour="x")
        await bob.send(t="accept_seek", seek=seeking["seek"]["id"])
        public = (await ann.expect("game"))["id"]
        await bob.expect("game")
        private = await start_private_game(server, cat, dan)
        computer = (await eve.request(t="play_ai", level=1, colour="x"))["id"]
        before = await (await server.client("fay")).request(t="lobby_sub")
        assert [game["id"] for game in before["games"]] == [public]
        seated = [(ann.token, public), (bob.token, public), (cat.token, private),
                  (dan.token, private), (eve.token, computer)]
        await server.stop()
        await server.start()
        for token, game in seated:
            player = await server.client()
            await player.hello(token=token)
            assert (await player.request(t="watch", game=game))["id"] == game
        after = await (await server.client("gus")).request(t="lobby_sub")
        assert [game["id"] for game in after["games"]] == [public]
    finally:
        await server.stop()
