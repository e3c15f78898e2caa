"""Players' names compared as people read them: the folded form, and the names kept back.

``fold_name`` makes the form two names are compared in (NFKC, Cyrillic and Greek look-alikes and
the ASCII ones such as ``0``/``o`` and ``rn``/``m``, case, separators): a table written out from
Unicode's confusables.txt, checked by the tests. ``RESERVED_NAMES`` (``ReservedNames``) are kept
from new players. Pure: no I/O. docs/protocol.md, *Names*, has the rules."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from engine.levels import LEVELS, player_names

_LOOK_ALIKES = {
    # Cyrillic capitals and small letters
    "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p", "С": "c",
    "Т": "t", "У": "y", "Х": "x", "Ѕ": "s", "І": "l", "Ј": "j", "Ү": "y", "Ԛ": "q", "Ԝ": "w",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "l",
    "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y", "ь": "b",
    # Greek capitals and small letters
    "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "l", "Κ": "k", "Μ": "m", "Ν": "n",
    "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x",
    "α": "a", "ο": "o", "ν": "v", "ι": "l", "ρ": "p", "υ": "u", "γ": "y", "κ": "k", "χ": "x",
    # ASCII look-alikes: the capital I is the small l in most fonts, and so is the digit 1
    "I": "l", "i": "l", "1": "l", "|": "l", "0": "o",
}  # fmt: skip
_FOLD = str.maketrans(_LOOK_ALIKES)

STAFF_NAMES = (
    "admin", "administrator", "moderator", "mod", "system", "computer", "qubic", "root",
    "server", "staff", "support", "official",
)
"""The words no new player's name may hold: the staff's and the server's own."""


def _computer_names() -> tuple[str, ...]:
    """Every name the computer goes by as a word: ``Computer (level n)`` as games show it
    (written ``computer-level-n``, ``computern`` and so on), and ``leveln``."""
    levels = [str(level) for level in LEVELS]
    return (
        *(f"computer{level}" for level in levels),
        *(f"computerlevel{level}" for level in levels),
        *(f"level{level}" for level in levels),
    )


RESERVED_WORDS = (*STAFF_NAMES, *_computer_names())
"""Refused as any word of a name, or words side by side (``Admin-Team``, ``SuperMod``,
``xLevel8``), before the configuration adds its own."""

RESERVED_NAMES = (*RESERVED_WORDS, *player_names())
"""The names refused to new players: the reserved words, and the engine's players
(``master``, ``wood``, ...), which are common words and refused only as a whole name."""


def fold_name(name: str) -> str:
    """The form in which names are unique: NFKC, look-alike letters as the Latin letter they
    pass for, case-folded, and only the letters and digits (``_``, ``-``, ``.`` and every
    other separator dropped): ``fold_name("ADM1N") == fold_name("аdmin") ==
    fold_name("a-d_m.i-n") == "admln"`` (the second's first letter is Cyrillic). A name of
    separators alone keeps them, so that it folds to something."""
    text = unicodedata.normalize("NFKC", name).translate(_FOLD).casefold().translate(_FOLD)
    bare = "".join(char for char in text if char.isalnum())
    return (bare or text).replace("rn", "m")


def words(name: str) -> list[str]:
    """The words of ``name`` as a reader splits it: at separators, where a small letter meets
    a capital (``SuperAdmin``; ``MAdmin`` is ``M`` and ``Admin``), and where letters meet
    digits (``Moderator2``). Not folded."""
    text = unicodedata.normalize("NFKC", name)
    found: list[str] = []
    word = ""
    for i, char in enumerate(text):
        if not char.isalnum():
            found.append(word)
            word = ""
            continue
        if word:
            last = word[-1]
            following = text[i + 1] if i + 1 < len(text) else ""
            if (last.isdigit() != char.isdigit()
                    or (char.isupper() and last.islower())
                    or (char.isupper() and last.isupper() and following.islower())):
                found.append(word)
                word = ""
        word += char
    found.append(word)
    return [word for word in found if word]


class ReservedNames:
    """The reserved names and words (``RESERVED_NAMES``, and a host's, which are words),
    compared folded.

    A name is reserved when it folds, separators aside, to a reserved name, or when some of
    its words side by side (``words``) fold to a reserved word: ``Admin-Team``,
    ``Moderator2``, ``Computer-Level-9``, ``SuperAdmin``, ``r00t`` and ``ad_min`` are
    reserved; ``badminton``, ``Madmin``, ``administrators``, ``Modern`` and ``Woodstock`` are
    not (the word is only a part of another word)."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.names = (*RESERVED_NAMES, *extra)
        self._whole = frozenset(map(fold_name, self.names))
        self._words = frozenset(map(fold_name, (*RESERVED_WORDS, *extra)))

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is reserved, as a whole or by its words."""
        if not isinstance(name, str):
            return False
        if fold_name(name) in self._whole:
            return True
        parts = words(name)
        return any(fold_name("".join(parts[i:j])) in self._words
                   for i in range(len(parts)) for j in range(i + 1, len(parts) + 1))
