"""The field types every message checks, in both directions: names, ids, cells, texts and
their limits, the words a field may hold, and the time control; ``has_control_characters`` is
the check of free text (chat, passwords, a moderator's reason)."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Literal

import msgspec

from server.errors import ProtocolError

# Patterns are searched, so each is anchored with \A and \Z: "$" would also match before a
# trailing newline and let "ann\n" through as a second "ann".
_WORD = r"\A[A-Za-z0-9_-]+\Z"
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=24, pattern=_WORD)]
Token = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=_WORD)]
GameId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
ChallengeId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
SeekId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
PrivateCode = Annotated[str, msgspec.Meta(min_length=4, max_length=32, pattern=_WORD)]
RequestId = (
    Annotated[str, msgspec.Meta(max_length=64)]
    | Annotated[int, msgspec.Meta(ge=-(2**53 - 1), le=2**53 - 1)]
)
Variant = Literal["4x4x4", "3x3x3", "4x4"]
Colour = Literal["x", "o"]
ColourChoice = Literal["x", "o", "random"]
Level = Annotated[int, msgspec.Meta(ge=1, le=8)]
Ply = Annotated[int, msgspec.Meta(ge=0, le=729)]
Version = Annotated[int, msgspec.Meta(ge=0)]
CellText = Annotated[
    str, msgspec.Meta(min_length=2, max_length=3, pattern=r"\A[1-9]?[a-iA-I][1-9]\Z")
]
CellIndex = Annotated[int, msgspec.Meta(ge=0, le=728)]
ChatText = Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
PASSWORD_MIN, PASSWORD_MAX = 8, 128  # characters; docs/protocol.md and docs/security.md say so
Password = Annotated[str, msgspec.Meta(min_length=1, max_length=PASSWORD_MAX)]
NewPassword = Annotated[str, msgspec.Meta(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)]
RecoveryCode = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
DeviceLabel = Annotated[str, msgspec.Meta(max_length=40)]
DeviceId = Annotated[int, msgspec.Meta(ge=1, le=2**53 - 1)]
Result = Literal["1-0", "0-1", "1/2-1/2", "*"]
EngineState = Literal["preparing", "unavailable", "ready"]
Reason = Literal[
    "line", "full", "dead", "resign", "time", "agreement", "abort", "claim", "abandoned",
    "host",
]
ChallengeGoneReason = Literal["declined", "cancelled", "offline"]
OfferKind = Literal["draw", "draw_declined", "rematch"]
COLOURS: tuple[Colour, Colour] = ("x", "o")
PuzzleMode = Literal["next", "daily", "streak"]


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds any character of Unicode category C (control, format, ...)."""
    return any(unicodedata.category(char)[0] == "C" for char in text)


class ClockSpec(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A time control: ``initial`` seconds each plus ``increment`` seconds per move."""

    initial: Annotated[int, msgspec.Meta(ge=0, le=10800)]
    increment: Annotated[int, msgspec.Meta(ge=0, le=180)]

    def __post_init__(self) -> None:
        if self.initial == 0 and self.increment == 0:
            raise ProtocolError("clock: initial and increment cannot both be 0", "bad_clock")
