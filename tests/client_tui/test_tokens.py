"""Tokens are remembered per server URL and name, owner-only."""

from __future__ import annotations

import stat
from pathlib import Path

from client_tui.tokens import TokenStore


def test_tokens_per_server_and_name(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "dir" / "tokens.json")
    assert store.token("ws://a/ws", "ann") is None and store.last_name("ws://a/ws") is None
    store.save("ws://a/ws", "ann", "t1")
    store.save("ws://b/ws", "ann", "t2")
    store.save("ws://a/ws", "bob", "t3")
    again = TokenStore(tmp_path / "dir" / "tokens.json")
    assert again.token("ws://a/ws", "ANN") == "t1"  # names match ignoring case
    assert again.token("ws://b/ws", "ann") == "t2"
    assert again.last_name("ws://a/ws") == "bob"
    again.forget("ws://a/ws", "ann")
    assert again.token("ws://a/ws", "ann") is None and again.token("ws://a/ws", "bob") == "t3"
    mode = stat.S_IMODE((tmp_path / "dir" / "tokens.json").stat().st_mode)
    assert mode == 0o600


def test_a_damaged_file_is_an_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    store = TokenStore(path)
    assert store.token("ws://a/ws", "ann") is None
    store.save("ws://a/ws", "ann", "t")
    assert store.token("ws://a/ws", "ann") == "t"
