"""engine.levels: the levels and players by name, without loading the players."""

from __future__ import annotations


def test_the_levels_and_names_known_without_the_players_are_the_registry_s() -> None:
    """engine.levels lists, as plain data, what the registry of engine.players holds."""
    from engine import levels, players

    assert levels.LEVELS is players.LEVELS
    assert levels.player_names() == players.player_names()
