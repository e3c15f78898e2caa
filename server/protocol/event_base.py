"""The two bases of every server -> client struct, apart so that each module of events builds
on them: ``events`` (the game and the lobby), ``learning_events`` (puzzles and reviews) and
``account_events`` (devices, passwords, moderation)."""

from __future__ import annotations

import msgspec


class _Value(msgspec.Struct, kw_only=True, gc=False):
    """A value nested in a message: no tag of its own."""


class _Event(msgspec.Struct, tag_field="t", kw_only=True, gc=False):
    """A message, tagged by ``"t"``: one member of ``ServerMessage``."""


class _GameEvent(_Event):
    """An event about one game, the one ``game`` names (its first field on the wire)."""

    game: str
