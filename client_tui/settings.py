"""What the client remembers between runs: game options, what the board shows, servers used.

A small JSON file (``settings.json`` next to the tokens, in the user's config directory),
decoded into typed values with msgspec. A file that cannot be read or no longer fits the
types gives the defaults: settings are a convenience, never a reason not to start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import msgspec

from client_tui.model import format_clock_spec
from client_tui.tokens import write_atomically
from server.protocol import ClockSpec, ColourChoice, Variant

DialogKind = Literal["computer", "seek", "quick", "private", "challenge"]
SERVERS_KEPT = 8
GAMES_KEPT = 50  # games remembered per server for "My games"


@dataclass(frozen=True)
class GameOptions:
    """What a new game should be: board, clock, colour, rated, and the computer's level."""

    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None
    colour: ColourChoice = "random"
    rated: bool = False
    level: int = 3

    def describe(self, kind: DialogKind = "computer") -> str:
        """A short summary such as ``level 3 · 4x4x4 · random · untimed``."""
        parts = [self.variant, format_clock_spec(self.clock)]
        if kind in ("computer", "seek", "private", "challenge"):
            parts.insert(1, {"x": "you play X", "o": "you play O"}.get(self.colour, "random"))
        if kind == "computer":
            parts.insert(0, f"level {self.level}")
        if kind in ("seek", "private", "challenge"):
            parts.append("rated" if self.rated else "casual")
        if kind == "quick":
            parts.append("rated")
        return " · ".join(parts)


class PlayedGame(msgspec.Struct, kw_only=True):
    """A game this client played, as "My games" lists it (the moves stay on the server)."""

    id: str
    variant: str
    x: str
    o: str
    you: Literal["x", "o"]
    started: float  # seconds since the epoch
    ply: int = 0
    result: str | None = None  # "1-0", "0-1", "1/2-1/2", "*"; None while unfinished

    @property
    def opponent(self) -> str:
        return self.o if self.you == "x" else self.x


class Settings(msgspec.Struct, kw_only=True):
    """Everything remembered; each field has a default, so an old file still loads."""

    options: dict[DialogKind, GameOptions] = {}  # the last options chosen in each dialog
    last_kind: DialogKind | None = None  # the dialog whose options were chosen last
    show_threats: bool = True  # mark where each side would complete a line
    show_guides: bool = True  # mark the lines through the board's cursor
    servers: list[str] = []  # the servers connected to, the last one first
    games: dict[str, list[PlayedGame]] = {}  # by server (its URL or the local database)
    bell: bool = True  # ring when the opponent moves, a game is found or a challenge comes

    def options_for(self, kind: DialogKind) -> GameOptions:
        """The options a ``kind`` dialog opens with: its own last ones, with the board and
        the time control just picked in another dialog for a game against a person (who
        chose 5+3 to seek means 5+3 when he challenges next). The computer's are its own."""
        options = self.options.get(kind, GameOptions())
        last = self.options.get(self.last_kind) if self.last_kind else None
        if kind == "computer" or last is None or self.last_kind == kind:
            return options
        return replace(options, variant=last.variant, clock=last.clock)

    def chose(self, kind: DialogKind, options: GameOptions) -> None:
        """Remember ``options`` as chosen in a ``kind`` dialog."""
        self.options[kind] = options
        if kind != "computer":
            self.last_kind = kind

    def used_server(self, url: str) -> None:
        """Put ``url`` first among the servers remembered."""
        self.servers = [url, *(s for s in self.servers if s != url)][:SERVERS_KEPT]

    def played(self, server: str, game: PlayedGame) -> None:
        """Remember ``game`` on ``server``: in its place if known, else as the latest."""
        known = self.games.get(server, [])
        ids = [g.id for g in known]
        if game.id in ids:
            known[ids.index(game.id)] = game
        else:
            self.games[server] = [game, *known][:GAMES_KEPT]

    def game(self, server: str, game_id: str) -> PlayedGame | None:
        return next((g for g in self.games.get(server, []) if g.id == game_id), None)


class SettingsStore:
    """Settings kept in one JSON file, written whole and atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Settings:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=Settings)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return Settings()

    def save(self, settings: Settings) -> None:
        write_atomically(self.path, msgspec.json.format(msgspec.json.encode(settings), indent=2))
