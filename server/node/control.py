"""The control channel: what a host or a moderator decides, carried out on every node.

A lever (``server.node.levers``: a ban, a kick, an announcement, ...) is written by whoever
pulls it, ``qubic admin`` on the database or a moderator's request on any node, as one row
of the ``control`` table, in the same transaction as its record and its audit entry
(``server.store.lever_records``). Every hub polls that table (``POLL_INTERVAL``), starting after
the newest row it found at start-up, and carries out each new action here, in one ``match``:
close a player's or an address's connections, say something to everyone, mute and unmute,
and, on the one node that holds the game, end it or take a chat line out of it. The
embedded server and every node of a cluster run the same code, the table being in the
database they share (PostgreSQL for a cluster), so nothing but the database is needed for a
lever to reach every node within a second, and a command line needs no address of a server.

Adding a lever that acts on running nodes is one more Struct in ``Action`` and one more case
in ``Control.act``; old rows are pruned after ``KEPT``.

On ``/metrics``: ``qubic_control_actions_total{kind}``, the actions carried out here by kind
(each is at 0 from the start; an action about a game changes something only on the node that
holds it, but is counted on every node that read it), ``qubic_control_action_failures_total``
(actions this node could not read or carry out) and ``qubic_control_poll_seconds``, a
histogram of how long each look at the table took, its actions included.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from functools import partial
from typing import assert_never

import msgspec

from server.errors import ServerError, StoreError
from server.game.room import Change, GameRoom
from server.metrics import LAG_BUCKETS
from server.node.control_actions import (
    KINDS,
    Action,
    Disconnect,
    DisconnectAddress,
    DropDevices,
    EndGame,
    Mute,
    RemoveChatLine,
    RolesChanged,
    Say,
    Unmute,
    decode_action,
)
from server.node.delivery import Peer
from server.node.room_interfaces import SoleOwnership
from server.node.rooms import Decide, Rooms
from server.node.session import CLOSE_POLICY, Session
from server.protocol import Error
from server.store.base import Store, name_key
from server.store.lever_records import (
    address_matches,
    control_since,
    last_control,
    prune_control,
    roles_of,
    sanctions_of,
)

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.25  # seconds between two looks at the control table
MODERATORS = frozenset({"admin", "moderator"})  # the roles that read both chats of a game
KEPT = 3600.0  # seconds an action stays in the table (a node down longer missed it anyway)
PRUNE_EVERY = 600.0  # seconds between two prunings by one node


def chat_author(room: GameRoom, line: int, now: float) -> str | None:
    """Who said the chat line ``line`` of ``room`` (either chat), or None if it has none."""
    for said in room.snapshot(None, now, moderator=True).chat:
        if said.line == line:
            return said.name
    return None


async def shielded(store: Store, author: str | None, by: str) -> bool:
    """Whether a line ``author`` said is out of a moderator ``by``'s reach: said by another
    moderator or an admin (only an admin may remove it; one's own line anyone may)."""
    if author is None or name_key(author) == name_key(by):
        return False
    return bool(await store.query(roles_of(author)) & MODERATORS)


@dataclass(frozen=True)
class Muted:
    """A mute in force: until when (None: until lifted) and why."""

    until: float | None
    reason: str

    def holds(self, now: float) -> bool:
        return self.until is None or now < self.until


class Control:
    """A node's side of the control channel: the poll, and each action carried out here."""

    def __init__(self, rooms: Rooms, announce: Callable[[str], int],
                 drop_devices: Callable[[str, Collection[int]], int] | None = None,
                 interval: float = POLL_INTERVAL) -> None:
        self.rooms = rooms
        self.drop_devices = drop_devices
        self.delivery = rooms.delivery
        self.announce = announce
        self.interval = interval
        self.mutes: dict[str, Muted] = {}  # player (as registered) -> the mute heard of here
        self.last = 0  # the newest action carried out (or found at start-up)
        self.acted = 0  # actions read here (carried out or failed), for the tests
        self.applied: Counter[str] = Counter()  # actions carried out here, by kind
        # how long each poll took: counts over metrics.LAG_BUCKETS and +Inf, and their sum
        self.poll_buckets = [0] * (len(LAG_BUCKETS) + 1)
        self.poll_seconds = 0.0
        self._task: asyncio.Task[None] | None = None
        self._pruned = 0.0
        self._register_metrics()

    def _register_metrics(self) -> None:
        metrics = self.rooms.metrics
        for kind in KINDS:
            applied = partial(self.applied.__getitem__, kind)  # 0 until one is carried out
            metrics.gauges[f'control_actions{{kind="{kind}"}}'] = applied
        metrics.counters.setdefault("control_action_failures", 0)  # in /metrics from the start
        metrics.histograms["control_poll_seconds"] = lambda: (self.poll_buckets,
                                                              self.poll_seconds)

    async def start(self) -> None:
        """Start polling after the newest action there is now."""
        self.last = await self.rooms.store.query(last_control())
        self._pruned = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(self._poll(), name="control")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _poll(self) -> None:
        failing = False  # the database was away at the last round: said once, not each round
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.poll()
            except StoreError as error:  # the database is away: the next round tries again
                if not failing:
                    log.warning("control: cannot read the control table: %s", error)
                failing = True
            except Exception:  # a bug must not stop the levers for good
                log.exception("control: the poll failed")
            else:
                if failing:
                    log.info("control: the control table is read again")
                failing = False

    async def poll(self) -> None:
        """Carry out every action written since the last one seen (timed for /metrics,
        whether it succeeds or not)."""
        started = time.perf_counter()
        try:
            await self._poll_once()
        finally:
            took = time.perf_counter() - started
            self.poll_buckets[bisect.bisect_left(LAG_BUCKETS, took)] += 1
            self.poll_seconds += took

    async def _poll_once(self) -> None:
        store = self.rooms.store
        for row_id, text in await store.query(control_since(self.last)):
            self.last = row_id
            self.acted += 1
            try:
                action = decode_action(text)
                await self.act(action)
            except (msgspec.ValidationError, msgspec.DecodeError):
                log.warning("control: action %d is not one this node knows: %s", row_id, text)
            except ServerError as error:
                log.warning("control: action %d failed here: %s", row_id, error)
            except Exception:
                log.exception("control: action %d failed here", row_id)
            else:
                self.applied[str(action.__struct_config__.tag)] += 1
                continue
            self.rooms.metrics.count("control_action_failures")
        if time.monotonic() - self._pruned > PRUNE_EVERY:
            self._pruned = time.monotonic()
            await store.apply(prune_control(time.time() - KEPT))

    async def act(self, action: Action) -> None:
        """Carry ``action`` out on this node (one case per action: mypy checks each has one)."""
        match action:
            case Say():
                self.announce(action.text)
            case Disconnect():
                sessions = self.delivery.of_player(action.name)
                if action.code == "banned" and sessions and not await self._banned(action.name):
                    sessions = []  # lifted before this node read it: these came after
                if action.devices is not None:
                    sessions = [s for s in sessions if s.device in action.devices]
                    self.rooms.forget_name(action.name, action.renamed)
                self._close(sessions, action.code, action.reason)
                # Their next hello reads their mutes again, under the name they have then:
                # a renamed or deleted player's mute stays with them, not with the name.
                self.forget_mute(action.name)
            case DisconnectAddress():
                self._close([s for s in self.delivery.sessions
                             if address_matches(action.address, s.peer)],
                            "banned", action.reason)
            case Mute():
                self.mutes[action.name] = Muted(action.until, action.reason)
            case Unmute():
                self.forget_mute(action.name)
            case EndGame():
                result = action.result
                await self._in_room(action.game, lambda room, name, now:
                                    room.end_by_host(result, now))
            case DropDevices():
                if self.drop_devices is not None:
                    self.drop_devices(action.name, action.devices)
            case RolesChanged():
                sessions = self.delivery.of_player(action.name)
                if sessions:
                    roles = await self.rooms.store.query(roles_of(action.name))
                    for session in sessions:
                        session.moderator = not roles.isdisjoint(MODERATORS)
                        if session.player is not None:  # a bot from now on, or no longer
                            session.player = replace(session.player, bot="bot" in roles)
            case RemoveChatLine():
                line = action.line
                if not action.admin and self.holds(action.game):
                    author = chat_author(self.rooms.held[action.game], line, self.rooms.now())
                    if await shielded(self.rooms.store, author, action.by):
                        raise ServerError(f"only an admin may remove {author}'s line",
                                          "not_moderator")
                await self._in_room(action.game, lambda room, name, now:
                                    Change(room.remove_chat(line, now)))
            case _:
                assert_never(action)

    async def _banned(self, name: str) -> bool:
        """Whether a ban of ``name`` is in force now. A ban lifted at once (the host's
        mistake undone) may be read here after its unban, when the player is back: the
        connections they opened since are not closed for it."""
        found = await self.rooms.store.query(sanctions_of(name, None, time.time()))
        return any(sanction.kind == "ban" for sanction in found)

    def note_mute(self, name: str, until: float | None, reason: str) -> None:
        """A mute of ``name`` found in the database (at their hello)."""
        self.mutes[name] = Muted(until, reason)

    def forget_mute(self, name: str) -> None:
        """No mute kept under ``name`` here any more (lifted, or the name's player changed)."""
        self.mutes.pop(name, None)

    def muted(self, name: str, now: float) -> Muted | None:
        """The mute in force on the player ``name``, if any (an expired one is forgotten)."""
        mute = self.mutes.get(name)
        if mute is not None and not mute.holds(now):
            del self.mutes[name]
            return None
        return mute

    def holds(self, game_id: str) -> bool:
        """Whether this node holds the game (the embedded server holds every room it has)."""
        rooms = self.rooms
        if game_id not in rooms.held:
            return False
        return (isinstance(rooms.ownership, SoleOwnership)
                or rooms.ownership.token(game_id) is not None)

    async def _in_room(self, game_id: str, decide: Decide) -> None:
        if self.holds(game_id):
            await self.rooms.act(Peer("", 0, ""), game_id, None, decide)

    def _close(self, sessions: list[Session], code: str, reason: str) -> None:
        for session in sessions:
            log.info("control: closing %r (%s)", session, code)
            session.send(Error(code=code, message=reason))
            session.close(CLOSE_POLICY, code)

