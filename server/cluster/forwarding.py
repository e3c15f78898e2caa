"""Cluster mode's routing: a session's game request goes to the game's owner node.

A request for a game this node does not own goes over the bus to the owner's topic
``node:{id}`` as a ``Forward`` (the typed request, the player, the origin node and session);
the owner carries it out and its batch reaches every node's ``Delivery``. With no owner, the
node claims the game and acts. The origin keeps each forwarded request until its answer comes
(``server.cluster.awaiting``), and its sessions follow the games they have open across owners.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec

from server.cluster.awaiting import Asked, Awaiting
from server.cluster.messages import Envelope, Forward, Reply, Started
from server.cluster.ownership import ClusterOwnership
from server.errors import ServerError, StoreError
from server.metrics import Metrics
from server.node.delivery import PENDING, Delivery, Peer
from server.node.rooms import RoomMoved
from server.node.routing import Here, Join, Leave, RoomRequest, Unavailable
from server.node.session import Session
from server.protocol import (
    ErrorCode,
    RequestId,
    ServerMessage,
    Watch,
    encode,
    error_message,
)

MAX_HOPS = 4  # a request forwarded more often than this (ownership moving) is refused


class Forwarding:
    """A cluster node's ``Owners`` (``server.node.routing``): a request is carried out
    ``here`` if this node owns the game, else sent to its owner; see the module docstring.
    ``publish`` and ``spawn`` as for ``ClusterOwnership``; ``started_ref`` gives the id of a
    session's request that started a game, if the lobby has one waiting
    (``ClusterLobby.started_ref``)."""

    def __init__(
        self, here: Here, delivery: Delivery, ownership: ClusterOwnership, metrics: Metrics,
        publish: Callable[[str, Envelope], None], spawn: Callable[[Any, str], None],
        started_ref: Callable[[Session], RequestId | None],
    ) -> None:
        self.here = here
        self.delivery = delivery
        self.node = ownership.node
        self.ownership = ownership
        self.bus = ownership.bus
        self.metrics = metrics
        self.ttl = ownership.ttl
        self._publish = publish
        self._spawn = spawn
        self.started_ref = started_ref
        self.forwarded = 0
        self.awaiting = Awaiting()  # this node's requests sent to another node
        self._leaving: dict[tuple[int, str], asyncio.Event] = {}  # leaves not yet sent

    # -- the sessions' side ------------------------------------------------------------------

    async def carry_out(self, peer: Peer, request: RoomRequest) -> None:
        leaving = self._leaving.get((peer.session, request.game))
        if leaving is not None and not isinstance(request, Leave):
            await leaving.wait()  # the owner hears of the leave before what came after it
        await self.route(_forward(peer, request))

    def leave(self, peer: Peer, game_id: str) -> None:
        """``peer`` closed the game: its owner hears of it before any later request of the
        same session about the game (at once when the owner is known, else the later
        requests wait for the leave to be sent)."""
        ownership = self.ownership
        if ownership.owns(game_id):
            self.here.leave(peer, game_id)
            return
        holder = ownership.owners.get(game_id)
        if holder is not None and holder != self.node and holder in ownership.alive \
                and self.bus.connected:
            ownership.found(game_id, holder)  # (once closed here by everyone: forgotten)
            self._publish(f"node:{holder}", _forward(peer, Leave(game=game_id), hops=1))
            return
        key = (peer.session, game_id)
        sent = self._leaving[key] = asyncio.Event()

        async def send() -> None:
            try:
                await self.carry_out(peer, Leave(game=game_id))
            finally:
                sent.set()
                if self._leaving.get(key) is sent:
                    del self._leaving[key]

        self._spawn(send(), f"leave-{game_id}")

    async def route(self, forward: Forward) -> None:
        """Carry the request out here if this node owns the game, else send it to the
        owner; with no owner, claim the game first. Refusals raise ``ServerError``; with
        the bus cut off, ``Unavailable`` (even here: nobody would hear what changed)."""
        request = forward.request
        game_id = request.game
        leave = isinstance(request, Leave)
        ownership = self.ownership
        if not self.bus.connected and not leave:
            raise Unavailable("the cluster cannot be reached (Redis); try again", self.ttl)
        for _ in range(3):
            if ownership.owns(game_id):
                peer = Peer(forward.node, forward.session, forward.name, forward.has_open,
                            forward.moderator)
                try:
                    await self.here.carry_out(peer, request)
                except RoomMoved:
                    continue  # handed off or lost while it waited for the room's lock
                except StoreError as error:
                    if error.code == "fenced" and game_id in ownership.held:
                        ownership.lose(game_id)  # another node has claimed it: stop at once
                    raise
                return
            holder = ownership.owners.get(game_id) if forward.hops == 0 else None
            if holder is None or holder not in ownership.alive:  # not known, or gone since
                holder = await ownership.holder(game_id)
            if holder is not None and holder != self.node:
                if forward.hops >= MAX_HOPS:
                    raise Unavailable("the game is changing hands; try again", self.ttl)
                ownership.found(game_id, holder)  # (a leave, once closed here: forgotten)
                self.forwarded += 1
                hop = msgspec.structs.replace(forward, hops=forward.hops + 1)
                if forward.node == self.node and request.id is not None:
                    now = asyncio.get_running_loop().time()
                    self.awaiting.sent(forward.session, Asked(
                        request.id, game_id, isinstance(request, Watch), holder, now))
                self._publish(f"node:{holder}", hop)
                return
            if leave:
                return  # nobody holds it: there is nobody to tell
            if ownership.handing_over:
                raise ServerError("the server is shutting down", ErrorCode.SHUTTING_DOWN)
            await ownership.claim(game_id)
        raise Unavailable("the game's owner cannot be reached; try again", self.ttl)

    async def games_of(self, name: str) -> list[str]:
        return await self.ownership.games_of(name)

    # -- replies -----------------------------------------------------------------------------

    def send_to(self, peer: Peer, message: ServerMessage, failed_watch: str | None = None
                ) -> None:
        """Send one message to one session, here or on its node (the rooms' ``Replies``)."""
        if peer.node == self.node:
            session = self.delivery.session(peer.session)
            if session is not None:
                session.send(message)
            return
        self._publish(f"node:{peer.node}", Reply(peer.session, encode(message), failed_watch))

    def replied(self, reply: Reply) -> None:
        """A reply from another node for a session here."""
        self.awaiting.answered(reply.session, reply.frame)
        session = self.delivery.session(reply.session)
        if session is None:
            return
        session.send_raw(reply.frame)
        game_id = reply.failed_watch
        if game_id is not None and self.delivery.audience.get(game_id, {}).get(
                session) == PENDING:
            self._close(session, game_id)

    def not_sent(self, forward: Forward, exc: BaseException) -> None:
        """A forward could not be published: a request of a session here is answered
        ``unavailable`` at once."""
        if forward.node == self.node:
            asked = self.awaiting.take(forward.session, forward.request.id)
            if asked is not None:
                self._unavailable(forward.session, asked, "the cluster cannot be "
                                  f"reached: {exc}")

    def check_deadlines(self) -> None:
        """Answer ``unavailable`` to requests sent to another node that had no answer in
        time (``Awaiting.expired``)."""
        ownership = self.ownership

        def gone(node: str) -> bool:  # ("": the game has moved since: nobody will answer)
            return not self.bus.connected or node not in ownership.alive or node in ownership.dead

        for session, asked in self.awaiting.expired(asyncio.get_running_loop().time(),
                                                    2 * self.ttl, gone):
            self._unavailable(session, asked, "the game's owner did not answer (it may have "
                              "stopped; another node takes the game over)")

    def _unavailable(self, session_id: int, asked: Asked, why: str) -> None:
        session = self.delivery.session(session_id)
        if session is None:
            return
        error = Unavailable(why, self.ttl)
        self.metrics.error(error.code)
        session.send(error_message(error, asked.ref))
        if asked.watch and self.delivery.audience.get(asked.game, {}).get(
                session) == PENDING:
            self._close(session, asked.game)

    def _close(self, session: Session, game_id: str) -> None:
        """A watch failed: the game is closed for the session, and where its owner is is
        forgotten if no session here has it open now."""
        self.delivery.close(session, game_id)
        if game_id not in self.delivery.audience:
            self.ownership.owners.pop(game_id, None)

    # -- the owner's side --------------------------------------------------------------------

    async def remote(self, forward: Forward) -> None:
        """A request forwarded from another node (or bounced back to this one)."""
        request = forward.request
        try:
            await self.route(forward)
        except ServerError as error:
            self.metrics.error(error.code)
            if isinstance(request, Leave | Join):
                return  # nobody waits for an answer
            peer = Peer(forward.node, forward.session, forward.name)
            failed = request.game if isinstance(request, Watch) else None
            self.send_to(peer, error_message(error, request.id), failed)

    # -- sessions following their games ------------------------------------------------------

    def started_elsewhere(self, started: Started) -> None:
        """A game started on another node: open it for its players' sessions here."""
        for name in started.players:
            for session in self.delivery.of_player(name):
                self._spawn(self._join(session, started.game), f"join-{started.game}")

    async def _join(self, session: Session, game_id: str, pending: bool = True) -> None:
        """Open the game for a session here with its owner (a catch-up comes, no ack)."""
        if pending:
            await self.delivery.open(session, game_id, PENDING)
        if self.ownership.handing_over or session.closed:
            return
        peer = Peer.of(session, self.node, True)
        ref = self.started_ref(session) if pending else None
        if ref is None:
            await self.carry_out(peer, Join(game=game_id))
        else:  # its game as the reply to the request that started it, as on one node
            await self.carry_out(peer, Watch(game=game_id, id=ref))

    def owner_heard(self, game_id: str, node: str) -> None:
        """A batch of the game came from ``node``, its owner: the game's requests go there
        from now on, and those already sent elsewhere (to a node that passed them on) wait
        on it (so that a request whose owner dies is refused within about 2 x ttl, not held
        by the lobby's node it went through)."""
        if self.ownership.owners.get(game_id) == node:
            return
        if len(self.awaiting):
            self.awaiting.moved(game_id, node)
        if node != self.node:
            self.ownership.found(game_id, node)

    def new_owner(self, game_id: str) -> None:
        """A game's batches come from a new owner: it has nobody present, so every session
        here that has the game open joins it again (and gets its state afresh)."""
        self.ownership.owners.pop(game_id, None)
        self.rejoin(game_id, list(self.delivery.audience.get(game_id, {})))

    def rejoin(self, game_id: str, sessions: list[Session]) -> None:
        """Sessions here that hold the game as an owner that has since let it go had it (a
        new owner's batches came, or the old owner's reply after them): the new owner has
        nobody present but those who joined it, so these join it (and get its state afresh)."""
        if self.ownership.handing_over:
            return
        for session in sessions:
            self._spawn(self._join(session, game_id, pending=False), f"rejoin-{game_id}")

    def resync(self) -> None:
        """The bus was cut off and is back: what was published meanwhile is lost, so every
        session here that has a game open gets its state afresh from the owner."""
        for game_id in list(self.delivery.audience):
            self.new_owner(game_id)


def _forward(peer: Peer, request: RoomRequest, hops: int = 0) -> Forward:
    """``peer``'s ``request`` as it travels to the game's owner."""
    return Forward(request, peer.node, peer.session, peer.name, peer.has_open, hops=hops,
                   moderator=peer.moderator)
