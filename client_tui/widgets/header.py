"""The screens' header: Textual's ``Header``, whose title survives the header's own teardown.

Textual's ``Header`` watches the app's and its screen's title and sub-title, and on each change
looks up its ``HeaderTitle`` child to update it. The app's sub-title changes with the
connection's state (``QubicApp._set_state``: every second while it counts down to a
reconnection), and every header watches it, also one whose screen is being taken down: its
children already gone, the lookup raised ``NoMatches``, which Textual's watcher lets through
and which stops the app (seen once in the full suite on a slow machine, at a challenge
screen's close). This header updates its title the same way and lets a header without its
title go.
"""

from __future__ import annotations

import contextlib

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderTitle


class ScreenHeader(Header):
    """``Header``, whose title watcher ignores a header whose title is gone (module doc)."""

    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # instead of Header's watchers, not beside them

        async def set_title() -> None:
            with contextlib.suppress(NoScreen, NoMatches):  # the header goes with its screen
                self.query_one(HeaderTitle).update(self.format_title())

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)
