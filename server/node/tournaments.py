"""Tournaments on a node: the requests (list, follow, join, leave, create), the live updates,
and the director that runs each tournament (docs/tournaments.md).

The database holds every tournament's state (``server.store.tournaments``): its players, its
games and their results. One node at a time *holds* a tournament (``Holding``: on one server,
this one; in a cluster, the node with its lease, ``server.cluster.tournament_leases``) and
runs it, once a second (``TICK``) and whenever one of its games ends here (at most once each
``ROUND_GAP``: the ends of a burst of games make one round, not one each):

- at ``starts_at`` it starts; an arena runs until ``ends_at``, a Swiss plays its rounds;
- the games of the tournament that have ended (on any node) are copied from the games table
  and scored by the rules (``server.game.arena``, ``server.game.swiss``);
- an arena pairs the players who are free (joined, not withdrawn, in none of its games,
  connected: a node saw a connection of theirs, a websocket or a bot's stream, in the last
  ``PRESENT_FOR`` seconds; or a computer the host entered) at once; a Swiss pairs everyone
  who has not withdrawn, connected or not, its next round when the last game of the one
  before has ended (``ROUND_PAUSE`` seconds later), with a bye for the odd player;
- each game starts through the node's rooms as any game does (in a cluster, its players'
  nodes open it), with the tournament's clock, ``rated`` (a game with a computer never is),
  and the tournament's id;
- an arena past ``ends_at`` pairs nobody and finishes once its last game has ended (those
  count); a Swiss finishes after its last round (or when no pairing without a rematch is
  left).

The holder publishes the tournament's whole state on the bus (``TOPIC``) whenever it
changed, at most once a second; every node cuts it into pages (``tournament_view.Pages``:
each page encoded once) and sends each session that follows the tournament (a player who
joined follows it while connected) its page and its own line, only when one of them or the
header changed since what it was last sent, ``PAGE_SLICE`` sessions a step of the event loop
(the other games' moves go on between). The director reads a tournament's players at most
once a ``TICK`` (a join or a leave here at once). Every node writes, every ``SEEN_EVERY``
seconds, which players who joined a tournament not finished are connected to it, so the
holder knows whom to pair: every player who has joined and not left, through whichever node
and however (a socket, or HTTP: a bot), whose connection, any of them, is here (read each
time; ``members`` keeps those noted here already, a join through a connection here at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import msgspec

from server.errors import ServerError, StoreError
from server.game.room import GameRoom
from server.game.room_state import computer_seat
from server.node import levers
from server.node.bus import Bus, Subscription
from server.node.control import MODERATORS
from server.node.delivery import Delivery
from server.node.rooms import Rooms
from server.node.session import Session
from server.node.tournament_view import Pages, Standings, tournament_info
from server.protocol import (
    Ack,
    ClockSpec,
    ErrorCode,
    TournamentCreate,
    TournamentInfo,
    TournamentJoin,
    TournamentLeave,
    TournamentList,
    TournamentRequest,
    Tournaments,
    TournamentState,
    TournamentSub,
    TournamentUnsub,
    encode,
)
from server.store import tournaments as ops
from server.store.base import Store
from server.store.lever_records import AuditEntry

log = logging.getLogger(__name__)

TOPIC = "tournaments"
TICK = 1.0  # seconds between the director's rounds
ROUND_GAP = 0.2  # at least this long between two rounds, however many games end
PRESENT_FOR = 20.0  # a player not seen connected for this long is not paired
SEEN_EVERY = 5.0  # seconds between a node's notes of who is connected
ROUND_PAUSE = 5.0  # seconds between a Swiss round's last game and the next round
REFRESH_EVERY = 3.0  # seconds between looks for tournaments new or taken over
PAGE_SLICE = 50  # followers paged in one step of the event loop before letting others run


class Holding(Protocol):
    """Which node runs a tournament: ``hold`` takes or keeps it (False: another node has
    it), ``release`` lets it go (finished, or the node stops)."""

    async def hold(self, tournament_id: str) -> bool: ...

    async def release(self, tournament_id: str) -> None: ...

    async def close(self) -> None: ...


class SoleHolding:
    """One server: it holds every tournament."""

    async def hold(self, tournament_id: str) -> bool:
        return True

    async def release(self, tournament_id: str) -> None:
        return None

    async def close(self) -> None:
        return None


class TournamentsService:
    """The tournaments' part of a node; see the module docstring."""

    def __init__(self, store: Store, rooms: Rooms, delivery: Delivery, bus: Bus,
                 holding: Holding | None = None, clock: Callable[[], float] = time.time
                 ) -> None:
        self.store = store
        self.rooms = rooms
        self.delivery = delivery
        self.bus = bus
        self.holding: Holding = holding or SoleHolding()
        self.clock = clock
        self.held: dict[str, Standings] = {}
        self.followers: dict[str, dict[Session, Following]] = defaultdict(dict)
        self.members: dict[str, set[str]] = defaultdict(set)  # joined; noted while connected here
        self.published: dict[str, float] = {}  # when each held one's state last went out
        self.dirty: set[str] = set()
        # seconds from a game's end to its players' next pairing, the latest ones
        self.pairing_delays: deque[float] = deque(maxlen=1000)
        self._ended_at: dict[str, float] = {}  # player -> when their last game ended
        self._known: list[str] = []
        self._next_refresh = 0.0
        self._next_seen = 0.0
        self._paging: dict[str, asyncio.Task[None]] = {}  # an update being sent, by tournament
        # the last update this node published of each (its frame, and the state it encodes)
        self._sent_state: dict[str, tuple[bytes, TournamentState]] = {}
        # the players as last read (and when) by each held tournament's rounds
        self._entries: dict[str, tuple[float, ops.TournamentData]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._subscription: Subscription | None = None
        self.closing = False
        self.draining = False  # a restart was announced: no new games

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._subscription = await self.bus.subscribe(TOPIC, self._heard)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="tournaments")

    async def close(self) -> None:
        self.closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for tournament_id in list(self.held):
            with contextlib.suppress(Exception):
                await self.holding.release(tournament_id)
        await self.holding.close()
        if self._subscription is not None:
            await self._subscription.cancel()

    def game_ended(self, room: GameRoom) -> None:
        """A game held here ended (the rooms' ``Listing.ended``, through the hub): if it is
        one of a tournament directed here, its round comes at once."""
        if room.tournament is not None and room.tournament in self.held:
            self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            began = loop.time()
            self._wake.clear()  # before the round: an end during it makes the next one
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the tournaments' round failed; trying again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK)
            # an arena of hundreds ends games many times a second: each round reads all its
            # players, so the ends that come within ROUND_GAP are taken in one round
            pause = began + ROUND_GAP - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)

    # -- the director's round ---------------------------------------------------------------

    async def tick(self) -> None:
        """One round: note who is connected, take up tournaments, run those held."""
        now = self.clock()
        if now >= self._next_seen:
            self._next_seen = now + SEEN_EVERY
            await self._note_seen(now)
        if now >= self._next_refresh:
            self._next_refresh = now + REFRESH_EVERY
            before = set(self._known)
            self._known = await self.store.query(ops.unfinished_tournaments())
            for tournament_id in before.difference(self._known):  # finished: nobody to see
                self.members.pop(tournament_id, None)
            for tournament_id in list(self.held):
                if tournament_id not in self._known:  # finished (or cancelled) elsewhere
                    await self._let_go(tournament_id)
        for tournament_id in self._known:
            if self.closing:
                return
            if not await self.holding.hold(tournament_id):
                self.held.pop(tournament_id, None)
                continue
            standings = self.held.get(tournament_id)
            if standings is None:
                data = await self.store.query(ops.tournament_data(tournament_id))
                if data is None:
                    continue
                standings = self.held[tournament_id] = Standings.from_data(data)
                self.dirty.add(tournament_id)
                log.info("tournament %s: held here", tournament_id)
            try:
                await self._direct(standings, self.clock())
            except ServerError as error:  # the store, most likely: the next round tries again
                log.warning("tournament %s: %s", tournament_id, error)
        for tournament_id in list(self.dirty):
            await asyncio.sleep(0)  # an update in a step of its own, not after a round's
            await self._publish(tournament_id, self.clock())

    async def _players(self, tid: str, now: float) -> ops.TournamentData | None:
        """The tournament's row and players (``tournament_data`` without its games), read at
        most once each ``TICK``: the rounds that games' ends bring between take them as read
        (a join or a leave on this node reads them again, ``_entries_changed``; one on
        another node, a host's cancel, a player's presence wait for the next read)."""
        read = self._entries.get(tid)
        if read is not None and now < read[0] + TICK:
            return read[1]
        data = await self.store.query(ops.tournament_data(tid, games=False))
        if data is None:
            self._entries.pop(tid, None)
        else:
            self._entries[tid] = (now, data)
        return data

    async def _let_go(self, tournament_id: str) -> None:
        self._entries.pop(tournament_id, None)
        self._sent_state.pop(tournament_id, None)
        self.held.pop(tournament_id, None)
        await self.holding.release(tournament_id)

    async def _direct(self, standings: Standings, now: float) -> None:
        """Run one tournament for one round (the module docstring)."""
        tournament = standings.tournament
        tid = tournament.id
        data = await self._players(tid, now)
        if data is None:
            return
        if data.tournament.status == "finished":  # cancelled by the host
            standings.tournament = data.tournament
            self.dirty.add(tid)
            await self._publish(tid, now, force=True)
            await self._let_go(tid)
            return
        before = {e.id: e.withdrawn for e in standings.entries.values()}
        if not standings.refresh(data.entries):  # a player was renamed: rebuild it
            self.held.pop(tid, None)
            return
        if {e.id: e.withdrawn for e in data.entries} != before:
            self.dirty.add(tid)
        ended: list[ops.TournamentGameRecord] = []
        any_ended = bool(standings.playing) and await self.store.query(ops.any_ended(tid))
        if any_ended:
            ended = await self.store.apply(ops.record_ended(tid, now)) or []
        for game in ended:
            standings.ended(game)
            for entry in (game.x, game.o):
                if entry is not None:
                    self._ended_at[standings.name(entry)] = now
            self.dirty.add(tid)
        if ended:  # the pairing in a step of its own: the loop's other work between
            await asyncio.sleep(0)
        if tournament.status == "created":
            if now < tournament.starts_at:
                return
            ends_at = tournament.starts_at + 60 * (tournament.minutes or 0) \
                if tournament.kind == "arena" else None
            await self.store.apply(ops.start_tournament(tid, ends_at))
            standings.tournament = tournament = _replace(tournament, status="started",
                                                         ends_at=ends_at)
            self.dirty.add(tid)
            log.info("tournament %s started (%s)", tid, tournament.kind)
        if tournament.kind == "arena":
            await self._arena(standings, data.entries, now)
        else:
            await self._swiss(standings, now)

    async def _arena(self, standings: Standings, entries: list[ops.EntryRecord],
                     now: float) -> None:
        tournament = standings.tournament
        assert standings.arena is not None
        if tournament.ends_at is not None and now >= tournament.ends_at:
            if not standings.playing:
                await self._finish(standings, now)
            return
        busy = standings.busy()
        waiting = [e.name for e in entries
                   if e.withdrawn is None and e.name not in busy
                   and (e.computer is not None
                        or (e.seen is not None and e.seen >= now - PRESENT_FOR))]
        computers = {e.name for e in entries if e.computer is not None}
        pairs = [(x, o) for x, o in standings.arena.pair(waiting)
                 if not (x in computers and o in computers)]
        for x, o in pairs:
            await self._start_game(standings, x, o, None, now)

    async def _swiss(self, standings: Standings, now: float) -> None:
        """The next round: ``ROUND_PAUSE`` after the last game of the one before has ended,
        or at its set time (``TournamentRecord.round_due``) though games of earlier rounds go
        on (their players sit it out: ``Swiss.pair_round(early=True)``)."""
        swiss = standings.swiss
        assert swiss is not None
        over = not standings.playing and not swiss.playing
        if over and swiss.finished:
            await self._finish(standings, now)
            return
        if swiss.current == swiss.rounds or self.draining:
            return  # the last round is being played
        if over:
            last = max((g.ended or g.started for g in standings.games), default=0.0)
            if swiss.current and now < last + ROUND_PAUSE and not self._round_due(standings,
                                                                                  now):
                return
        elif not self._round_due(standings, now):
            return
        try:
            paired = swiss.pair_round(early=not over)
        except ServerError as error:  # too few players, or only rematches are left
            if not over:  # those playing may make a round when their games end
                return
            log.info("tournament %s: %s", standings.tournament.id, error.message)
            await self._finish(standings, now)
            return
        tid = standings.tournament.id
        await self.store.apply(ops.set_round(tid, paired.number))
        standings.tournament = _replace(standings.tournament, round=paired.number)
        # the pairing's games are recorded from the rows, so the replay gives them back
        for name in swiss.entrants:
            swiss.entrants[name].games.pop(paired.number, None)
        if paired.bye is not None:
            entry = standings.entry_of(paired.bye)
            if entry is not None:
                await self.store.apply(ops.add_game(tid, None, paired.number, entry.id, None,
                                                    now))
                standings.started(_bye(entry.id, paired.number, now))
        for x, o in paired.pairs:
            await self._start_game(standings, x, o, paired.number, now)
        self.dirty.add(tid)

    @staticmethod
    def _round_due(standings: Standings, now: float) -> bool:
        """Whether the Swiss's next round is due by the clock (its set time has come)."""
        current = standings.tournament.round
        if not current:
            return False
        started = standings.round_started()
        started = now if started is None else started
        due = standings.tournament.round_due(current + 1, started)
        return due is not None and now >= due

    async def _start_game(self, standings: Standings, x: str, o: str,
                          round_number: int | None, now: float) -> None:
        tournament = standings.tournament
        if self.draining:
            return
        found = [standings.entry_of(x), standings.entry_of(o)]
        entries = [entry for entry in found if entry is not None]
        if len(entries) < 2:
            return
        seats = []
        for entry in entries:
            if entry.computer is not None:
                seats.append(computer_seat(entry.computer))
            else:
                seats.append(await self.rooms.player_seat(entry.name))
        computer = any(entry.computer is not None for entry in entries)
        initial, increment = tournament.clock
        try:
            room = await self.rooms.start_game(
                (seats[0], seats[1]), tournament.variant, ClockSpec(initial, increment),
                rated=tournament.rated and not computer, tournament=tournament.id)
        except ServerError as error:
            log.warning("tournament %s: the game of %s and %s did not start: %s",
                        tournament.id, x, o, error)
            return
        # known as playing before anything else is awaited: the players have heard of it
        standings.started(ops.TournamentGameRecord(
            id=standings.next_game_id(), game_id=room.id,
            round=round_number, x=entries[0].id, o=entries[1].id, result=None, plies=None,
            started=now, ended=None))
        self.dirty.add(tournament.id)
        for name in (x, o):
            ended = self._ended_at.pop(name, None)
            if ended is not None:
                self.pairing_delays.append(self.clock() - ended)
        await self.store.apply(ops.add_game(tournament.id, room.id, round_number,
                                            entries[0].id, entries[1].id, now))

    async def _finish(self, standings: Standings, now: float) -> None:
        tid = standings.tournament.id
        await self.store.apply(ops.finish_tournament(tid, now))
        standings.tournament = _replace(standings.tournament, status="finished",
                                        finished=now, ends_at=standings.tournament.ends_at
                                        or now)
        log.info("tournament %s finished", tid)
        self.dirty.add(tid)
        await self._publish(tid, now, force=True)
        await self._let_go(tid)

    # -- live updates -----------------------------------------------------------------------

    async def _publish(self, tournament_id: str, now: float, force: bool = False) -> None:
        """The held tournament's state to every follower on every node, at most once a
        second (a change within the second waits for the next round)."""
        standings = self.held.get(tournament_id)
        if standings is None:
            self.dirty.discard(tournament_id)
            return
        if not force and now < self.published.get(tournament_id, 0.0) + 1.0:
            return
        self.dirty.discard(tournament_id)
        self.published[tournament_id] = now
        state = standings.state()
        frame = encode(state)
        self._sent_state[tournament_id] = (frame, state)  # this node's paging decodes none
        try:
            await self.bus.publish(TOPIC, tournament_id.encode() + b"\n" + frame)
        except ServerError as error:
            log.warning("tournament %s: its state was not published: %s", tournament_id, error)

    def _heard(self, _topic: str, message: bytes) -> None:
        tournament_id, _, frame = message.partition(b"\n")
        tid = tournament_id.decode()
        if not self.followers.get(tid):
            return
        sent = self._sent_state.get(tid)
        try:  # the holder's own update as it built it, else as the bus brought it
            pages = Pages(sent[1] if sent is not None and sent[0] == frame
                          else _state_decoder.decode(frame))
        except msgspec.DecodeError as error:  # a node of another version: its next one
            log.warning("tournament %s: an update not read: %s", tid, error)
            return
        earlier = self._paging.pop(tid, None)
        if earlier is not None:  # still being sent: this one goes to all of its followers
            earlier.cancel()
        task = asyncio.get_running_loop().create_task(self._page(tid, pages))
        self._paging[tid] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda done: self._paging.get(tid) is done
                               and self._paging.pop(tid))

    async def _page(self, tid: str, pages: Pages) -> None:
        """Send each follower of ``tid`` its page of the update ``pages`` if what it sees
        changed: ``PAGE_SLICE`` followers a step of the loop, the moves of other games
        handled in between (500 followers in one step held them for milliseconds)."""
        heard = asyncio.get_running_loop().time()
        followers = self.followers.get(tid, {})
        for n, (session, following) in enumerate(list(followers.items())):
            if n and n % PAGE_SLICE == 0:
                await asyncio.sleep(0)
                followers = self.followers.get(tid, {})
            if followers.get(session) is not following or following.asked > heard:
                continue  # gone meanwhile, or a request answered it from a state as new
            parts = pages.parts(pages.page_for(following.page, session.name), session.name)
            if parts != following.sent:
                following.sent = parts
                session.send_raw(pages.frame(parts))

    def _follow(self, tournament_id: str, session: Session) -> Following:
        """``session`` follows ``tournament_id`` (its page as it was, if it did already)."""
        return self.followers[tournament_id].setdefault(session, Following())

    async def _note_seen(self, now: float) -> None:
        """Write which players of each tournament not finished are connected here."""
        if self._known and self.delivery.by_player:  # who joined on any node, any way
            still = await self.store.query(ops.still_joined(self._known))
            for tournament_id, joined in still.items():
                connected = [name for name in joined if self.delivery.by_player.get(name)]
                if connected:
                    self.members[tournament_id].update(connected)
        for tournament_id, names in list(self.members.items()):
            here = [name for name in names if self.delivery.by_player.get(name)]
            if here:
                await self.store.apply(ops.mark_seen(tournament_id, here, now))

    # -- sessions ---------------------------------------------------------------------------

    def identified(self, session: Session) -> None:
        """A player said hello: they follow the tournaments they joined while connected."""
        task = asyncio.get_running_loop().create_task(self._follow_joined(session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow_joined(self, session: Session) -> None:
        assert session.name is not None
        try:
            joined = await self.store.query(ops.tournaments_of(session.name))
        except StoreError as error:
            log.warning("the tournaments of %s were not read: %s", session.name, error)
            return
        for tournament_id in joined:
            if not session.closed:
                self._follow(tournament_id, session)
                self.members[tournament_id].add(session.name)

    def disconnected(self, session: Session) -> None:
        for tournament_id, sessions in list(self.followers.items()):
            sessions.pop(session, None)
            if not sessions:
                del self.followers[tournament_id]

    # -- requests ----------------------------------------------------------------------------

    async def handle(self, session: Session, message: TournamentRequest) -> None:
        """Answer one tournament request of ``session`` (a refusal raises ``ServerError``)."""
        name = session.name
        assert name is not None  # said hello (the hub checks)
        if isinstance(message, Tournaments):
            session.send(TournamentList(tournaments=await self.listing(), ref=message.id))
        elif isinstance(message, TournamentSub):
            pages = Pages(await self.state(message.tournament))
            following = self._follow(message.tournament, session)
            following.page = message.page
            following.asked = asyncio.get_running_loop().time()
            following.sent = pages.parts(pages.page_for(message.page, name), name)
            session.send_raw(pages.frame(following.sent, message.id))
        elif isinstance(message, TournamentUnsub):
            self.followers.get(message.tournament, {}).pop(session, None)
            session.send(Ack(ref=message.id))
        elif isinstance(message, TournamentJoin):
            await self.join(name, message.tournament)
            self._follow(message.tournament, session)
            self.members[message.tournament].add(name)
            session.send(Ack(ref=message.id))
        elif isinstance(message, TournamentLeave):
            await self.leave(name, message.tournament)
            self.members.get(message.tournament, set()).discard(name)
            session.send(Ack(ref=message.id))
        elif isinstance(message, TournamentCreate):
            await self.check_moderator(name)
            created = await self.create(name, message)
            pages = Pages(await self.state(created))
            following = self._follow(created, session)
            following.asked = asyncio.get_running_loop().time()
            following.sent = pages.parts(1, name)
            session.send_raw(pages.frame(following.sent, message.id))

    async def listing(self) -> list[TournamentInfo]:
        """The tournaments' list (``tournaments``)."""
        found = await self.store.query(ops.list_tournaments(self.clock()))
        return [tournament_info(t, t.players, t.round_started) for t in found]

    async def state(self, tournament_id: str, every_game: bool = False) -> TournamentState:
        """The tournament's whole state now (``Standings.state``): the holder's own, else
        rebuilt from the database."""
        held = self.held.get(tournament_id)
        if held is not None:
            return held.state(every_game=every_game)
        data = await self.store.query(ops.tournament_data(tournament_id))
        if data is None:
            raise ServerError(f"no tournament {tournament_id}", ErrorCode.NO_SUCH_TOURNAMENT)
        return Standings.from_data(data).state(every_game=every_game)

    async def check_moderator(self, name: str) -> None:
        """Refuse (``not_moderator``) anyone but a moderator or an admin."""
        if not await levers.roles_of(self.store, name) & MODERATORS:
            raise ServerError("only a moderator may create a tournament",
                              ErrorCode.NOT_MODERATOR)

    async def join(self, name: str, tournament_id: str, *, always: bool = False) -> None:
        """``name`` joins: through a connection of theirs, or (``always``) over HTTP, when
        they are seen now only if a connection of theirs is open here (after that, every
        node notes them while connected to it: ``_note_seen`` reads who has joined)."""
        connected = not always or bool(self.delivery.by_player.get(name))
        await self.store.apply(ops.join_tournament(tournament_id, name, self.clock(), always,
                                                   connected))
        await self._entries_changed(tournament_id)

    async def leave(self, name: str, tournament_id: str) -> None:
        await self.store.apply(ops.withdraw(tournament_id, name, self.clock()))
        await self._entries_changed(tournament_id)

    async def _entries_changed(self, tournament_id: str) -> None:
        """Someone joined or left: a tournament held here knows at once (its state is shown
        from memory); the director's next round pairs by it."""
        standings = self.held.get(tournament_id)
        self._entries.pop(tournament_id, None)
        if standings is not None:  # read again now, and the next round takes them as read
            data = await self._players(tournament_id, self.clock())
            if data is not None:
                if not standings.refresh(data.entries):
                    self.held.pop(tournament_id, None)  # rebuilt at the next round
                self.dirty.add(tournament_id)
        self._wake.set()

    async def create(self, by: str, message: TournamentCreate) -> str:
        """Schedule the tournament ``message`` describes (written in the audit log)."""
        tournament = tournament_record(message, by, self.clock())
        await self.store.apply(
            ops.insert_tournament(tournament, list(message.computer_levels)),
            audit=AuditEntry(by, "tournament-create", tournament.id, None, tournament.created,
                             detail=f"{tournament.kind} {tournament.name!r}"))
        self._next_refresh = 0.0
        self._wake.set()
        return tournament.id


@dataclass
class Following:
    """A session following a tournament: the page it asked for (None: its own line's), the
    parts of what it was last sent (``Pages.parts``), and when a request last answered it
    (an update being paged when it came is not sent to it: it may be older)."""

    page: int | None = None
    sent: tuple[int, bytes, bytes, bytes, bytes] | None = None
    asked: float = 0.0  # when a request last sent it the tournament (the loop's time)


_state_decoder = msgspec.json.Decoder(TournamentState)


def tournament_record(message: TournamentCreate, by: str, now: float) -> ops.TournamentRecord:
    """The row a ``tournament_create`` (or its HTTP and shell forms) schedules."""
    arena = message.kind == "arena"
    return ops.TournamentRecord(
        id=ops.new_tournament_id(), name=message.name.strip(), kind=message.kind,
        status="created", starts_at=message.starts_at,
        ends_at=message.starts_at + 60 * (message.minutes or 0) if arena else None,
        minutes=message.minutes if arena else None,
        rounds=None if arena else message.rounds, round=0,
        clock=ops.parse_clock(message.clock), variant=message.variant, rated=message.rated,
        created=now, created_by=by,
        round_interval=None if arena else message.round_interval,
        round_times=() if arena else tuple(message.round_times))


def _replace(tournament: ops.TournamentRecord, **changes: object) -> ops.TournamentRecord:
    from dataclasses import replace
    return replace(tournament, **changes)  # type: ignore[arg-type]


def _bye(entry: int, round_number: int, now: float) -> ops.TournamentGameRecord:
    return ops.TournamentGameRecord(id=0, game_id=None, round=round_number, x=entry, o=None,
                                    result="1-0", plies=0, started=now, ended=now)
