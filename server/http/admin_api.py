"""The admin API: ``GET /api/admin/audit``, the audit log, for admins only (docs/api.md).

An admin authenticates as on the websocket, by the secret token of a player who holds the
role ``admin`` (``qubic admin grant NAME admin``), sent as ``Authorization: Bearer <token>``.
The token is checked as on every route that takes one (``server.http.tokens``): no header
(or another scheme) is refused with 401 ``not_authenticated``, a token of nobody with 401
``bad_token``, a device logged out with 401 ``token_revoked``, a banned player (or address)
with 403 ``banned``, a player who is not an admin now with 403 ``not_admin``; each answer
says nothing else.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import msgspec
from aiohttp import web

from server.errors import ServerError
from server.http import tokens
from server.http.openapi_parts import answer, limit_parameter
from server.node import levers
from server.node.hub import Hub
from server.protocol import ErrorCode

AUDIT_MAX = 500


class ApiAuditEntry(msgspec.Struct, kw_only=True):
    """One action: ``actor`` did ``action`` to ``target`` at Unix time ``at``, because
    ``reason``; ``detail`` is what else the action took (a role, a duration, a result)."""

    id: int
    at: float
    actor: str
    action: str
    target: str | None
    reason: str | None
    detail: str | None


class ApiAudit(msgspec.Struct, kw_only=True):
    """The newest entries first; ``before`` for the next page (null: no more)."""

    entries: list[ApiAuditEntry]
    before: int | None


class ApiRefusal(msgspec.Struct, kw_only=True):
    code: str
    message: str


def add_admin_api(app: web.Application, hub_key: web.AppKey[Hub]) -> None:
    """Route ``/api/admin/*`` on ``app``, whose ``hub_key`` holds the hub."""
    app.router.add_get("/api/admin/audit", partial(api_admin_audit, hub_key))


def _refuse(status: int, code: ErrorCode, message: str) -> web.HTTPException:
    text = msgspec.json.encode(ApiRefusal(code=code.value, message=message)).decode()
    kind = {400: web.HTTPBadRequest, 401: web.HTTPUnauthorized, 403: web.HTTPForbidden}[status]
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return kind(text=text, content_type="application/json", headers=headers)


async def admin_of(hub: Hub, request: web.Request) -> str:
    """The admin making ``request``, by the bearer token (``server.http.tokens``, as every
    route that takes a token); refused as the module says."""
    try:
        held = await tokens.holder(hub.store, request, admin=True)
    except ServerError as error:
        if error.code not in tokens.STATUS:
            raise
        message = (error.message if error.code != ErrorCode.NOT_AUTHENTICATED
                   else "send an admin's token: Authorization: Bearer <token>")
        raise _refuse(tokens.STATUS[error.code], ErrorCode(error.code), message) from None
    assert held is not None
    return held.player.name


def _number(request: web.Request, key: str, default: int | None, low: int, high: int
            ) -> int | None:
    text = request.query.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise _refuse(400, ErrorCode.BAD_MESSAGE, f"`{key}` is a whole number {low}-{high}")
    return value


async def api_admin_audit(hub_key: web.AppKey[Hub], request: web.Request) -> web.Response:
    hub = request.app[hub_key]
    await admin_of(hub, request)
    limit = _number(request, "limit", 50, 1, AUDIT_MAX)
    before = _number(request, "before", None, 1, 2**62)
    assert limit is not None
    entries = await levers.audit(hub.store, limit, before)
    page = ApiAudit(entries=[ApiAuditEntry(**e.as_dict()) for e in entries],
                    before=entries[-1].id if len(entries) == limit else None)
    return web.Response(body=msgspec.json.encode(page), content_type="application/json")


def admin_paths() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The admin API's OpenAPI paths, the schemas they use and its security scheme."""
    (audit, refusal), components = msgspec.json.schema_components(
        [ApiAudit, ApiRefusal], ref_template="#/components/schemas/{name}")

    paths = {"/api/admin/audit": {"get": {
        "summary": "The audit log, newest first (an admin's token only)",
        "security": [{"adminToken": []}],
        "parameters": [
            limit_parameter(AUDIT_MAX, 50),
            {"name": "before", "in": "query", "required": False,
             "description": "entries older than this id (the previous page's `before`)",
             "schema": {"type": "integer", "minimum": 1}}],
        "responses": {
            "200": answer(audit, "the entries"),
            "400": answer(refusal, "`bad_message`: a bad limit or before"),
            "401": answer(refusal, "`not_authenticated` (no bearer token), `bad_token` or "
                                   "`token_revoked` (the device was logged out)"),
            "403": answer(refusal, "`not_admin`: the token's player is not an admin; "
                                   "`banned`: the player or the address is banned")}}}}
    security = {"adminToken": {"type": "http", "scheme": "bearer",
                               "description": "the token of a player with the role admin"}}
    return paths, components, security
