"""What the host sets for one node's games and players (``HubConfig``), from the server's
configuration (``server.http.config``)."""

from __future__ import annotations

from dataclasses import dataclass

from server.defaults import GRACE


@dataclass(frozen=True)
class HubConfig:
    grace: float = GRACE  # seconds a dropped player keeps the seat before a claim is allowed
    ai_move_time: float = 1.0  # seconds the computer thinks per move (less on a short clock)
    abandon_after: float = 600.0  # seconds with no human in a game before it is ended
    reserved_names: tuple[str, ...] = ()  # refused to new players, beside RESERVED_NAMES
    spectator_chat: bool = True  # spectators may chat (among themselves)
    leaderboard_inactive: float = 90 * 86400.0  # seconds without a rated game; 0: never
    bots_in_pairing: bool = False  # bot accounts may seek and pair (default: challenges only)
