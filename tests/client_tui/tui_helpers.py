"""A real server and helpers to drive the client with Pilot.

Imported by name (``from tui_helpers import ...``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from client_tui.app import QubicApp
from client_tui.tokens import TokenStore
from qubic_cli.embedded import start_embedded
from server.http.app import RunningServer, ServerConfig, start_server
from tests.eventually import eventually

TIMEOUT = 45.0  # a poll: only a failure waits it out; CI runs two test files at once


@contextlib.asynccontextmanager
async def running_server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server on an ephemeral port with its own database; the computer moves quickly."""
    running = await start_server(ServerConfig(
        port=0, db_path=str(tmp_path / "server.db"), computer_workers=1, computer_move_time=0.05,
        grace=60.0,
    ))
    try:
        yield running
    finally:
        await running.stop()


def client(server: RunningServer | None, name: str, tmp_path: Path, **options: Any) -> QubicApp:
    """A client app for ``name`` with its own token file."""
    tokens = TokenStore(tmp_path / f"tokens-{name}.json")
    url = None if server is None else server.ws_url
    options.setdefault("start_local", start_embedded)  # offline: as `qubic play` starts it
    return QubicApp(url, name, tokens=tokens, **options)


async def until(
    pilot: Pilot, condition: Callable[[], object], what: str = "", timeout: float = TIMEOUT
) -> None:
    """Let the app run until ``condition()`` holds; fail after ``timeout`` seconds."""
    await eventually(condition, what, timeout=timeout, pause=pilot.pause,
                     detail=lambda: where(pilot.app))


def where(app: object) -> str:
    """What a client was showing, for a failure's message: its screen, connect status and
    last notifications."""
    if not isinstance(app, QubicApp):
        return f"screen {type(getattr(app, 'screen', None)).__name__}"
    status = app.connect_screen._status
    told = [n.message for n in list(app._notifications)[-3:]]
    return (f"screen {type(app.screen).__name__}, state {app.title!r} {app.sub_title!r}, "
            f"connect status {status!r}, notifications {told!r}")


def unconnected(tmp_path: Path, name: str = "ann", now: float = 100.0) -> QubicApp:
    """A client that does not connect, with a frozen clock: fed messages by hand."""
    return QubicApp(None, name, tokens=TokenStore(tmp_path / "tokens.json"), autoconnect=False,
                    clock=lambda: now)


def in_lobby(app: QubicApp) -> bool:
    """Whether the lobby is on screen and fully mounted."""
    screen = app.screen
    return screen is app.lobby_screen and screen.is_mounted


def screen_rows(app: Any) -> list[list[tuple[str, Any]]]:
    """The screen as a person sees it: each row a list of (character, rich style), one a
    column, composited from every layer (dialogs over screens, toasts over both)."""
    rows = []
    for strip in app.screen._compositor.render_strips():
        row: list[tuple[str, Any]] = []
        for segment in strip:
            if segment.control:
                continue
            for char in segment.text:
                row.append((char, segment.style))
        rows.append(row)
    return rows


def screen_text(app: Any) -> str:
    """The screen's characters, one line a row."""
    return "\n".join("".join(c for c, _ in row).rstrip() for row in screen_rows(app))


def background_at(app: Any, x: int, y: int, system: Any = None) -> tuple[int, int, int]:
    """The background colour drawn at column ``x``, row ``y``, as a terminal with ``system``
    (rich's ColorSystem; None: true colour) shows it."""
    style = screen_rows(app)[y][x][1]
    colour = style.bgcolor
    assert colour is not None, f"no background at {x},{y}"
    if system is not None:
        colour = colour.downgrade(system)
    return tuple(colour.get_truecolor())  # type: ignore[return-value]
