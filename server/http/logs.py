"""The server's log lines: plain text for a terminal, or one JSON object a line for a log
pipeline (``--log-format json``), and an access log of HTTP requests that a host can turn on.

A JSON line carries ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message`` and every field
a log call passes in ``extra`` (``node``, ``game``, ``player``, ``address``, ...), so a line about
a new player says from which address it came without parsing the message.
"""

from __future__ import annotations

import datetime
import json
import logging
from typing import Any, Literal

from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, Request, StreamResponse

from server.http.rate import client_of

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the record's extra fields, and
    the exception's text when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value if isinstance(value, str | int | float | bool | None) \
                    else str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: str = "info", log_format: LogFormat = "text") -> None:
    """Send the process's log lines to stderr at ``level``, as text or JSON lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json"
                         else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


class AccessLogger(AbstractAccessLogger):
    """One line an HTTP request (the websocket's upgrade included), on the ``qubic.access``
    logger, with its fields as ``extra`` for JSON lines. The address is the client's, as the
    limits take it (``server.http.rate.client_of``: behind a trusted proxy the forwarded one),
    written whole (the limits key an IPv6 address by its /64)."""

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        address = client_of(request) if isinstance(request, Request) else request.remote or ""
        self.logger.info(
            '%s "%s %s" %d %.1fms', address, request.method, request.path_qs, response.status,
            time * 1000,
            extra={"address": address, "method": request.method, "path": request.path,
                   "status": response.status, "ms": round(time * 1000, 1)})
