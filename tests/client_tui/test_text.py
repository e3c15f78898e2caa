"""Text from other people is shown literally: no markup, no terminal controls."""

from __future__ import annotations

from client_tui.text import literal, visible


def test_markup_stays_text() -> None:
    text = literal("[b]x[/b] [red]hi[/red]")
    assert text.plain == "[b]x[/b] [red]hi[/red]"
    assert not text.spans


def test_controls_become_visible() -> None:
    assert visible("a\x1b[31mb") == "a␛[31mb"
    assert visible("line\nbreak\ttab\x7f") == "line␊break␉tab␡"
    assert visible("zero\u200bwidth\u202e") == "zero<U+200B>width<U+202E>"
    assert visible("sep\u2028x") == "sep<U+2028>x"


def test_ordinary_text_is_untouched() -> None:
    for text in ("ann", "good game!", "échec et mat ♟", "日本語"):
        assert visible(text) == text
