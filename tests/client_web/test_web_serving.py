"""The server's side of the web client: the page, its files, caching and security headers."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import web_helpers

from client_web import STATIC_DIR
from server.http.web import CSP, IMMUTABLE, static_digest


async def test_the_page_is_served_with_a_strict_policy_and_revalidated(tmp_path: Path) -> None:
    async with web_helpers.running_server(tmp_path / "q.db") as running, \
            aiohttp.ClientSession() as http:
        async with http.get(running.http_url + "/") as response:
            assert response.status == 200
            assert response.content_type == "text/html"
            page = await response.text()
            headers = response.headers
        assert headers["Content-Security-Policy"] == CSP
        assert "script-src 'self'" in CSP and "unsafe" not in CSP
        assert "require-trusted-types-for 'script'" in CSP
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Cache-Control"] == "no-cache"
        etag = headers["ETag"]
        async with http.get(running.http_url + "/", headers={"If-None-Match": etag}) as again:
            assert again.status == 304
        # No inline script or style: everything comes from the versioned static path.
        assert "<script>" not in page and "style=" not in page and "<style" not in page
        digest = static_digest(STATIC_DIR)
        assert f"/static/{digest}/js/main.js" in page
        assert "{{" not in page


async def test_static_files_are_immutable_under_their_digest(tmp_path: Path) -> None:
    digest = static_digest(STATIC_DIR)
    async with web_helpers.running_server(tmp_path / "q.db") as running, \
            aiohttp.ClientSession() as http:
        base = f"{running.http_url}/static/{digest}"
        async with http.get(base + "/js/main.js") as response:
            assert response.status == 200
            assert response.content_type in ("text/javascript", "application/javascript")
            assert response.headers["Cache-Control"] == IMMUTABLE
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert "ETag" in response.headers
            etag = response.headers["ETag"]
        async with http.get(base + "/js/main.js", headers={"If-None-Match": etag}) as again:
            assert again.status == 304
        async with http.get(base + "/app.css") as css:
            assert css.content_type == "text/css"
        async with http.get(f"{running.http_url}/static/000000000000/js/main.js") as stale:
            assert stale.status == 404
        async with http.get(base + "/../../server/http/web.py") as escape:
            assert escape.status in (403, 404)
        # The other routes are untouched.
        async with http.get(running.http_url + "/health") as health:
            assert health.status == 200
            assert "Content-Security-Policy" not in health.headers


def test_the_client_writes_no_html_from_strings() -> None:
    """Names and chat reach the page only as text: no innerHTML and friends anywhere."""
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|"
                       r"new Function|setAttribute\(\s*[\"']on")
    for path in Path(STATIC_DIR, "js").glob("*.js"):
        assert not sinks.search(path.read_text(encoding="utf-8")), path.name


def test_the_client_is_small() -> None:
    """Everything the browser downloads, uncompressed (docs/web.md states the figure)."""
    files = [p for p in STATIC_DIR.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 210_000  # 195.4 KB with issue 43's tournaments
    # No third-party code: every module imports only this client's modules.
    for path in Path(STATIC_DIR, "js").glob("*.js"):
        for target in re.findall(r"^import .* from \"([^\"]+)\";", path.read_text(), re.M):
            assert target.startswith("./") and (path.parent / target).exists(), target
