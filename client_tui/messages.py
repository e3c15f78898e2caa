"""Messages the screens post up to the app: requests for the server and navigation."""

from __future__ import annotations

from textual.message import Message

from server.protocol import ClientMessage


class Outgoing(Message):
    """Send ``request`` to the server."""

    def __init__(self, request: ClientMessage) -> None:
        super().__init__()
        self.request = request


class ConnectRequested(Message):
    """Connect to ``url`` (None: the embedded server) as ``name``."""

    def __init__(self, url: str | None, name: str) -> None:
        super().__init__()
        self.url = url
        self.name = name


class LeaveGame(Message):
    """Close the game ``game_id`` (unwatch it) and go back to the lobby."""

    def __init__(self, game_id: str) -> None:
        super().__init__()
        self.game_id = game_id
