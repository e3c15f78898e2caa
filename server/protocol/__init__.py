"""The wire protocol: every message a client and the server exchange, decoded in one place.

Frames are JSON objects keyed by ``"t"``. Client requests form the closed union
``ClientMessage``; ``decode_client_message`` turns a frame into one of them or raises
``ProtocolError`` with a stable ``ErrorCode``. Server frames form ``ServerMessage``;
``decode_server_message`` is the client's side of the same contract. Pure: no asyncio, no
aiohttp, so the terminal client imports this module too. ``docs/protocol.md`` is the prose.

Every message is a ``gc=False`` Struct: it holds plain data only and is never part of a
reference cycle, so the garbage collector need not track the few a move makes under load.

The contract is split by direction: ``codes`` (limits and error codes), ``field_types`` (what
the fields of both directions hold), ``requests`` (client -> server: the session, the lobby and
the games, and the union of every request, with ``learning_requests`` and ``account_requests``
beside it on ``request_base``), ``events`` (server -> client: the game and the lobby, and the
union of every event, with ``learning_events`` and ``account_events`` beside it on
``event_base``) and ``wire`` (encoding and decoding); this package exports all of it, and
``from server.protocol import ...`` is how everything else reads it.
"""

from server.protocol.account_events import *  # noqa: F403
from server.protocol.account_requests import *  # noqa: F403
from server.protocol.codes import *  # noqa: F403
from server.protocol.events import *  # noqa: F403
from server.protocol.field_types import *  # noqa: F403
from server.protocol.learning_events import *  # noqa: F403
from server.protocol.learning_requests import *  # noqa: F403
from server.protocol.requests import *  # noqa: F403
from server.protocol.wire import *  # noqa: F403
