"""Text from other people, made safe to show: never markup, never a terminal control.

Names and chat come from the network. Everything the client draws from them goes through
``literal`` (a rich ``Text``, which Textual never parses as markup) after ``visible`` has
replaced each control or format character (Unicode category C: escape, newline, zero-width
spaces, direction overrides, ...) and each line or paragraph separator with a visible stand-in.
"""

from __future__ import annotations

import unicodedata

from rich.text import Text

_C0_PICTURES = 0x2400  # U+2400..U+241F: the control pictures ␀..␟
_DELETE_PICTURE = "\u2421"  # ␡


def _stand_in(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(_C0_PICTURES + code)
    if code == 0x7F:
        return _DELETE_PICTURE
    return f"<U+{code:04X}>"


def visible(text: str) -> str:
    """``text`` with every control or format character replaced by a visible stand-in."""
    if text.isprintable():  # the usual case: nothing of category C (nor separators but space)
        return text
    return "".join(_stand_in(char) if _hidden(char) else char for char in text)


def _hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] == "C" or category in ("Zl", "Zp")  # line/paragraph separators too


def literal(text: str, style: str = "") -> Text:
    """A ``Text`` showing ``text`` exactly (markup stays text, controls become visible)."""
    return Text(visible(text), style=style, no_wrap=False)


def bot_mark(bot: bool) -> Text:
    """`` BOT`` (the word reversed, as a badge) after the name of an account a program plays,
    or a tournament's computer player; nothing for a person."""
    return Text(" ").append("BOT", "bold reverse") if bot else Text("")


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first and a full stop last (the server's refusals
    are short lowercase phrases; the web client shows them the same way)."""
    trimmed = text.strip()
    if not trimmed:
        return ""
    capital = trimmed[0].upper() + trimmed[1:]
    return capital if capital[-1] in ".!?…:" else f"{capital}."


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` agreeing: ``1 blunder``, ``2 blunders``, ``0 threats missed`` (give
    ``plural`` where it is not ``word`` + s: ``count(n, "threat missed", "threats missed")``)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def within(plies: int | None) -> str:
    """How near a proved end is, after "wins": `` within 3 plies``, `` within 1 ply``; empty
    when not known, or when it is 0 (the game is over: say so instead, see ``has_won``)."""
    return "" if not plies else f" within {count(plies, 'ply', 'plies')}"


def moves_of(plies: int) -> int:
    """How many moves a game of ``plies`` half-moves has, as the move list numbers them (X's
    and O's move are one numbered move: 38 plies are moves 1 to 19)."""
    return (plies + 1) // 2
