"""Challenges by name: a seek addressed to one player (lichess's challenges). Pure: no I/O.

``Challenges`` holds the open challenges and refuses what lichess refuses: challenging
yourself, challenging one player twice, and too many open at once (``MAX_SENT`` by a
challenger, ``MAX_RECEIVED`` to one player, so nobody can be flooded with prompts). Whether
the named player is online is the lobby's question; this book only keeps the terms and who
is involved, so the lobby can start the game on ``accept`` and tell the other side when a
challenge is declined, cancelled, or lapses because one of the two went offline.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any, Literal

from server.errors import MatchmakingError
from server.game.matchmaking import ColourChoice, Pairing, clock_list, clock_of
from server.game.records import TimeControl

MAX_SENT = 3
"""Open challenges one player may have sent at once."""
MAX_RECEIVED = 10
"""Open challenges one player may be sent at once."""

GoneReason = Literal["declined", "cancelled", "offline"]


@dataclass(frozen=True)
class OpenChallenge:
    """``challenger`` asks ``challenged`` for a game on these terms; ``colour`` is the
    challenger's choice."""

    id: str
    challenger: str
    challenged: str
    variant: str
    clock: TimeControl | None
    rated: bool
    colour: ColourChoice

    def pairing(self, rng: random.Random) -> Pairing:
        """The game the challenge becomes when accepted, colours decided."""
        colour = self.colour
        if colour == "random":
            colour = "x" if rng.random() < 0.5 else "o"
        x, o = (
            (self.challenger, self.challenged) if colour == "x"
            else (self.challenged, self.challenger)
        )
        return Pairing(x, o, self.variant, self.clock, self.rated)


class Challenges:
    """The open challenges, by id; see the module docstring."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()
        self._open: dict[str, OpenChallenge] = {}
        self._ids = itertools.count(1)
        self._last = 0

    def __len__(self) -> int:
        return len(self._open)

    def sent_by(self, name: str) -> list[OpenChallenge]:
        return [c for c in self._open.values() if c.challenger == name]

    def sent_to(self, name: str) -> list[OpenChallenge]:
        return [c for c in self._open.values() if c.challenged == name]

    def create(
        self, challenger: str, challenged: str, variant: str, clock: TimeControl | None,
        rated: bool, colour: ColourChoice,
    ) -> OpenChallenge:
        """Open a challenge; raises ``MatchmakingError`` with a stable code if refused."""
        if challenger == challenged:
            raise MatchmakingError("you cannot challenge yourself", "own_challenge")
        sent = self.sent_by(challenger)
        if any(c.challenged == challenged for c in sent):
            raise MatchmakingError(f"you have challenged {challenged} already",
                                   "already_challenged")
        if len(sent) >= MAX_SENT:
            raise MatchmakingError(
                f"you have {len(sent)} challenges open; cancel one first", "too_many_challenges"
            )
        if len(self.sent_to(challenged)) >= MAX_RECEIVED:
            raise MatchmakingError(f"{challenged} has too many challenges open",
                                   "too_many_challenges")
        self._last = next(self._ids)
        challenge = OpenChallenge(f"c{self._last}", challenger, challenged, variant, clock,
                              rated, colour)
        self._open[challenge.id] = challenge
        return challenge

    def _get(self, challenge_id: str) -> OpenChallenge:
        challenge = self._open.get(challenge_id)
        if challenge is None:
            raise MatchmakingError(
                f"challenge {challenge_id} is not open (answered, cancelled or lapsed)",
                "no_such_challenge",
            )
        return challenge

    def accept(self, challenge_id: str, name: str) -> tuple[OpenChallenge, Pairing]:
        """``name`` accepts a challenge sent to them: it closes and becomes a pairing."""
        challenge = self._answerable(challenge_id, name)
        del self._open[challenge_id]
        return challenge, challenge.pairing(self._rng)

    def decline(self, challenge_id: str, name: str) -> OpenChallenge:
        """``name`` declines a challenge sent to them."""
        self._answerable(challenge_id, name)
        return self._open.pop(challenge_id)

    def cancel(self, challenge_id: str, name: str) -> OpenChallenge:
        """``name`` withdraws a challenge they sent."""
        challenge = self._get(challenge_id)
        if challenge.challenger != name:
            raise MatchmakingError(f"challenge {challenge_id} is not yours", "not_allowed")
        return self._open.pop(challenge_id)

    def _answerable(self, challenge_id: str, name: str) -> OpenChallenge:
        challenge = self._get(challenge_id)
        if challenge.challenged != name:
            raise MatchmakingError(f"challenge {challenge_id} is not to you", "not_allowed")
        return challenge

    def lapse(self, name: str) -> list[OpenChallenge]:
        """``name`` went offline: close every challenge they sent or were sent."""
        gone = [c for c in self._open.values() if name in (c.challenger, c.challenged)]
        for challenge in gone:
            del self._open[challenge.id]
        return gone

    def dump(self) -> dict[str, Any]:
        """The open challenges as plain data (a cluster's next lobby holder restores them)."""
        return {"last": self._last,
                "open": [[c.id, c.challenger, c.challenged, c.variant, clock_list(c.clock), c.rated,
                          c.colour] for c in self._open.values()]}

    def load(self, state: dict[str, Any]) -> None:
        """Take ``dump``'s data back into an empty book."""
        self._last = state["last"]
        self._ids = itertools.count(self._last + 1)
        for id_, challenger, challenged, variant, clock, rated, colour in state["open"]:
            self._open[id_] = OpenChallenge(id_, challenger, challenged, variant,
                                        clock_of(clock), rated, colour)
