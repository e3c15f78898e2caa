"""The base of every client -> server request, apart so that each module of requests builds on
it: ``requests`` (the session, the lobby and the games, and the union of every request),
``learning_requests`` (puzzles and reviews) and ``account_requests`` (passwords, devices and
moderation)."""

from __future__ import annotations

import msgspec

from server.protocol.field_types import RequestId


class _Request(
    msgspec.Struct,
    tag_field="t",
    forbid_unknown_fields=True,
    omit_defaults=True,
    kw_only=True,
    gc=False,
):
    """A request, tagged by ``"t"``: one member of ``ClientMessage``; ``id``, when given, comes
    back as the ``ref`` of its reply."""

    id: RequestId | None = None
