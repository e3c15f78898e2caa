"""Local sessions and delivery: who is connected to this server, and sending them events.

``Delivery`` knows the sessions on this node, which player each is, and which games each has
open (a game's *audience*); it turns a room's addressed events into frames on those sockets.
It decides nothing about games or the lobby, and never touches the store: the rooms
(``server.rooms``) and the lobby (``server.lobby``) call it. In a cluster this is the part
every node has for its own sockets (lila-ws's per-client actors and ``RoomCrowd``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from server.protocol import encode
from server.room import Audience, Outbound
from server.session import Session
from server.store import PlayerRecord


class Delivery:
    """The sessions connected here, by player and by open game; see the module docstring."""

    def __init__(self) -> None:
        self.sessions: set[Session] = set()
        self.by_player: dict[str, set[Session]] = defaultdict(set)
        self.audience: dict[str, set[Session]] = defaultdict(set)

    # -- who is here -----------------------------------------------------------------------

    def connected(self, session: Session) -> None:
        self.sessions.add(session)

    def identified(self, session: Session, player: PlayerRecord) -> None:
        """``session`` has said hello as ``player``."""
        session.player = player
        self.by_player[player.name].add(session)

    def disconnected(self, session: Session) -> bool:
        """Forget ``session``; whether it was its player's last connection here."""
        self.sessions.discard(session)
        name = session.name
        if name is None:
            return False
        self.by_player[name].discard(session)
        if self.by_player[name]:
            return False
        del self.by_player[name]
        return True

    @property
    def online(self) -> int:
        """Players with at least one connection here."""
        return len(self.by_player)

    def is_online(self, name: str) -> bool:
        return name in self.by_player

    def of_player(self, name: str) -> list[Session]:
        """``name``'s connections here (a copy: callers may open rooms while iterating)."""
        return list(self.by_player.get(name, ()))

    def rating(self, name: str) -> float | None:
        """``name``'s rating as a connection of theirs knows it, if one is here."""
        for session in self.by_player.get(name, ()):
            if session.player is not None:
                return session.player.rating
        return None

    def refresh(self, name: str, record: PlayerRecord) -> None:
        """Give every connection of ``name`` its fresh ``record`` (a new rating)."""
        for session in self.by_player.get(name, ()):
            session.player = record

    # -- open games ------------------------------------------------------------------------

    def open(self, session: Session, game_id: str) -> None:
        session.rooms.add(game_id)
        self.audience[game_id].add(session)

    def close(self, session: Session, game_id: str) -> bool:
        """``session`` closes the game; whether its player still has it open elsewhere."""
        session.rooms.discard(game_id)
        self.audience[game_id].discard(session)
        name = session.name
        return name is not None and any(s.name == name for s in self.audience[game_id])

    def forget(self, game_id: str) -> None:
        """The game is gone from this server: no session has it open any more."""
        for session in self.audience.pop(game_id, set()):
            session.rooms.discard(game_id)

    def deliver(
        self, game_id: str, events: Iterable[Outbound], only: Session | None = None
    ) -> None:
        """Send each event to its audience among the sessions that have the game open; with
        ``only``, the events for one player go to that session alone (a catch-up's reply)."""
        audience = self.audience.get(game_id, set())
        for event in events:
            frame = encode(event.message)
            if event.audience is Audience.ROOM:
                targets: Iterable[Session] = audience
            elif event.audience is Audience.PLAYER:
                targets = [only] if only is not None else [
                    s for s in audience if s.name == event.player
                ]
            else:
                targets = [s for s in audience if s.name != event.player]
            for session in targets:
                session.send_raw(frame)

    def close_all(self, code: int, reason: str) -> None:
        for session in list(self.sessions):
            session.close(code, reason)
