"""The wire protocol: every message a client and the server exchange, decoded in one place.

Client requests form the closed union ``ClientMessage`` (``decode_client_message`` or a
``ProtocolError`` with a stable ``ErrorCode``), server frames ``ServerMessage``. Pure (no
asyncio, no aiohttp): the terminal client imports it too. Every message is a ``gc=False``
Struct of plain data, so the collector need not track them. The modules: ``codes`` (limits and
error codes), ``field_types``, ``requests`` and ``events`` (with their ``learning_``,
``account_`` and ``tournament_`` parts) and ``wire``; everything else imports them from here.
docs/protocol.md is the prose."""

from server.protocol.account_events import *  # noqa: F403
from server.protocol.account_requests import *  # noqa: F403
from server.protocol.codes import *  # noqa: F403
from server.protocol.events import *  # noqa: F403
from server.protocol.field_types import *  # noqa: F403
from server.protocol.learning_events import *  # noqa: F403
from server.protocol.learning_requests import *  # noqa: F403
from server.protocol.requests import *  # noqa: F403
from server.protocol.tournament_events import *  # noqa: F403
from server.protocol.tournament_requests import *  # noqa: F403
from server.protocol.wire import *  # noqa: F403
