"""Every message between cluster nodes, as msgpack on the bus (lila-ws's ``ipc``: one file).

Games. On a node's topic ``node:{id}``: a request forwarded to the game's owner (``Forward``),
a reply to one session outside a game's batch (``Reply``), a game handed to the node
(``HandOff``) and the node's echo to itself (``Echo``). On the ``cluster`` topic: a game
started (``Started``) and a node leaving (``Leaving``).

The lobby (``server.cluster.lobby``). On ``lobby:requests``, for the node holding the lobby: a
session's lobby request (``Ask``), what a node has to report (``Report``) and a question for
the challenges waiting for a player (``Waiting``). On ``lobby``, from the holder to every node:
a request's replies (``Answer``), a message for one player (``Tell``), one for every
subscriber (``Delta``), a new holder (``Holder``) and a holder gone (``Vacant``).

Every message goes on the bus as msgpack by the one ``encode_message``, and comes off it by the
decoder of its topic's kind: ``decode_envelope`` (a node's topic, the cluster topic) or
``decode_lobby`` (the lobby's topics).
"""

from __future__ import annotations

import msgspec

from server.node.routing import RoomRequest

CLUSTER_TOPIC = "cluster"
REQUESTS_TOPIC = "lobby:requests"
LOBBY_TOPIC = "lobby"

# -- games ----------------------------------------------------------------------------------


class Envelope(msgspec.Struct, tag_field="k", array_like=True):
    """A message on a node's topic or the cluster topic."""


class Forward(Envelope, tag="f"):
    """A session's game request, for the game's owner: the typed request itself, decoded
    once with the envelope."""

    request: RoomRequest
    node: str  # the session's node ...
    session: int  # ... and its id there
    name: str
    has_open: bool
    hops: int = 0
    moderator: bool = False  # a moderator's session: hears both chats of a game it watches


    @property
    def game(self) -> str:
        return self.request.game


class Reply(Envelope, tag="r"):
    """A message for one session on the receiving node (a reply outside a game's batch)."""

    session: int
    frame: bytes
    failed_watch: str | None = None  # the game a refused watch had opened (pending) here


class Started(Envelope, tag="s"):
    """A game started on ``node`` with these players: open it for their sessions here."""

    node: str
    game: str
    players: list[str]


class Leaving(Envelope, tag="l"):
    """``node`` is shutting down and has released these games' leases: claim them now."""

    node: str
    games: list[str]


class HandOff(Envelope, tag="h"):
    """The receiving node now holds this game's lease (``Leases.transfer``): load it."""

    game: str


class Echo(Envelope, tag="e"):
    """A node's message to itself, to measure the bus's lag."""

    sent: float


# -- the lobby ------------------------------------------------------------------------------


class LobbyEnvelope(msgspec.Struct, tag_field="k", array_like=True):
    """A message on the lobby's topics."""


class Ask(LobbyEnvelope, tag="a"):
    """A session's lobby request, for the holder."""

    node: str
    session: int
    seq: int  # the asking node's count, to match the answer
    name: str
    rating: float
    frame: bytes


class Waiting(LobbyEnvelope, tag="w"):
    """A node asks the holder for the challenges to ``name`` waiting for an answer (a bot's
    event stream opens with them); the ``Answer`` (session 0) holds a ``challenge`` frame
    for each."""

    node: str
    seq: int
    name: str


class Report(LobbyEnvelope, tag="p"):
    """What a node tells the holder: players connected there (with their ratings) and
    gone, the games it owns that the lobby lists and those it no longer lists; ``full``:
    this is everything (anything else reported from the node before is gone)."""

    node: str
    players: list[tuple[str, float]]
    left: list[str]
    games: list[bytes]  # GameSummary as JSON
    hidden: list[str]
    full: bool = False
    bots: list[str] = []  # the players of ``players`` that are bot accounts


class Answer(LobbyEnvelope, tag="A"):
    """The holder's replies to one request, for its session."""

    node: str
    session: int
    seq: int
    frames: list[bytes]
    subscribe: bool = False
    started: bool = False  # a game-starting request of a session on another node succeeded


class Tell(LobbyEnvelope, tag="T"):
    """A message for every connection of one player."""

    name: str
    frame: bytes


class Delta(LobbyEnvelope, tag="D"):
    """A message for every lobby subscriber (a ``lobby_delta``, or a fresh ``lobby``)."""

    frame: bytes


class Holder(LobbyEnvelope, tag="H"):
    """``node`` holds the lobby now: every node reports everything to it."""

    node: str


class Vacant(LobbyEnvelope, tag="V"):
    """The holder stopped and released the lease: take it now."""

    node: str


# -- on the bus -----------------------------------------------------------------------------

encode_message = msgspec.msgpack.Encoder().encode
decode_envelope = msgspec.msgpack.Decoder(
    Forward | Reply | Started | Leaving | HandOff | Echo).decode
decode_lobby = msgspec.msgpack.Decoder(
    Ask | Report | Waiting | Answer | Tell | Delta | Holder | Vacant).decode
