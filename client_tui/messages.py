"""Messages the screens post up to the app: requests for the server and navigation."""

from __future__ import annotations

from textual.message import Message

from server.protocol import ClientMessage, Recover


class Outgoing(Message):
    """Send ``request`` to the server (``quiet``: say nothing when not connected)."""

    def __init__(self, request: ClientMessage, quiet: bool = False) -> None:
        super().__init__()
        self.request = request
        self.quiet = quiet


class ConnectRequested(Message):
    """Connect to ``url`` (None: the embedded server) as ``name`` (with ``password``: log in
    on this device with it; with ``recovery``: open the session with that ``recover``)."""

    def __init__(self, url: str | None, name: str, password: str | None = None,
                 recovery: Recover | None = None) -> None:
        super().__init__()
        self.url = url
        self.name = name
        self.password = password
        self.recovery = recovery


class LeaveGame(Message):
    """Close the game ``game_id`` (unwatch it) and go back to the lobby."""

    def __init__(self, game_id: str) -> None:
        super().__init__()
        self.game_id = game_id


class ChallengePlayer(Message):
    """Challenge ``name`` (from a player's page): the terms are asked for, as in the lobby."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class OpenTournament(Message):
    """Show the page of ``tournament`` (from its game ``game``: a game over or watched is
    left for it, a game going on stays under it)."""

    def __init__(self, tournament: str, game: str | None = None) -> None:
        super().__init__()
        self.tournament = tournament
        self.game = game


class SettingsChanged(Message):
    """The settings object shared with the app was changed: save it."""
