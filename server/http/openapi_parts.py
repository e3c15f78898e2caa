"""The pieces the OpenAPI document repeats: an answer's description, a path's id, a page's
``limit``. ``server.http.api`` and ``server.http.admin_api`` build their paths from them, so
one parameter reads the same wherever it stands."""

from __future__ import annotations

from typing import Any


def answer(schema: dict[str, Any], what: str) -> dict[str, Any]:
    """A JSON response: ``what`` it is and its ``schema``."""
    return {"description": what, "content": {"application/json": {"schema": schema}}}


def path_parameter(name: str, pattern: str) -> dict[str, Any]:
    """The path's ``{name}``, a string matched whole by ``pattern``."""
    return {"name": name, "in": "path", "required": True,
            "schema": {"type": "string", "pattern": f"^{pattern}$"}}


def limit_parameter(most: int, default: int) -> dict[str, Any]:
    """The optional ``limit`` of a page: 1 to ``most`` entries, ``default`` when left out."""
    return {"name": "limit", "in": "query", "required": False,
            "schema": {"type": "integer", "minimum": 1, "maximum": most, "default": default}}
