"""Issue 37, bug 1: the last move, the end of the game and the ratings are one transaction, on
SQLite and on PostgreSQL. Before, ``record_move`` committed and ``finish_game`` ran apart: a
failure between the two (held open here by players' rows that refuse every update, which only
the end writes) left a won board active, every later move refused ``occupied``, and the mover
told ``store_unavailable`` for a move that was stored. And a game the record holds active on a
decided board (a database written before the fix) is ended when it is loaded."""

from __future__ import annotations

from server.errors import StoreError
from server.game.records import GameStatus, MoveRecord, Seat
from server.http.app import ServerConfig, start_server
from server.store.factory import is_postgres_url, open_store
from tests.server.cluster.faultkit import (
    FREEZE_PLAYERS,
    THAW_PLAYERS,
    Client,
    kind,
    private_game,
    run_script,
    sql,
)

X_LINE, O_CELLS = [0, 1, 2, 3], [16, 17, 18]  # X completes 0-1-2-3 at ply 7
DEAD_4X4 = [10, 12, 0, 5, 13, 11, 6, 2, 7]  # nobody can complete a line after these 9 moves


async def stored(database: str, game: str) -> tuple[str, list[int]]:
    """The game's status and its moves' cells, read from the database itself."""
    mark = "$1" if is_postgres_url(database) else "?"
    status = await sql(database, f"SELECT status FROM games WHERE id = {mark}", game)
    cells = await sql(database, f"SELECT cell FROM moves WHERE game_id = {mark} ORDER BY ply",
                      game)
    return str(status[0][0]), [int(row[0]) for row in cells]


async def test_the_move_that_ends_a_game_is_stored_with_the_end_or_not_at_all(
    database: str,
) -> None:
    store = await open_store(database)
    try:
        for name in ("ann", "bob"):
            await store.create_player(name, now=0.0)
        game = await store.create_game(variant="4x4x4", x=Seat.human("ann"),
                                       o=Seat.human("bob"), clock=None, rated=True, now=1.0)
        for ply, cell in enumerate([0, 16, 1, 17, 2, 18], start=1):
            await store.record_move(game.id, MoveRecord(ply, cell, None, None, 2.0))
        last = MoveRecord(7, 3, None, None, 3.0)
        await run_script(database, FREEZE_PLAYERS[kind(database)])
        try:
            await store.finish_game(game.id, result="1-0", reason="line", now=3.0,
                                    winning_line=X_LINE, move=last)
        except StoreError as error:
            assert "frozen" in str(error)
        else:
            raise AssertionError("the end was written on frozen players")
        assert await stored(database, game.id) == ("active", [0, 16, 1, 17, 2, 18])
        await run_script(database, THAW_PLAYERS[kind(database)])
        ended = await store.finish_game(game.id, result="1-0", reason="line", now=3.0,
                                        winning_line=X_LINE, move=last)
        assert ended.status is GameStatus.FINISHED and ended.cells == [0, 16, 1, 17, 2, 18, 3]
        assert ended.x_rating_change is not None and ended.x_rating_change > 0
        ann = await store.get_player("ann")
        assert ann is not None and (ann.games, ann.wins) == (1, 1)
    finally:
        await store.close()


async def test_a_winning_move_the_end_of_which_fails_is_not_stored(
    database: str,
) -> None:
    running = await start_server(ServerConfig(port=0, db_path=database, computer_workers=1,
                                              grace=60.0))
    try:
        ann = await Client.connect(running.ws_url, "ann")
        bob = await Client.connect(running.ws_url, "bob")
        game = await private_game(ann, bob)
        for ply in range(6):
            mover, cell = (ann, X_LINE[ply // 2]) if ply % 2 == 0 else (bob, O_CELLS[ply // 2])
            assert (await mover.request(t="move", game=game, cell=cell, ply=ply))["t"] == "ack"
        await run_script(database, FREEZE_PLAYERS[kind(database)])
        refused = await ann.request(t="move", game=game, cell=3, ply=6)
        # (SQLite's trigger raises a constraint's error: internal; PostgreSQL's an exception)
        assert refused["t"] == "error", refused
        assert refused["code"] in ("store_unavailable", "internal"), refused
        # nothing of it stored: not the move on an active game (never to end: issue 37)
        assert await stored(database, game) == ("active", [0, 16, 1, 17, 2, 18])
        await run_script(database, THAW_PLAYERS[kind(database)])
        assert (await ann.request(t="move", game=game, cell=3, ply=6))["t"] == "ack"
        for client in (ann, bob):
            end = await client.expect("end", game=game)
            assert (end["result"], end["reason"]) == ("1-0", "line")
        assert await stored(database, game) == ("finished", [0, 16, 1, 17, 2, 18, 3])
        await ann.close()
        await bob.close()
    finally:
        await running.stop()


async def test_a_game_stored_active_on_a_decided_board_is_ended_when_loaded(
    database: str,
) -> None:
    store = await open_store(database)
    try:
        _, token = await store.create_player("ann", now=0.0)
        await store.create_player("bob", now=0.0)
        won = await store.create_game(variant="4x4x4", x=Seat.human("ann"),
                                      o=Seat.human("bob"), clock=None, rated=True, now=1.0)
        for ply, cell in enumerate([0, 16, 1, 17, 2, 18, 3], start=1):
            await store.record_move(won.id, MoveRecord(ply, cell, None, None, 2.0))
        dead = await store.create_game(variant="4x4", x=Seat.human("ann"),
                                       o=Seat.human("bob"), clock=None, rated=False, now=1.0)
        for ply, cell in enumerate(DEAD_4X4, start=1):
            await store.record_move(dead.id, MoveRecord(ply, cell, None, None, 2.0))
    finally:
        await store.close()
    running = await start_server(ServerConfig(port=0, db_path=database, computer_workers=1,
                                              grace=60.0))
    try:
        ann = await Client.connect(running.ws_url, token=token)
        state = await ann.request(t="watch", game=won.id)
        assert state["t"] == "game" and state["status"] == "over", state
        assert (state["end"]["result"], state["end"]["reason"]) == ("1-0", "line")
        assert await stored(database, won.id) == ("finished", [0, 16, 1, 17, 2, 18, 3])
        state = await ann.request(t="watch", game=dead.id)
        assert state["status"] == "over" and state["end"]["reason"] == "dead", state
        tenth = await ann.request(t="move", game=dead.id, cell=1, ply=9)
        assert tenth["t"] == "error" and tenth["code"] == "game_over", tenth
        assert await stored(database, dead.id) == ("finished", DEAD_4X4)
        await ann.close()
    finally:
        await running.stop()


async def test_a_move_stored_before_the_connection_was_lost_is_told_as_played(
    database: str,
) -> None:
    """The connection lost after the commit (the database's answer never came): the move and
    the end are in the record, so the mover gets its ``ack`` and both players the end, not
    ``store_unavailable`` for a stored move (issue 37)."""
    running = await start_server(ServerConfig(port=0, db_path=database, computer_workers=1,
                                              grace=60.0))
    try:
        ann = await Client.connect(running.ws_url, "ann")
        bob = await Client.connect(running.ws_url, "bob")
        game = await private_game(ann, bob)
        for ply in range(6):
            mover, cell = (ann, X_LINE[ply // 2]) if ply % 2 == 0 else (bob, O_CELLS[ply // 2])
            assert (await mover.request(t="move", game=game, cell=cell, ply=ply))["t"] == "ack"
        store = running.hub.rooms.store
        finish = store.finish_game

        async def committed_then_lost(*args: object, **kwargs: object) -> object:
            await finish(*args, **kwargs)  # type: ignore[arg-type]
            raise StoreError("cannot use the database: connection lost")  # its answer lost

        store.finish_game = committed_then_lost  # type: ignore[method-assign,assignment]
        try:
            reply = await ann.request(t="move", game=game, cell=3, ply=6)
        finally:
            store.finish_game = finish  # type: ignore[method-assign]
        assert reply["t"] == "ack", reply
        for client in (ann, bob):
            assert (await client.expect("end", game=game))["reason"] == "line"
        assert await stored(database, game) == ("finished", [0, 16, 1, 17, 2, 18, 3])
        await ann.close()
        await bob.close()
    finally:
        await running.stop()
