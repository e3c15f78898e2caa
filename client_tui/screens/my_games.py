"""My games: this player's page on the server (``PlayerScreen``), so the list is the same on
every machine: games going on to go back to, finished ones to replay."""

from __future__ import annotations

from client_tui.screens.player import PlayerScreen


class MyGamesScreen(PlayerScreen):
    """The player's own page, titled "My games"."""

    challengeable = False

    def __init__(self, name: str) -> None:
        super().__init__(name, title="My games")
