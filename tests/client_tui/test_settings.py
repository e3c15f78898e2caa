"""Settings kept between runs: typed, round-tripped, and never a reason not to start."""

from __future__ import annotations

import stat
from pathlib import Path

from client_tui.settings import GameOptions, PlayedGame, Settings, SettingsStore
from server.protocol import ClockSpec


def test_settings_round_trip(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "qubic" / "settings.json")
    settings = Settings(show_threats=False)
    settings.options["computer"] = GameOptions(level=6, colour="o", clock=ClockSpec(300, 5))
    settings.used_server("ws://a/ws")
    settings.used_server("ws://b/ws")
    settings.used_server("ws://a/ws")
    settings.played("ws://a/ws", PlayedGame(id="g1", variant="4x4x4", x="ann", o="bob",
                                            you="x", started=1.0))
    settings.played("ws://a/ws", PlayedGame(id="g1", variant="4x4x4", x="ann", o="bob",
                                            you="x", started=1.0, ply=9, result="1-0"))
    store.save(settings)
    loaded = store.load()
    assert loaded == settings
    assert loaded.servers == ["ws://a/ws", "ws://b/ws"]
    assert [g.result for g in loaded.games["ws://a/ws"]] == ["1-0"]
    assert stat.S_IMODE((tmp_path / "qubic" / "settings.json").stat().st_mode) == 0o644


def test_a_bad_or_old_file_gives_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert SettingsStore(path).load() == Settings()  # no file
    path.write_text("{not json")
    assert SettingsStore(path).load() == Settings()
    path.write_text('{"options": {"computer": {"level": "high"}}}')
    assert SettingsStore(path).load() == Settings()
    path.write_text('{"show_guides": false, "from_a_newer_version": 1}')
    assert SettingsStore(path).load() == Settings(show_guides=False)
