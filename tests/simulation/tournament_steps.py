"""The simulation's tournament steps (issue 43's tournaments in the whole server): the
moderator makes arenas and Swiss tournaments, players join and leave them, anyone follows one
for a moment; the games they pair are taken into the world as their players are told of
them, and played by the ``move`` step like any other, beside bans, renames, deletions and
restarts."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from server.http.bot_api import KEEP_ALIVE
from server.node.tournaments import PRESENT_FOR

from .client import said
from .model import SimGame, SimTournament

if TYPE_CHECKING:
    from .world import World

MAX_TOURNAMENTS = 2
SWISS_DELAY = 8.0  # seconds before a Swiss's first round: a Swiss is joined before it starts
# a tournament's director reads its players at most once a second (a leave on another node, a
# rename, a ban reach its pairing and its standings at its next read), then pairs and publishes
PAIRING_LAG = 3.0
# an arena pairs a bot seen connected PRESENT_FOR before; its node sees a stream the world
# closed until a keep-alive's write fails (KEEP_ALIVE), and the game comes a moment later
BOT_AWAY = PRESENT_FOR + KEEP_ALIVE + PAIRING_LAG + 3.0


class TournamentSteps:
    """The tournament steps, for ``World``'s ``step_tournament_*``: the moderator makes
    arenas and Swiss tournaments (three rounds), players join and leave them, anyone looks
    at the standings; the games they pair are taken into the world as they are pushed
    (``adopt_paired``), and played by the ``move`` step."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.tournaments: dict[str, SimTournament] = {}

    def lines(self) -> list[SimTournament]:
        return sorted(self.tournaments.values(), key=lambda t: t.id)

    def left(self, uid: int, at: float) -> None:
        """``uid`` was banned or deleted at ``at``: as good as gone from every tournament."""
        for tournament in self.tournaments.values():
            tournament.leave(uid, at)

    async def create(self) -> bool:
        w = self.world
        if len(self.tournaments) >= MAX_TOURNAMENTS:
            return False
        client = await w.moderator()
        if client is None:
            return False
        # an arena at once, or a Swiss a few seconds on (a Swiss is joined before it starts)
        if w.rng.random() < 0.5:  # a one-minute arena ends within the run, its games counted
            kind, terms = "arena", {"starts_at": time.time(), "minutes": w.pick([1, 60])}
        else:
            kind, terms = "swiss", {"starts_at": time.time() + SWISS_DELAY, "rounds": 3,
                                    "round_interval": 20.0}
        reply = await client.request(t="tournament_create", name=f"sim {kind} {w.step}",
                                     kind=kind, clock="5+3", variant="4x4", **terms)
        made = reply["info"]["id"] if reply is not None and reply["t"] == "tournament" else None
        w.note(f"the moderator makes {'an' if kind == 'arena' else 'a'} {kind}: {said(reply)} "
               f"{made or ''}")
        if made is not None:
            self.tournaments[made] = SimTournament(made, arena=kind == "arena")
            if kind == "swiss":  # announced: a few join at once, before its first round
                for _ in range(w.rng.randrange(2, 5)):
                    await self.join(self.tournaments[made])
        return True

    async def join(self, tournament: SimTournament | None = None) -> bool:
        w = self.world
        tournament = tournament or w.pick(self.lines())
        player = w.pick([p for p in w.connected()
                         if tournament is not None
                         and (p.uid not in tournament.joined or p.uid in tournament.left)])
        if tournament is None or player is None:
            return False
        client = w.pick(w.open_clients(player.uid))
        reply = await client.request(t="tournament_join", tournament=tournament.id)
        w.note(f"{client.label} joins {tournament.id}: {said(reply)}")
        if said(reply) == "ack":
            tournament.joined[player.uid] = w.now()
            tournament.left.pop(player.uid, None)
        return True

    async def leave(self) -> bool:
        w = self.world
        options = [(t, p) for t in self.lines()
                   for p in w.connected() if p.uid in t.joined and p.uid not in t.left]
        if not options:
            return False
        tournament, player = w.pick(options)
        client = w.pick(w.open_clients(player.uid))
        reply = await client.request(t="tournament_leave", tournament=tournament.id)
        w.note(f"{client.label} leaves {tournament.id}: {said(reply)}")
        if said(reply) == "ack":
            tournament.leave(player.uid, w.now())
        return True

    async def look(self) -> bool:
        """Someone follows a tournament for a moment: its standings name each player as they
        are called now (not a renamed player's old name, which a newcomer may hold), and the
        follower's own line (``me``) is their own."""
        w = self.world
        tournament = w.pick(self.lines())
        player = w.pick(w.connected(free=False))
        if tournament is None or player is None:
            return False
        client = w.pick(w.open_clients(player.uid))
        reply = await client.request(t="tournament_sub", tournament=tournament.id)
        await client.request(t="tournament_unsub", tournament=tournament.id)
        w.note(f"{client.label} looks at {tournament.id}: {said(reply)}")
        if reply is None or reply["t"] != "tournament":
            return True
        now = w.now()
        settled = all(p.renamed_at < now - PAIRING_LAG for p in w.players.values())
        if not settled:
            return True
        named = {p.name.casefold(): p for p in w.players.values() if not p.deleted}
        for line in reply["standings"]:
            if line.get("computer") is not None or line["name"].startswith("deleted-"):
                continue
            holder = named.get(line["name"].casefold())
            w.checked("tournaments.standings_names",
                         holder is not None and holder.uid in tournament.joined,
                         f"{tournament.id}'s standings show {line['name']}, "
                         + ("who never joined it" if holder is not None else
                            "whom no player is called now"))
        me = reply.get("me")
        w.checked("tournaments.own_line",
                     me is None or me["name"].casefold() == player.name.casefold(),
                     f"{player.name} following {tournament.id} is shown {me and me['name']}'s "
                     f"line as their own")
        return True

    def adopt_paired(self) -> None:
        """The games the tournaments paired, as their players were told: into the world (the
        move step plays them), each seat checked: someone who joined it and had not left it
        (nor been banned or deleted) ``PAIRING_LAG`` before the game came; in an arena, a
        bot whose connection (its event stream) the world saw open ``BOT_AWAY`` before (a
        Swiss pairs everyone who has not left)."""
        w = self.world
        if not any(client.paired for client in w.clients):
            return
        named = {p.name.casefold(): p for p in w.players.values() if not p.deleted}
        for client in w.clients:
            pushed, client.paired = client.paired, []
            for at, message in pushed:
                if message["id"] in w.games:
                    continue
                seats = [seat["name"] for seat in message["seats"]]
                players = [named.get(name.casefold()) for name in seats]
                x, o = (p.uid if p is not None else None for p in players)
                game = SimGame(message["id"], message["variant"], x, o, seq=len(w.games))
                w.games[game.id] = game
                tournament = self.tournaments.get(message["tournament"])
                w.note(f"{message['tournament']} pairs {seats[0]} and {seats[1]}: game "
                          f"{game.id}")
                if tournament is None:
                    continue
                for name, player in zip(seats, players, strict=True):
                    if player is None and name.startswith("computer"):
                        continue
                    joined = player is not None and player.uid in tournament.joined
                    left = None if player is None else tournament.left.get(player.uid)
                    w.checked("tournaments.paired_entrants",
                                 joined and (left is None or at < left + PAIRING_LAG),
                                 f"{tournament.id} pairs {name} in {game.id}, "
                                 + ("who never joined it" if player is not None and not joined
                                    else "whom no player is called now" if player is None
                                    else f"{at - (left or 0):.1f} s after they left it "
                                         "(or were banned or deleted)"))
                    until = None if player is None or not player.bot \
                        or not tournament.arena \
                        else w.bots.connected_until(player.uid)
                    if until is not None:
                        w.checked("tournaments.bots_paired_connected", at <= until + BOT_AWAY,
                                  f"{tournament.id} pairs the bot {name} in {game.id} "
                                  f"{at - until:.1f} s after its last stream closed")
