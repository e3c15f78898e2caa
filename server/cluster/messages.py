"""The messages between cluster nodes about games, as msgpack on the bus.

On a node's topic ``node:{id}``: a request forwarded to the game's owner (``Forward``), a
reply to one session outside a game's batch (``Reply``), a game handed to the node
(``HandOff``) and the node's echo to itself (``Echo``). On the ``cluster`` topic: a game
started (``Started``) and a node leaving (``Leaving``). The lobby's messages are
``server.cluster.lobby``'s own.
"""

from __future__ import annotations

import msgspec

CLUSTER_TOPIC = "cluster"


class Envelope(msgspec.Struct, tag_field="k", array_like=True):
    """A message on a node's topic or the cluster topic."""


class Forward(Envelope, tag="f"):
    """A session's game request, for the game's owner."""

    kind: str  # "act", "watch", "hint", "leave" or JOIN
    game: str
    frame: bytes  # the client's request as it sent it (empty for leave and join)
    node: str  # the session's node ...
    session: int  # ... and its id there
    name: str
    has_open: bool
    hops: int = 0


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


encode_envelope = msgspec.msgpack.Encoder().encode
decode_envelope = msgspec.msgpack.Decoder(
    Forward | Reply | Started | Leaving | HandOff | Echo).decode
