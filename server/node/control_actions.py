"""What the control channel carries: one msgspec Struct per action a lever writes, and their
text as the ``control`` table keeps it.

Apart from ``server.node.control``, which carries them out on a running node, so that a lever
written from the command line (``qubic admin``) imports no room, no engine and no numpy.
"""

from __future__ import annotations

from typing import get_args

import msgspec


class _Action(msgspec.Struct, tag_field="do", kw_only=True):
    pass


class Say(_Action, tag="announce"):
    """Tell every connection ``text`` (an ``announce`` message)."""

    text: str


class Disconnect(_Action, tag="disconnect"):
    """Close every connection of the player ``name`` (as registered) after an ``error`` with
    ``code`` and ``reason`` (a kick, a ban, a rename, a deletion).

    ``devices``: for a rename or a deletion, the player's devices when it was written. The
    name is free from then on and a newcomer may take it at once, before this node acts, so
    only the connections opened by those devices are closed, and the name is forgotten in the
    games this node still holds (a finished game's seat no longer answers to it; a rename's
    ``renamed``, the new name, answers to it instead)."""

    name: str
    code: str
    reason: str
    devices: tuple[int, ...] | None = None
    renamed: str | None = None


class DisconnectAddress(_Action, tag="disconnect_address"):
    """Close every connection from ``address`` (an address or a network): a ban of it."""

    address: str
    reason: str


class Mute(_Action, tag="mute"):
    """Refuse the player's chat until Unix time ``until`` (None: until unmuted)."""

    name: str
    until: float | None
    reason: str


class Unmute(_Action, tag="unmute"):
    name: str


class EndGame(_Action, tag="end_game"):
    """End the game with ``result`` (``1-0``, ``0-1``, ``1/2-1/2``, ``*``): its holder does."""

    game: str
    result: str


class DropDevices(_Action, tag="drop_devices"):
    """Close the connections of the player ``name``'s ``devices`` (their tokens were revoked:
    ``server.node.accounts``), each told ``token_revoked``."""

    name: str
    devices: list[int]


class RolesChanged(_Action, tag="roles"):
    """The player ``name``'s roles changed: their connections here read both chats of a game
    they watch only while they hold ``moderator`` or ``admin`` (read from the store)."""

    name: str


class RemoveChatLine(_Action, tag="remove_chat"):
    """Take the chat line numbered ``line`` out of the game: its holder does; unless
    ``admin`` (the actor, ``by``, is one), not a line another moderator or an admin said."""

    game: str
    line: int
    admin: bool = True
    by: str = ""


Action = (
    Say | Disconnect | DisconnectAddress | Mute | Unmute | EndGame | RemoveChatLine | DropDevices
    | RolesChanged
)
"""Every action the control channel carries."""

KINDS: tuple[str, ...] = tuple(str(kind.__struct_config__.tag) for kind in get_args(Action))
"""The ``do`` of every action, as ``/metrics`` labels them."""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Action)


def encode_action(action: Action) -> str:
    """The text of ``action`` as the control table keeps it."""
    return _encoder.encode(action).decode()


def decode_action(text: str) -> Action:
    return _decoder.decode(text)
