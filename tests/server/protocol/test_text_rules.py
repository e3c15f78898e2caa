"""The rule of free text people read (chat, reasons): something visible, nothing invisible,
no line breaks of any kind, no towers of combining marks (issue 36, item 8). Pure: the
decoder, no server. Property tests draw the blank-looking, the invisible and the ordinary."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.errors import ProtocolError
from server.protocol import decode_client_message
from server.protocol.field_types import MAX_MARKS, text_fault

INVISIBLE = [0x3164, 0x115F, 0x1160, 0xFFA0, 0x00AD, 0x034F, 0x200B, 0x2060, 0x180E, 0xFEFF,
             0x1D173, 0xE0041]
"""Default-ignorable characters (the Hangul fillers first: letters, not format characters)."""
BLANK = [0x20, 0xA0, 0x1680, 0x2000, 0x2007, 0x200A, 0x202F, 0x205F, 0x3000, 0x2800, 0x1D159]
"""Characters that may stand in a line but draw nothing: spaces, the braille blank, the null
notehead."""
SEPARATORS = [0x2028, 0x2029, 0x0A, 0x0D, 0x85, 0x0B, 0x0C]
MARKS = [0x0300, 0x0301, 0x0323, 0x0489, 0x20DD, 0x05B8, 0x093C]  # Mn and Me

blank_lines = st.text(st.sampled_from([chr(c) for c in BLANK + MARKS[:3]]), min_size=1,
                      max_size=300)
ordinary = st.text(st.characters(categories=["L", "N", "P", "S", "Zs"],
                                 exclude_characters="".join(map(chr, INVISIBLE + BLANK))),
                   min_size=1, max_size=100).filter(lambda t: t.strip() != "")


def chat(text: str) -> bytes:
    return json.dumps({"t": "chat", "game": "g1", "text": text}).encode()


def refused(text: str) -> str:
    with pytest.raises(ProtocolError) as caught:
        decode_client_message(chat(text))
    assert caught.value.code == "bad_chat"
    return caught.value.message


@pytest.mark.parametrize("text", [
    "\u3164", "\u3164\u3164\u3164", "\u2800", "\u2800" * 50, "a" + "\u0301" * 296,
    "hello\u2028world", "\u2029", "ｈｉ\u115f", " \u200b ", "\u0301",
])
def test_the_lines_of_the_report_are_refused(text: str) -> None:
    refused(text)


@pytest.mark.parametrize("text", [
    "good game!", "Tiê\u0301ng Vie\u0323\u0302t", "नमस्ते", "שָׁלוֹם", "👍🏽", "❤️", "1️⃣",
    "안녕하세요", "สวัสดี", "ཧཱུྃ", "⠀⠀⠁ braille art", "e" + "\u0301" * MAX_MARKS,
])
def test_ordinary_writing_passes(text: str) -> None:
    assert decode_client_message(chat(text)).text == text  # type: ignore[union-attr]


@given(blank_lines)
def test_a_line_with_nothing_visible_is_refused(text: str) -> None:
    assert text_fault(text) is not None


@given(ordinary, st.sampled_from(INVISIBLE + SEPARATORS), st.data())
def test_one_invisible_character_or_line_break_anywhere_is_refused(
    text: str, bad: int, data: st.DataObject,
) -> None:
    at = data.draw(st.integers(0, len(text)))
    assert text_fault(text[:at] + chr(bad) + text[at:]) is not None


@given(ordinary)
def test_letters_digits_punctuation_and_symbols_pass(text: str) -> None:
    if any(unicodedata.category(c)[0] == "C" for c in text):
        return  # surrogates and such are not drawn by the strategy; belt and braces
    assert text_fault(text) is None, text


@given(st.text(st.sampled_from("abcxyz"), min_size=1, max_size=20),
       st.lists(st.integers(0, MAX_MARKS), min_size=20, max_size=20), st.data())
def test_a_few_marks_on_each_character_pass_and_one_more_anywhere_is_refused(
    base: str, counts: list[int], data: st.DataObject,
) -> None:
    marks = st.sampled_from([chr(c) for c in MARKS])
    line = "".join(c + "".join(data.draw(marks) for _ in range(n))
                   for c, n in zip(base, counts, strict=False))
    assert text_fault(line) is None
    at = data.draw(st.integers(0, len(base) - 1))
    tower = "".join(data.draw(marks) for _ in range(MAX_MARKS + 1))
    assert text_fault(base[:at + 1] + tower + base[at + 1:]) is not None


def test_a_reason_follows_the_same_rule() -> None:
    for reason in ("\u3164", "spam\u2028spam", "x" + "\u0300" * 9):
        with pytest.raises(ProtocolError) as caught:
            decode_client_message(json.dumps({"t": "report", "name": "bob", "reason": reason}))
        assert caught.value.code == "bad_message"
    report = decode_client_message('{"t": "report", "name": "bob", "reason": "rude"}')
    assert report.reason == "rude"  # type: ignore[union-attr]
