"""The sessions connected to this node, and sending them the events of the games they have open.

The rooms publish each change as one ``Batch`` on the game's bus topic; ``Delivery``
subscribes to the topic while a session here has the game open and sends each event to its
audience here, a reply only to its session, after the events. A session that opens a game
waits ``PENDING`` for its catch-up batch. A batch's ``seq`` is ``epoch << 32 | count``, the
epoch being its holder's fencing token (0 on one node): what ``Followers`` hears of a game's
holder and of replies (``server.node.room_interfaces``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

import msgspec

from server.game.records import PlayerRecord
from server.game.room import Audience, Outbound
from server.node.bus import Bus, Subscription
from server.node.session import Session
from server.protocol import ServerMessage, encode

log = logging.getLogger(__name__)


PENDING = -1
"""The ``seq`` of a session that opened a game and waits for its catch-up batch."""
EPOCH_BITS = 32


GAME_TOPIC = "game:"
"""The prefix of a game's bus topic (``game_topic``)."""


def game_topic(game_id: str) -> str:
    return GAME_TOPIC + game_id


class Peer(msgspec.Struct, frozen=True, gc=False):
    """A session as a game's owner sees it: its node, its id there, its player, and whether
    it has the game open (then the game's events, and a reply after them, reach it in the
    game's batches), and whether its player is a moderator (a game it watches shows it both
    chats). On the embedded server every peer's node is ``""``. (A frozen struct: made once
    a request.)"""

    node: str
    session: int
    name: str
    has_open: bool = False
    moderator: bool = False

    @classmethod
    def of(cls, session: Session, node: str = "", has_open: bool = False) -> Peer:
        player = session.player
        return cls(node, session.id, "" if player is None else player.name, has_open,
                   session.moderator)


class Item(msgspec.Struct, array_like=True, gc=False):
    """One event of a batch: its encoded frame and who it is for."""

    frame: bytes
    audience: str  # an Audience's value
    player: str | None = None  # for PLAYER and OTHERS
    session: int | None = None  # one connection's reply: only that session gets it ...
    node: str = ""  # ... on this node
    players: list[str] = []  # the seated players, for SEATS and SPECTATORS
    reply: bool = False  # the answer to one request (an ack, an error), not an event


class Batch(msgspec.Struct, array_like=True, gc=False):
    """What one change of a room published on its topic, and the node that published it
    (the game's owner: other nodes send the game's requests there)."""

    seq: int
    items: list[Item]
    owner: str = ""


_encode_batch = msgspec.msgpack.Encoder().encode
_decode_batch = msgspec.msgpack.Decoder(Batch).decode
ROOM, PLAYER, SEATS, SPECTATORS = (a.value for a in (Audience.ROOM, Audience.PLAYER,
                                                      Audience.SEATS, Audience.SPECTATORS))
"""The audiences' values, compared without reading ``.value`` (two calls) a message."""


def pack(
    seq: int, events: Iterable[Outbound], only: Peer | None = None,
    reply: ServerMessage | None = None, owner: str = "",
) -> bytes:
    """A batch of ``events``; with ``only``, the events for one player go to that session
    alone (a catch-up), and ``reply`` goes last to ``only``."""
    items = [
        Item(encode(event.message), PLAYER, event.player, only.session, only.node)
        if only is not None and event.audience is Audience.PLAYER else
        Item(encode(event.message), event.audience._value_, event.player,
             players=list(event.players))
        for event in events
    ]
    if reply is not None:
        assert only is not None
        items.append(Item(encode(reply), PLAYER, only.name, only.session, only.node,
                          reply=True))
    return _encode_batch(Batch(seq, items, owner))


class Followers(Protocol):
    """Who hears what the games' batches say of their holders and replies (a cluster node
    follows its sessions' games across owners; the embedded server has nobody)."""

    def owner_changed(self, game_id: str) -> None:
        """The game's batches come from a new holder (a newer epoch)."""

    def owner_heard(self, game_id: str, node: str) -> None:
        """A batch of the game came from ``node``, which holds it."""

    def replied(self, session: int, frame: bytes) -> None:
        """A reply (``frame``) reached ``session``."""

    def rejoin(self, game_id: str, sessions: list[Session]) -> None:
        """``sessions`` opened the game with an owner since deposed (its reply came in a
        batch older than the newest owner's): they open it again with the one holding it."""


class Delivery:
    """The sessions connected here, by player and by open game; see the module docstring.
    ``followers`` hears of the games' holders and of replies."""

    def __init__(self, bus: Bus, node: str = "", followers: Followers | None = None) -> None:
        self.bus = bus
        self.node = node
        self.followers = followers
        self.stale_batches = 0  # batches of an older owner heard after a newer one's
        self._epochs: dict[str, int] = {}  # game -> the newest owner epoch heard of here
        self.sessions: set[Session] = set()
        self._by_id: dict[int, Session] = {}
        self.by_player: dict[str, set[Session]] = defaultdict(set)
        # game -> the sessions here that have it open, each with the game's publish sequence
        # number when it opened it (it has everything up to there already)
        self.audience: dict[str, dict[Session, int]] = {}
        self._subscriptions: dict[str, asyncio.Task[Subscription]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- who is here -----------------------------------------------------------------------

    def connected(self, session: Session) -> None:
        self.sessions.add(session)
        self._by_id[session.id] = session

    def identified(self, session: Session, player: PlayerRecord) -> None:
        """``session`` has said hello as ``player``."""
        session.player = player
        self.by_player[player.name].add(session)

    def disconnected(self, session: Session) -> bool:
        """Forget ``session``; whether it was its player's last connection here."""
        self.sessions.discard(session)
        self._by_id.pop(session.id, None)
        name = session.name
        if name is None:
            return False
        self.by_player[name].discard(session)
        if self.by_player[name]:
            return False
        del self.by_player[name]
        return True

    @property
    def online(self) -> int:
        """Players with at least one connection here."""
        return len(self.by_player)

    def of_player(self, name: str) -> list[Session]:
        """``name``'s connections here (a copy: callers may open rooms while iterating)."""
        return list(self.by_player.get(name, ()))

    def rating(self, name: str) -> float | None:
        """``name``'s rating as a connection of theirs knows it, if one is here."""
        for session in self.by_player.get(name, ()):
            if session.player is not None:
                return session.player.rating
        return None

    def is_bot(self, name: str) -> bool | None:
        """Whether ``name`` is a bot, as a connection of theirs knows it (None: none here)."""
        for session in self.by_player.get(name, ()):
            if session.player is not None:
                return session.player.bot
        return None

    def refresh(self, name: str, record: PlayerRecord) -> None:
        """Give every connection of ``name`` its fresh ``record`` (a new rating)."""
        for session in self.by_player.get(name, ()):
            session.player = record

    # -- open games ------------------------------------------------------------------------

    def has_open(self, session: Session, game_id: str) -> bool:
        return session in self.audience.get(game_id, ())

    def session(self, session_id: int) -> Session | None:
        """The session here with this id, if it is still connected."""
        return self._by_id.get(session_id)

    async def open(self, session: Session, game_id: str, seq: int) -> None:
        """``session`` opens the game, holding its state as of publish number ``seq`` (or
        ``PENDING``: until its catch-up comes); returns once the game's events reach this
        node. A session that has the game open already keeps what it had."""
        session.rooms.add(game_id)
        self.audience.setdefault(game_id, {}).setdefault(session, seq)
        epoch = seq >> EPOCH_BITS  # the owner's whose state it holds (a game started here):
        if seq > 0 and epoch > self._epochs.get(game_id, -1):  # a batch of a newer owner
            self._epochs[game_id] = epoch  # (handed it before any batch came) rejoins it
        subscribing = self._subscriptions.get(game_id)
        if subscribing is None:
            subscribing = asyncio.ensure_future(
                self.bus.subscribe(game_topic(game_id), self._received)
            )
            self._subscriptions[game_id] = subscribing
        await asyncio.shield(subscribing)

    def close(self, session: Session, game_id: str) -> bool:
        """``session`` closes the game; whether its player still has it open elsewhere."""
        session.rooms.discard(game_id)
        audience = self.audience.get(game_id, {})
        audience.pop(session, None)
        if not audience:
            self._unsubscribe(game_id)
        name = session.name
        return name is not None and any(s.name == name for s in audience)

    def forget(self, game_id: str) -> None:
        """The game is gone from this server: no session has it open any more."""
        for session in self.audience.get(game_id, {}):
            session.rooms.discard(game_id)
        self._unsubscribe(game_id)

    def _unsubscribe(self, game_id: str) -> None:
        self.audience.pop(game_id, None)
        self._epochs.pop(game_id, None)
        subscribing = self._subscriptions.pop(game_id, None)
        if subscribing is not None:
            task = asyncio.ensure_future(self._cancel(subscribing))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _cancel(subscribing: asyncio.Task[Subscription]) -> None:
        try:
            subscription = await subscribing
        except Exception:  # the subscription never came about: nothing to cancel
            return
        await subscription.cancel()

    def send_to(self, peer: Peer, message: ServerMessage) -> None:
        """Send one message to one session here (the embedded server's ``Replies``)."""
        session = self._by_id.get(peer.session)
        if session is not None:
            session.send(message)

    # -- delivering ------------------------------------------------------------------------

    def _received(self, topic: str, message: bytes) -> None:
        """A batch published for a game: each event to its audience among its sessions here
        that opened the game before the batch was published (a pending session from the
        batch addressed to it on)."""
        batch = _decode_batch(message)
        game_id = topic[5:]  # less "game:" (game_topic)
        audience = self.audience.get(game_id)
        if not audience:
            return
        epoch = batch.seq >> EPOCH_BITS
        known = self._epochs.get(game_id)
        if known is None or epoch > known:
            self._epochs[game_id] = epoch
            if known is not None and self.followers is not None:
                self.followers.owner_changed(game_id)
        stale = known is not None and epoch < known
        if stale:  # a deposed owner's late batch (woken from a pause): its events are older
            self.stale_batches += 1  # than the state the new owner sent; only replies pass
        elif batch.owner and self.followers is not None:
            self.followers.owner_heard(game_id, batch.owner)
        node, by_id = self.node, self._by_id
        deposed: list[Session] = []
        for item in batch.items:  # a pending session addressed here has its catch-up now
            if item.session is not None and item.node == node:
                addressed = by_id.get(item.session)  # (found without a scan)
                if addressed is not None and audience.get(addressed) == PENDING:
                    audience[addressed] = batch.seq - 1
                    if stale:  # it was seated or counted by an owner that has let go: the
                        deposed.append(addressed)  # new one knows it not
        present = [s for s, opened in audience.items() if opened < batch.seq and opened >= 0]
        for item in batch.items:
            if stale and not item.reply:  # (a catch-up too: its state is older than the
                continue  # newer owner's, which rejoins the session)
            if item.session is not None:  # a reply: always its session's, even from an
                if item.node != node:  # older owner's batch that arrives after a newer one's
                    continue
                replied = self._by_id.get(item.session)  # (found without a scan)
                targets: Iterable[Session] = (
                    (replied,) if replied is not None and replied in audience
                    else [s for s in audience if s.id == item.session])
                if self.followers is not None:
                    self.followers.replied(item.session, item.frame)
            elif item.audience == ROOM:
                targets = present
            elif item.audience == PLAYER:
                targets = [s for s in present if s.name == item.player]
            elif item.audience == SEATS:  # and the moderators watching
                targets = [s for s in present if s.name in item.players or s.moderator]
            elif item.audience == SPECTATORS:
                targets = [s for s in present if s.name not in item.players]
            else:
                targets = [s for s in present if s.name != item.player]
            for session in targets:
                session.send_raw(item.frame)
        if deposed and self.followers is not None:
            self.followers.rejoin(game_id, deposed)

    async def close_all(self, code: int, reason: str) -> None:
        for session in list(self.sessions):
            session.close(code, reason)
        for subscribing in self._subscriptions.values():
            subscribing.cancel()
        await asyncio.gather(*self._subscriptions.values(), *self._tasks,
                             return_exceptions=True)
