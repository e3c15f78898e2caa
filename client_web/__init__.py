"""The browser client: static HTML, CSS and JavaScript modules served by the server at ``/``.

No Python runs in the browser and nothing here imports the server; ``STATIC_DIR`` is where the
files are, for ``server/http/web.py`` to serve. See docs/web.md.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).parent / "static"
"""index.html, app.css and js/*.js (ES modules, no build step, no third-party code)."""
