"""Who a bearer token is, decided in one place for every HTTP route that takes one.

``holder`` reads ``Authorization: Bearer <token>`` and asks ``server.node.accounts.identify``,
the websocket's own check, on every request; ``STATUS`` maps each refusal (``not_authenticated``,
``bad_token``, ``token_revoked``, ``banned``, ``not_admin``) to its HTTP status (docs/api.md,
"Tokens")."""

from __future__ import annotations

import re

from aiohttp import web

from server.errors import ServerError
from server.http.rate import client_of
from server.node.accounts import identify
from server.protocol import ErrorCode
from server.store.account_records import Holder
from server.store.base import Store

TOKEN = re.compile(r"[A-Za-z0-9_-]{1,128}")  # the form of every token the server gives out

STATUS: dict[str, int] = {
    ErrorCode.NOT_AUTHENTICATED: 401, ErrorCode.BAD_TOKEN: 401, ErrorCode.TOKEN_REVOKED: 401,
    ErrorCode.BANNED: 403, ErrorCode.NOT_ADMIN: 403,
}
"""The HTTP status of each refusal of a token."""

CHALLENGE = {"WWW-Authenticate": "Bearer"}  # sent with a 401


async def holder(store: Store, request: web.Request, *, required: bool = True,
                 admin: bool = False) -> Holder | None:
    """Who the bearer token of ``request`` is now (None: no header, when not ``required``);
    with ``admin``, they must be an admin now (``not_admin``). Refusals are ``ServerError`` with
    the codes of the module's list."""
    header = request.headers.get("Authorization")
    scheme, _, token = (header or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        if required or header is not None:
            raise ServerError("send your token: Authorization: Bearer <token>",
                              ErrorCode.NOT_AUTHENTICATED)
        return None
    if TOKEN.fullmatch(token) is None:
        raise ServerError("no player has this token", ErrorCode.BAD_TOKEN)
    held = await identify(store, token=token, address=client_of(request))
    if admin and "admin" not in held.roles:
        raise ServerError("only an admin may read this", ErrorCode.NOT_ADMIN)
    return held
