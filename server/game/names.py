"""Players' names compared as people read them: the folded form, and the names kept back.

Two names are the same name when their *folded* forms are equal (``fold_name``): NFKC, the
letters of Cyrillic and Greek that look like Latin ones written as those, the ASCII look-alikes
(``0`` and ``o``; ``1``, ``I`` and ``l``; ``rn`` and ``m``), and case. Since a capital I is a
small l to the eye and a small i to case folding, ``i`` and ``l`` fold together too. The table
is the part of Unicode's confusables.txt (its "skeleton" mapping) that takes a Latin, Cyrillic
or Greek letter or an ASCII digit to a Latin letter, written out here: a dependency for one
table of sixty characters would cost more than it saves, and the tests check the table.

``RESERVED_NAMES`` are kept from new players (``is_reserved``): the staff's words and every
name the computer goes by (``Computer (level 8)``, the engine's players and levels), so no
stranger can pass for the host or the computer. A host adds more in the configuration
(``reserved_names``). Pure: no I/O.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from engine.players import LEVELS, player_names

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
"""The words no new player may be called: the staff's and the server's own."""


def _computer_names() -> tuple[str, ...]:
    """Every name the computer goes by: ``Computer (level n)`` as games show it (written
    ``computer-level-n``, ``computern`` and so on once folded), ``leveln``, and the engine's
    players (``master``, ``wood``, ...)."""
    levels = [str(level) for level in LEVELS]
    return (
        *(f"computer{level}" for level in levels),
        *(f"computerlevel{level}" for level in levels),
        *(f"level{level}" for level in levels),
        *player_names(),
    )


RESERVED_NAMES = (*STAFF_NAMES, *_computer_names())
"""The names refused to new players before the configuration adds its own."""


def fold_name(name: str) -> str:
    """The form in which names are unique: NFKC, look-alike letters as the Latin letter they
    pass for, case-folded: ``fold_name("ADM1N") == fold_name("аdmin") == "admln"`` (the
    second's first letter is Cyrillic)."""
    text = unicodedata.normalize("NFKC", name).translate(_FOLD).casefold().translate(_FOLD)
    return text.replace("rn", "m")


def _bare(name: str) -> str:
    """The folded name without the separators a name may hold: ``ad_min`` is ``admin``."""
    return fold_name(name).replace("_", "").replace("-", "")


class ReservedNames:
    """The reserved names (``RESERVED_NAMES`` and a host's), compared bare and folded."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.names = (*RESERVED_NAMES, *extra)
        self._bare = frozenset(map(_bare, self.names))

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` folds, separators aside, to a reserved name."""
        return isinstance(name, str) and _bare(name) in self._bare
