"""The link's pure helpers: addresses, the leaderboard answer, backoff."""

from __future__ import annotations

import pytest

from client_tui.connection import (
    Backoff,
    LeaderboardRow,
    http_base,
    parse_leaderboard,
    server_url,
)


def test_http_base_of_a_websocket_url() -> None:
    assert http_base("ws://127.0.0.1:8765/ws") == "http://127.0.0.1:8765"
    assert http_base("wss://qubic.example.org/ws/") == "https://qubic.example.org"


def test_server_urls_given_loosely() -> None:
    assert server_url("localhost:8765") == "ws://localhost:8765/ws"
    assert server_url("http://h:1") == "ws://h:1/ws"
    assert server_url("wss://h/ws") == "wss://h/ws"
    for bad in ("ftp://h/ws", "ws://", ""):
        with pytest.raises(ValueError):
            server_url(bad)


def test_the_leaderboard_answer() -> None:
    data = {"players": [{"name": "ann", "rating": 1612.4, "games": 3}, {"bad": 1}]}
    assert parse_leaderboard(data) == [LeaderboardRow("ann", 1612)]
    assert parse_leaderboard([{"name": "bob", "rating": 1500}]) == [LeaderboardRow("bob", 1500)]
    assert parse_leaderboard("nonsense") == []


def test_backoff_doubles_up_to_a_ceiling() -> None:
    backoff = Backoff(first=1.0, most=8.0, jitter=0.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    jittery = Backoff(first=1.0, most=8.0, jitter=0.5)
    assert all(0.5 <= jittery.delay(1) <= 1.0 for _ in range(50))
