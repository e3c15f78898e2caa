"""The screens' header (``client_tui.widgets.header``): its title follows the app's, and a
header whose title has gone with its screen does not stop the app."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets._header import HeaderTitle

from client_tui.widgets.header import ScreenHeader


class _Headed(App[None]):
    TITLE = "Qubic"

    def compose(self) -> ComposeResult:
        yield ScreenHeader()


async def test_the_header_shows_the_apps_sub_title() -> None:
    app = _Headed()
    async with app.run_test() as pilot:
        app.sub_title = "ann · connected"
        await pilot.pause()
        shown = str(app.query_one(HeaderTitle).render())
        assert "Qubic" in shown and "ann · connected" in shown


async def test_a_header_without_its_title_lets_the_sub_title_change() -> None:
    """As a screen is taken down its header's children go first; the app's sub-title
    changing then (the connection's state) raised ``NoMatches`` from Textual's ``Header``
    and stopped the app (``run_test`` raises it on leaving)."""
    app = _Headed()
    async with app.run_test() as pilot:
        await app.query_one(HeaderTitle).remove()
        app.sub_title = "ann · connection lost: reconnecting in 3s"
        await pilot.pause()
    assert app.return_code in (0, None)
