"""The field types every message checks, in both directions: names, ids, cells, texts and
their limits, the words a field may hold, and the time control; ``text_fault`` is the check
of free text people read (chat, a report's or a moderator's reason), ``has_control_characters``
the one of passwords."""

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


MAX_MARKS = 4
"""Combining marks (categories Mn and Me) one character may carry. Vietnamese needs two,
pointed Hebrew and the Indic scripts three or four; "Zalgo" text stacks dozens, which draw
over the lines above and below."""

_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE00FF),
    (0xE01F0, 0xE0FFF),
)
"""Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1): characters a
renderer draws as nothing, among them the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), which
are letters (Lo), so category C alone lets them through. The variation selectors (U+FE00-FE0F,
U+E0100-E01EF) are left out: they pick an emoji's or a CJK character's form, and are
counted as the marks they are."""

_BLANK = frozenset({0x2800, 0x1D159})
"""Symbols that draw nothing and are not default-ignorable: the blank braille pattern and the
musical null notehead. Allowed in a line, but not counted as the visible character it needs."""


def text_fault(text: str) -> str | None:
    """What makes ``text`` unfit to be shown as a line someone wrote, or None: a character of
    Unicode category C (controls such as newline, format characters such as zero-width spaces
    and direction overrides, unassigned and private-use code points), a line or paragraph
    separator (U+2028, U+2029), a default-ignorable character (``_IGNORABLE``), more than
    ``MAX_MARKS`` combining marks on one character, or no visible character at all (a letter,
    digit, punctuation or symbol other than the blank ones of ``_BLANK``)."""
    visible = False
    marks = 0
    for char in text:
        category = unicodedata.category(char)
        code = ord(char)
        if category[0] == "C":
            return f"a control or format character (U+{code:04X})"
        if category in ("Zl", "Zp"):
            return f"a line or paragraph separator (U+{code:04X})"
        if code >= 0xAD and any(low <= code <= high for low, high in _IGNORABLE):
            return f"an invisible character (U+{code:04X})"
        if category in ("Mn", "Me"):
            marks += 1
            if marks > MAX_MARKS:
                return f"more than {MAX_MARKS} combining marks on one character"
            continue
        marks = 0
        if category[0] in "LNPS" and code not in _BLANK:
            visible = True
    return None if visible else "no visible character"


class ClockSpec(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A time control: ``initial`` seconds each plus ``increment`` seconds per move."""

    initial: Annotated[int, msgspec.Meta(ge=0, le=10800)]
    increment: Annotated[int, msgspec.Meta(ge=0, le=180)]

    def __post_init__(self) -> None:
        if self.initial == 0 and self.increment == 0:
            raise ProtocolError("clock: initial and increment cannot both be 0", "bad_clock")
