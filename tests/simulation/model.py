"""What the simulated world knows of players, games, tournaments and reports (the world's own
account, against which the server's answers are checked)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SimPlayer:
    uid: int
    name: str
    token: str | None
    password: str | None = None
    codes: list[str] = field(default_factory=list)
    role: str | None = None  # "admin", "moderator"
    banned: bool = False
    muted: bool = False
    deleted: bool = False
    former_names: list[str] = field(default_factory=list)
    revoked_tokens: list[str] = field(default_factory=list)
    renamed_at: float = float("-inf")  # the loop's clock at the last rename (or deletion)
    bot: bool = False  # a bot account, playing over HTTP (tests/simulation/bot_steps.py)


@dataclass
class SimGame:
    id: str
    variant: str
    x: int | None  # a player's uid, None for the computer
    o: int | None
    private: bool = False
    seq: int = 0  # the order the world learnt of it: game ids are the server's random
    rematched: bool = False
    chat_lines: list[int] = field(default_factory=list)  # versions of chat lines seen

    def seat_of(self, uid: int) -> str | None:
        return "x" if self.x == uid else "o" if self.o == uid else None


@dataclass
class SimTournament:
    """A tournament the moderator made, and who is in it as the world was told (the loop's
    clock when each join and each leave, ban or deletion was acknowledged)."""

    id: str
    arena: bool = True  # else a Swiss (which pairs the absent too)
    joined: dict[int, float] = field(default_factory=dict)
    left: dict[int, float] = field(default_factory=dict)

    def leave(self, uid: int, at: float) -> None:
        if uid in self.joined and uid not in self.left:
            self.left[uid] = at


@dataclass
class Report:
    tag: str
    by: int
    about: int
