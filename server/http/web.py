"""The web client's HTTP side: ``/`` serves the page, ``/static/<digest>/...`` its files.

The files come from ``client_web`` (package data). At start the whole static tree is hashed;
the page points at ``/static/<digest>/js/main.js`` so every file under it (the modules import
each other by relative URL) can be cached for a year as immutable, and a new release gets a
new digest. The page itself is revalidated on every load (``no-cache`` with an ETag). Every
response of these routes carries a strict Content-Security-Policy: scripts, styles and the
websocket only from this origin, no inline script or style, no frames, no plugins.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from aiohttp import web

from client_web import STATIC_DIR

CSP = "; ".join([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
])
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
STATIC_PREFIX = "/static/"
DIGEST_PLACEHOLDER = "{{static}}"


def static_digest(root: Path) -> str:
    """A short hash of every file's path and content under ``root``."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]


class WebClient:
    """The page and the static files of one release of the web client."""

    def __init__(self, root: Path = STATIC_DIR) -> None:
        self.root = root
        self.digest = static_digest(root)
        self.base = f"{STATIC_PREFIX}{self.digest}"
        template = (root / "index.html").read_text(encoding="utf-8")
        self.page = template.replace(DIGEST_PLACEHOLDER, self.base).encode("utf-8")
        self.page_etag = f'"{hashlib.sha256(self.page).hexdigest()[:16]}"'

    async def index(self, request: web.Request) -> web.Response:
        if self.page_etag in request.headers.get("If-None-Match", ""):
            response = web.Response(status=304)
        else:
            response = web.Response(body=self.page, content_type="text/html", charset="utf-8")
        response.headers["ETag"] = self.page_etag
        response.headers["Cache-Control"] = REVALIDATE
        return response

    async def headers(self, request: web.Request, response: web.StreamResponse) -> None:
        """Add the caching and security headers to this client's responses."""
        path = request.path
        if path == "/":
            response.headers.update(SECURITY_HEADERS)
        elif path.startswith(STATIC_PREFIX):
            response.headers.update(SECURITY_HEADERS)
            if path.startswith(self.base + "/") and response.status in (200, 304):
                response.headers["Cache-Control"] = IMMUTABLE


def add_web_client(app: web.Application, root: Path = STATIC_DIR) -> WebClient:
    """Serve the web client on ``app``: ``GET /`` and ``GET /static/<digest>/...``."""
    client = WebClient(root)
    app.router.add_get("/", client.index)
    app.router.add_static(client.base, root, append_version=False)
    app.on_response_prepare.append(client.headers)
    return client
