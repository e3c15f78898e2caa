"""Tournaments on a real server (issue 43): a moderator schedules one, players join, the
director starts it, pairs free players again as games end (never the last opponent), scores
the games, ends an arena at its time counting the games still going on, plays a Swiss's
rounds with a bye, enters computers; the live ``tournament`` events and the refusals."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import pytest

from server.node.tournaments import PRESENT_FOR, ROUND_GAP, ROUND_PAUSE, TICK
from server.store import tournaments as ops
from tests.eventually import eventually
from tests.server.http.test_bot_api import bot_account, post, stream
from tests.server.node.test_levers import admin, connected_moderator, get
from tests.server.servers import Client, Server, play


async def create(mod: Client, **fields: Any) -> dict[str, Any]:
    terms = {"name": "Test arena", "kind": "arena", "starts_at": time.time(), "minutes": 60,
             "clock": "1+0", **fields}
    state = await mod.request(t="tournament_create", **terms)
    assert state["t"] == "tournament", state
    return state


async def joined(server: Server, tournament: str, *names: str) -> list[Client]:
    clients = []
    for name in names:
        client = await server.client(name)
        assert (await client.request(t="tournament_join", tournament=tournament))["t"] == "ack"
        clients.append(client)
    return clients


async def paired(client: Client, tournament: str) -> dict[str, Any]:
    """The next game the director starts for ``client``."""
    game = await client.expect("game", tournament=tournament, status="playing")
    assert game["clock"] == {"initial": 60, "increment": 0}
    return game


async def games_started(clients: dict[str, Client], tournament: str) -> dict[str, Any]:
    """The games of ``tournament`` each client heard of within a few seconds, by name (the
    clients listened to at once: the wait is one client's, not the sum)."""
    heard = await asyncio.gather(*(client.quiet(3.0) for client in clients.values()))
    games = {}
    for (name, client), later in zip(clients.items(), heard, strict=True):
        got = [*client.inbox, *later]
        client.inbox = [m for m in got if m["t"] != "game"]
        for message in got:
            if message["t"] == "game" and message.get("tournament") == tournament:
                games[name] = message
    return games


async def win(game: dict[str, Any], clients: dict[str, Client], winner: str) -> None:
    """Two moves, then the loser resigns (a game of fewer than two moves scores nothing)."""
    x, o = (clients[seat["name"]] for seat in game["seats"])
    await play(x, game["id"], "1a1", 0)
    await play(o, game["id"], "2b2", 1)
    loser = o if x.name == winner else x
    assert (await loser.request(t="resign", game=game["id"]))["t"] == "ack"


async def test_an_arena_pairs_again_as_games_end_and_keeps_the_score(server: Server) -> None:
    mod = await connected_moderator(server)
    created = await create(mod)
    tid = created["info"]["id"]
    assert created["info"]["status"] == "created" and created["info"]["clock"] == "1+0"
    ann, bob, cat = await joined(server, tid, "ann", "bob", "cat")
    clients = {"ann": ann, "bob": bob, "cat": cat}
    listing = await ann.request(t="tournaments")
    assert [t["id"] for t in listing["tournaments"]] == [tid]
    # two of the three play; the third waits
    first = await games_started(clients, tid)
    assert len(first) == 2, first
    game = next(iter(first.values()))
    players = [seat["name"] for seat in game["seats"]]
    waiting = next(name for name in clients if name not in players)
    await win(game, clients, players[0])
    # one of the two is paired again at once, not with the other: with the one who waited
    again = await paired(clients[waiting], tid)
    seated = {seat["name"] for seat in again["seats"]}
    assert waiting in seated and len(seated & set(players)) == 1
    async def standings() -> dict[str, Any]:
        reply = await ann.request(t="tournament_sub", tournament=tid)
        return {row["name"]: (row["rank"], row["score"], row["points"], row["playing"])
                for row in reply["standings"]}

    rows = await standings()
    assert rows[players[0]][:3] == (1, 2, [2])
    assert rows[players[1]][1:3] == (0, [0])
    assert {name for name, row in rows.items() if row[3]} == seated
    live = await ann.expect("tournament")  # an update while subscribed
    assert live["ref"] is None and live["info"]["id"] == tid
    # a player who leaves keeps their score and is not paired again
    idle = next(name for name in players if name not in seated)
    assert (await clients[idle].request(t="tournament_leave", tournament=tid))["t"] == "ack"
    state = await ann.request(t="tournament_sub", tournament=tid)
    left = next(row for row in state["standings"] if row["name"] == idle)
    assert left["withdrawn"] and left["games"] == 1
    assert [(g["id"], g["result"]) for g in state["games"]] == [
        (again["id"], None), (game["id"], "1-0")]


async def test_the_arena_ends_at_its_time_and_counts_the_games_going_on(server: Server) -> None:
    mod = await connected_moderator(server)
    tid = (await create(mod, minutes=1))["info"]["id"]
    ann, bob = await joined(server, tid, "ann", "bob")
    game = await paired(ann, tid)
    await bob.expect("game", id=game["id"])
    director = server.running.hub.tournaments  # type: ignore[union-attr]
    real = director.clock
    director.clock = lambda: real() + 61.0  # past its end: nobody is paired any more
    await eventually(lambda: director.held[tid].tournament.ends_at is not None)
    await win(game, {"ann": ann, "bob": bob}, "ann")
    async def finished() -> dict[str, Any]:
        return await ann.request(t="tournament_sub", tournament=tid)

    state = await finished()
    for _ in range(50):
        if state["info"]["status"] == "finished":
            break
        await ann.quiet(0.2)
        state = await finished()
    assert state["info"]["status"] == "finished"
    assert [(row["name"], row["score"]) for row in state["standings"]] == [("ann", 2),
                                                                            ("bob", 0)]
    assert (await ann.request(t="tournament_join", tournament=tid))["code"] == "tournament_over"
    listing = await ann.request(t="tournaments")
    assert listing["tournaments"][0]["status"] == "finished"


async def test_a_swiss_gives_a_bye_and_finishes_after_its_rounds(server: Server) -> None:
    mod = await connected_moderator(server)
    tid = (await create(mod, kind="swiss", minutes=None, rounds=1,
                        starts_at=time.time() + 2))["info"]["id"]
    clients = dict(zip(("ann", "bob", "cat"), await joined(server, tid, "ann", "bob", "cat"),
                       strict=True))
    games = await games_started(clients, tid)
    assert len(games) == 2
    game = next(iter(games.values()))
    names = [seat["name"] for seat in game["seats"]]
    bye = next(name for name in clients if name not in names)
    late = await server.client("dan")
    refused = await late.request(t="tournament_join", tournament=tid)
    assert refused["code"] == "tournament_started"
    await win(game, clients, names[0])
    ann = clients["ann"]
    state = await ann.request(t="tournament_sub", tournament=tid)
    for _ in range(50):
        if state["info"]["status"] == "finished":
            break
        await ann.quiet(0.2)
        state = await ann.request(t="tournament_sub", tournament=tid)
    assert state["info"]["status"] == "finished" and state["info"]["round"] == 1
    rows = {row["name"]: (row["score"], row["points"]) for row in state["standings"]}
    assert rows == {names[0]: (1, [2]), bye: (1, [2]), names[1]: (0, [0])}
    assert state["games"] == [{"id": game["id"], "x": names[0], "o": names[1], "round": 1,
                               "result": "1-0"}]


async def test_computers_entered_by_the_host_play_as_players(server: Server) -> None:
    mod = await connected_moderator(server)
    tid = (await create(mod, computer_levels=[1], rated=True))["info"]["id"]
    (ann,) = await joined(server, tid, "ann")
    game = await paired(ann, tid)
    seats = {seat["name"]: seat for seat in game["seats"]}
    computer = next(seat for seat in game["seats"] if seat["ai"] is not None)
    assert computer["ai"] == 1 and "ann" in seats
    assert game["rated"] is False  # a game against the computer is never rated
    state = await ann.request(t="tournament_sub", tournament=tid)
    marks = {row["name"]: (row["bot"], row["computer"]) for row in state["standings"]}
    assert marks == {"ann": (False, None), "computer-1": (False, 1)}
    assert server.running is not None  # the game says so over HTTP too
    status, shown = await get(f"{server.running.http_url}/api/games/{game['id']}")
    assert status == 200 and shown["tournament"] == tid


async def test_refusals(server: Server) -> None:
    ann = await server.client("ann")
    refused = await ann.request(t="tournament_create", name="Mine", kind="arena",
                                starts_at=time.time(), minutes=5, clock="3+2")
    assert refused["code"] == "not_moderator"
    for t in ("tournament_join", "tournament_leave", "tournament_sub"):
        refused = await ann.request(t=t, tournament="Tnope")
        assert refused["code"] == "no_such_tournament", (t, refused)
    assert (await ann.request(t="tournaments"))["tournaments"] == []


async def test_a_follower_gets_their_page_and_only_when_it_changed(server: Server) -> None:
    """12 players (2 pages of 10): each follower is sent the page of their own line and the
    line itself; one asks for another page; a change on page 2 goes to page 2's followers
    and not to page 1's."""
    mod = await connected_moderator(server)
    tid = (await create(mod, starts_at=time.time() + 3600))["info"]["id"]
    names = [f"p{n:02}" for n in range(12)]
    clients = dict(zip(names, await joined(server, tid, *names), strict=True))
    first, last = clients["p00"], clients["p11"]  # equal scores: by name, p11 on page 2
    mine = await last.request(t="tournament_sub", tournament=tid)
    assert (mine["page"], mine["pages"]) == (2, 2) and mine["me"]["name"] == "p11"
    assert [row["name"] for row in mine["standings"]] == ["p10", "p11"]
    top = await first.request(t="tournament_sub", tournament=tid)
    assert top["page"] == 1 and len(top["standings"]) == 10 and top["me"]["name"] == "p00"
    asked = await mod.request(t="tournament_sub", tournament=tid, page=2)
    assert asked["page"] == 2 and asked["me"] is None
    assert (await mod.request(t="tournament_sub", tournament=tid, page=5))["page"] == 2
    for client in (first, last, mod):
        await client.quiet(1.5)  # the joins' updates: those that came before this wait,
        client.inbox.clear()  # during the requests above, are in the inbox
    assert (await last.request(t="tournament_leave", tournament=tid))["t"] == "ack"
    update = await last.expect("tournament", ref=None)
    assert update["me"]["withdrawn"] and update["page"] == 2
    seen = await mod.expect("tournament", ref=None)
    assert [row["withdrawn"] for row in seen["standings"]] == [False, True]
    assert not [m for m in await first.quiet(2.5) if m["t"] == "tournament"]
    refused = await first.request(t="tournament_sub", tournament=tid, page=0)
    assert refused["t"] == "error" and refused["code"] == "bad_message"


async def test_a_swiss_round_starts_at_its_set_time_without_those_still_playing(
        server: Server) -> None:
    """Round 2 due 60 s after round 1 began: at that time (the director's clock moved on)
    it is paired though a game of round 1 goes on; that game's players are not paired and
    get no bye; their game scores for round 1 when it ends."""
    mod = await connected_moderator(server)
    tid = (await create(mod, kind="swiss", minutes=None, rounds=2, round_interval=60,
                        starts_at=time.time() + 2))["info"]["id"]
    names = ("ann", "bob", "cat", "dan", "eve")
    clients = dict(zip(names, await joined(server, tid, *names), strict=True))
    first = await games_started(clients, tid)
    assert len(first) == 4
    done, going = list({g["id"]: g for g in first.values()}.values())
    await win(done, clients, done["seats"][0]["name"])
    busy = {seat["name"] for seat in going["seats"]}
    director = server.running.hub.tournaments  # type: ignore[union-attr]
    await eventually(lambda: not director.held[tid].playing.keys() - {going["id"]})
    real = director.clock
    director.clock = lambda: real() + ROUND_PAUSE + 1.0  # the pause after round 1 passed
    await asyncio.sleep(2 * TICK + ROUND_GAP)  # two of the director's rounds go by
    assert director.held[tid].tournament.round == 1  # round 2 waits for the game
    # both the list and the page say when round 2 is due
    began = director.held[tid].round_started()
    assert began is not None
    listed = await clients["ann"].request(t="tournaments")
    shown = await clients["ann"].request(t="tournament_sub", tournament=tid)
    assert next(t for t in listed["tournaments"] if t["id"] == tid)["next_round_at"] \
        == shown["info"]["next_round_at"] == pytest.approx(began + 60)
    director.clock = lambda: real() + 61.0  # round 2's time
    await eventually(lambda: director.held[tid].tournament.round == 2)
    second = await games_started(clients, tid)
    assert second and not busy & set(second)
    state = await clients["ann"].request(t="tournament_sub", tournament=tid)
    assert state["info"]["round"] == 2 and state["info"]["next_round_at"] is None  # the last
    byes = [g for g in director.held[tid].games if g.round == 2 and g.o is None]
    assert len(byes) == 1 and director.held[tid].name(byes[0].x) not in busy
    # round 1's game ends: it scores for round 1
    winner = going["seats"][1]["name"]
    await win(going, clients, winner)
    await eventually(lambda: going["id"] not in director.held[tid].playing)
    swiss = director.held[tid].swiss
    assert swiss is not None and swiss.entrants[winner].games[1].points == 2  # type: ignore[union-attr]
    assert 2 not in swiss.entrants[winner].games


async def test_the_rounds_read_the_players_at_most_once_a_tick(server: Server) -> None:
    """An arena of hundreds ends games many times a second: the rounds between two ticks
    take its players as read (not all of them from the database each time); a join on this
    node is read at the next round."""
    mod = await connected_moderator(server)
    tid = (await create(mod, starts_at=time.time() + 3600))["info"]["id"]
    director = server.running.hub.tournaments  # type: ignore[union-attr]
    now = director.clock()
    first = await director._players(tid, now)
    assert first is not None and first.entries == []
    assert await director._players(tid, now + TICK / 2) is first
    await joined(server, tid, "ann")
    again = await director._players(tid, now + TICK / 2)
    assert again is not first and [e.name for e in again.entries] == ["ann"]
    assert await director._players(tid, now + 100 * TICK) is not again


async def test_a_player_gone_when_paired_is_shown_away_from_the_start(server: Server) -> None:
    """An arena pairs a player seen in the last ``PRESENT_FOR`` seconds, who may have closed
    every connection since (a kick, a lost network): their opponent is told they are away
    (``online`` false in the game's first state), so a claim's grace runs from the start, and
    told when they come."""
    mod = await connected_moderator(server)
    tid = (await create(mod, starts_at=time.time() + 1.0))["info"]["id"]
    ann, bob = await joined(server, tid, "ann", "bob")
    token = bob.token
    await bob.ws.close()
    game = await paired(ann, tid)
    assert {seat["name"]: seat["online"] for seat in game["seats"]} == {"ann": True,
                                                                         "bob": False}
    back = await server.client()
    assert (await back.hello(token=token))["name"] == "bob"
    assert (await back.request(t="watch", game=game["id"]))["t"] == "game"
    came = await ann.expect("presence", game=game["id"])
    assert came["side"] == next(seat for seat, shown in zip("xo", game["seats"], strict=True)
                                if shown["name"] == "bob") and came["online"] is True


async def test_a_ban_or_a_deletion_withdraws_the_player_from_their_tournaments(
        server: Server) -> None:
    """As on lichess: a banned player leaves the tournaments they are in (they may join
    again once the ban is lifted), a deleted one too; the arena pairs neither, though a node
    saw them connected a moment ago, and their lines stay, withdrawn."""
    mod = await connected_moderator(server)
    tid = (await create(mod, starts_at=time.time() + 1.5))["info"]["id"]
    ann, _bob, _cat = await joined(server, tid, "ann", "bob", "cat")
    assert (await mod.request(t="ban", name="bob", reason="spam"))["t"] == "ack"
    assert (await admin(server, "delete-player", "cat", "--reason", "asked"))[0] == 0
    await asyncio.sleep(1.5 + TICK + ROUND_GAP)
    assert [m for m in await ann.quiet(1.0) if m["t"] == "game"] == []
    state = await ann.request(t="tournament_sub", tournament=tid)
    withdrawn = {row["name"]: row["withdrawn"] for row in state["standings"]}
    assert withdrawn["ann"] is False and withdrawn["bob"] is True
    assert [w for name, w in withdrawn.items() if name.startswith("deleted-")] == [True]


async def test_a_finished_tournament_no_longer_notes_who_is_connected(server: Server) -> None:
    """Every node writes, every few seconds, which of a tournament's players are connected
    to it: once the tournament has finished, no more (its players stayed noted, and each
    note was a write of every connected player of every tournament they had ever joined)."""
    mod = await connected_moderator(server)
    tid = (await create(mod, starts_at=time.time() + 3600))["info"]["id"]
    await joined(server, tid, "ann")
    director = server.running.hub.tournaments  # type: ignore[union-attr]
    await eventually(lambda: tid in director._known and tid in director.members)
    assert (await admin(server, "tournament", "cancel", tid, "--reason", "test"))[0] == 0
    await eventually(lambda: tid not in director._known, timeout=10)
    assert tid not in director.members


async def test_a_bot_is_paired_only_while_its_event_stream_is_open(server: Server) -> None:
    """A player who joined over HTTP (a bot) counts as present as anyone does: while a
    connection of theirs, its event stream, is open. Joined with no stream open it is not
    paired; once the stream opens it is; ``PRESENT_FOR`` after the stream closed it is not
    any more; when it opens the stream again it is paired again."""
    assert server.running is not None
    mod = await connected_moderator(server)
    tid = (await create(mod))["info"]["id"]
    (ann,) = await joined(server, tid, "ann")
    robo = await bot_account(server)
    await robo.ws.close()  # a bot speaks HTTP only
    hub = server.running.hub
    director = hub.tournaments
    await eventually(lambda: not hub.delivery.by_player.get("robo"))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        assert (await post(http, server, f"/api/tournaments/{tid}/join", robo.token))[0] == 200
        data = await server.running.store.query(ops.tournament_data(tid, games=False))
        assert data is not None
        assert {e.name: e.seen for e in data.entries}["robo"] is None  # never seen yet
        await asyncio.sleep(2 * TICK + ROUND_GAP)
        assert [m for m in await ann.quiet(1.0) if m["t"] == "game"] == []
        events = await stream(http, server, "/api/stream/event", robo.token)
        game = await paired(ann, tid)  # the stream's node notes it within SEEN_EVERY
        assert {seat["name"] for seat in game["seats"]} == {"ann", "robo"}
        assert (await events.expect("gameStart"))["game"]["id"] == game["id"]
        (cat,) = await joined(server, tid, "cat")  # waits: the others play
        events.reply.close()
        await eventually(lambda: not hub.delivery.by_player.get("robo"), timeout=15.0)
        real = director.clock
        director.clock = lambda: real() + PRESENT_FOR + 1.0  # the stream closed that long ago
        assert (await ann.request(t="tournament_leave", tournament=tid))["t"] == "ack"
        assert (await ann.request(t="resign", game=game["id"]))["t"] == "ack"
        await eventually(lambda: game["id"] not in director.held[tid].playing)
        await asyncio.sleep(2 * TICK + ROUND_GAP)
        assert [m for m in await cat.quiet(1.0) if m["t"] == "game"] == []
        events = await stream(http, server, "/api/stream/event", robo.token)
        again = await paired(cat, tid)
        assert {seat["name"] for seat in again["seats"]} == {"cat", "robo"}
        events.reply.close()


async def test_a_bot_whose_stream_is_open_when_it_joins_is_seen_at_once(
        server: Server) -> None:
    """A bot joins over HTTP while its event stream is open on this node: seen as it joins
    (the stream opened before the join, so it did not make the bot followed), and paired."""
    assert server.running is not None
    mod = await connected_moderator(server)
    tid = (await create(mod))["info"]["id"]
    (ann,) = await joined(server, tid, "ann")
    robo = await bot_account(server)
    await robo.ws.close()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        events = await stream(http, server, "/api/stream/event", robo.token)
        assert (await post(http, server, f"/api/tournaments/{tid}/join", robo.token))[0] == 200
        data = await server.running.store.query(ops.tournament_data(tid, games=False))
        assert data is not None and {e.name: e.seen for e in data.entries}["robo"] is not None
        game = await paired(ann, tid)
        assert {seat["name"] for seat in game["seats"]} == {"ann", "robo"}
        # a request's session (a chat line posted here) lives as long as the request: it
        # follows no tournament, so it costs no read of the bot's tournaments
        director = server.running.hub.tournaments
        followed: list[object] = []
        follow = director.identified
        director.identified = lambda session: (followed.append(session), follow(session))[1]
        reply = await post(http, server, f"/api/bot/game/{game['id']}/chat", robo.token,
                           {"text": "good luck"})
        assert reply[0] == 200, reply
        assert followed == []
        director.identified = follow
        events.reply.close()
