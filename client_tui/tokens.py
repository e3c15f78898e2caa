"""Remembered players: the token this client holds for each name on each server.

A small JSON file (by default ``tokens.json`` in the user's config directory) maps a server's
URL to the names played there and their tokens, plus the last name used, so the same person
comes back as the same player. The file holds secrets: it is written owner-only.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "qubic"


def default_token_path() -> Path:
    """``tokens.json`` in the user's config directory (e.g. ``~/.config/qubic``)."""
    return platformdirs.user_config_path(APP_NAME) / "tokens.json"


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class TokenStore:
    """Tokens per server URL and player name, kept in one JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_token_path()

    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return servers if isinstance(servers, dict) else {}

    def _write(self, servers: dict[str, dict]) -> None:
        data = json.dumps({"servers": servers}, indent=2, sort_keys=True).encode()
        write_atomically(self.path, data, mode=0o600)

    def last_name(self, server: str) -> str | None:
        """The name last played on ``server``."""
        entry = self._read().get(server, {})
        last = entry.get("last")
        return last if isinstance(last, str) else None

    def token(self, server: str, name: str) -> str | None:
        """The token of ``name`` (matched ignoring case, as the server does) on ``server``."""
        players = self._read().get(server, {}).get("players", {})
        for known, token in players.items():
            if known.lower() == name.lower() and isinstance(token, str):
                return token
        return None

    def save(self, server: str, name: str, token: str) -> None:
        """Remember ``name``'s token on ``server`` and make it the last name used."""
        servers = self._read()
        entry = servers.setdefault(server, {})
        players = {
            known: value
            for known, value in entry.get("players", {}).items()
            if known.lower() != name.lower()
        }
        players[name] = token
        servers[server] = {"last": name, "players": players}
        self._write(servers)

    def forget(self, server: str, name: str) -> None:
        """Drop ``name``'s token on ``server`` (the server no longer knows it)."""
        servers = self._read()
        entry = servers.get(server)
        if not entry:
            return
        players = entry.get("players", {})
        entry["players"] = {k: v for k, v in players.items() if k.lower() != name.lower()}
        self._write(servers)
