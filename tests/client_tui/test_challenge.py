"""Players online and challenges by name, driven by Pilot against a real server (issue 14,
item 13): the lobby lists who is on, a key challenges the selected player with a dialog of
terms, the one challenged is asked (the focus on Decline), and the challenger hears of a
decline, a cancel and a challenge lapsed because the other left."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from scenes import challenge, game, lobby
from textual.widgets import Button, DataTable, Label, Select
from tui_helpers import client, in_lobby, running_server, screen_text, unconnected, until

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.screens.account import AccountScreen
from client_tui.screens.dialogs import CancelDialog, ConfirmDialog, GameOptions, OptionsDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.puzzle import PuzzleScreen
from server.http.app import RunningServer
from server.protocol import ChallengeCancel, ChallengeInfo, ChallengeSent, ClockSpec

SIZE = (100, 30)


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


def notes(app: QubicApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def players_shown(app: QubicApp) -> list[str]:
    assert app.lobby_screen is not None
    table = app.lobby_screen.query_one("#players", DataTable)
    return [str(table.get_row_at(n)[0]) for n in range(table.row_count)]


async def test_a_challenge_declined_then_accepted(server: RunningServer, tmp_path: Path) -> None:
    ann, bob = client(server, "ann", tmp_path), client(server, "bob", tmp_path)
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await until(pb, lambda: in_lobby(bob), "bob's lobby")
        await until(pa, lambda: players_shown(ann) == ["ann", "bob"], "bob among those online")
        assert "1500" in str(ann.lobby_screen.query_one("#players", DataTable).get_row_at(1))  # type: ignore[union-attr]

        # Enter on a player opens the terms, on the first field: Enter there sends nothing
        ann.lobby_screen.query_one("#players", DataTable).focus()  # type: ignore[union-attr]
        await pa.press("down", "enter")
        await until(pa, lambda: isinstance(ann.screen, OptionsDialog), "the terms")
        dialog = ann.screen
        assert str(dialog.query_one(".dialog-title", Label).render()) == "Challenge bob"
        assert isinstance(ann.focused, Select) and ann.focused.id == "variant"
        assert dialog.query_one("#rated", Select) is not None
        await pa.click("#ok")
        await until(pb, lambda: isinstance(bob.screen, ConfirmDialog), "bob to be asked")
        prompt = bob.screen
        assert "ann challenges you" in str(prompt.query_one(".dialog-text").render())
        assert isinstance(bob.focused, Button) and bob.focused.id == "no"
        await until(pa, lambda: ann.session.challenges_out, "ann's challenge to be open")
        status = str(ann.lobby_screen.query_one("#lobby-status").render())  # type: ignore[union-attr]
        assert "You challenged bob" in status

        await pb.press("enter")  # the safe answer: decline
        await until(pa, lambda: not ann.session.challenges_out, "the decline")
        await until(pa, lambda: any("bob declined" in n for n in notes(ann)), "the note")
        assert in_lobby(bob) and not bob.session.challenges_in

        # v challenges the selected player, with the terms chosen; y accepts
        ann.lobby_screen.options["challenge"] = GameOptions(  # type: ignore[union-attr]
            variant="3x3x3", colour="o", rated=True, clock=ClockSpec(initial=300, increment=5))
        await pa.press("v")
        await until(pa, lambda: isinstance(ann.screen, OptionsDialog), "the terms again")
        await pa.click("#ok")
        await until(pb, lambda: isinstance(bob.screen, ConfirmDialog), "bob asked again")
        assert "3x3x3 · 5+5 · ann plays O · rated" in str(
            bob.screen.query_one(".dialog-text").render())
        await pb.press("y")
        await until(pa, lambda: isinstance(ann.screen, GameScreen), "ann's game")
        await until(pb, lambda: isinstance(bob.screen, GameScreen), "bob's game")
        assert ann.screen.model.you == "o" and bob.screen.model.you == "x"  # type: ignore[attr-defined]
        assert ann.screen.model.rated  # type: ignore[attr-defined]
        assert not ann.session.challenges_out


async def test_cancelled_and_lapsed_challenges(server: RunningServer, tmp_path: Path) -> None:
    ann, bob = client(server, "ann", tmp_path), client(server, "bob", tmp_path)
    async with ann.run_test(size=SIZE) as pa:
        async with bob.run_test(size=SIZE) as pb:
            await until(pa, lambda: in_lobby(ann), "ann's lobby")
            await until(pb, lambda: in_lobby(bob), "bob's lobby")
            await until(pa, lambda: players_shown(ann) == ["ann", "bob"], "bob online")
            assert ann.lobby_screen is not None
            table = ann.lobby_screen.query_one("#players", DataTable)
            table.focus()
            await pa.press("enter")  # ann herself
            await until(pa, lambda: any("That is you" in n for n in notes(ann)), "why not")
            assert in_lobby(ann)

            await pa.press("down", "v")
            await until(pa, lambda: isinstance(ann.screen, OptionsDialog), "the terms")
            await pa.click("#ok")
            await until(pb, lambda: isinstance(bob.screen, ConfirmDialog), "bob asked")
            await pa.press("x")  # ann cancels: bob's question goes away
            await until(pb, lambda: in_lobby(bob), "the question withdrawn")
            await until(pb, lambda: any("ann cancelled" in n for n in notes(bob)), "the note")
            await until(pa, lambda: not ann.session.challenges_out, "ann's challenge closed")

            await pa.press("v")
            await until(pa, lambda: isinstance(ann.screen, OptionsDialog), "the terms")
            await pa.click("#ok")
            await until(pb, lambda: isinstance(bob.screen, ConfirmDialog), "bob asked")
        # bob quits without answering: the challenge lapses
        await until(pa, lambda: not ann.session.challenges_out, "the lapse")
        await until(pa, lambda: any("bob went offline" in n for n in notes(ann)), "the note")
        await until(pa, lambda: players_shown(ann) == ["ann"], "bob gone from the list")


# -- issue 38: challenges where the player is, outgoing ones listed and each cancellable ----

def sent_to(to: str, challenge_id: str) -> ChallengeSent:
    return ChallengeSent(challenge=ChallengeInfo(
        id=challenge_id, by="ann", to=to, variant="4x4x4",
        clock=ClockSpec(initial=300, increment=5), rated=True, colour="x"))


def feed(app: QubicApp, *messages: object) -> None:
    for message in messages:
        app.post_message(LinkMessage(Received(message)))  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (70, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_outgoing_challenges_are_listed_and_each_cancellable(
        tmp_path: Path, size: tuple[int, int]) -> None:
    app = unconnected(tmp_path)
    sent: list[object] = []
    async with app.run_test(size=size) as pilot:
        app.send = lambda request, quiet=False: sent.append(request) or True  # type: ignore[method-assign]
        app.show_lobby()
        feed(app, lobby(), sent_to("bob", "c1"), sent_to("cat", "c2"))
        await until(pilot, lambda: len(app.session.challenges_out) == 2, "two challenges")
        await pilot.pause()
        shown = " ".join(screen_text(app).split())
        assert "You challenged bob (4x4x4 · 5+5 · you play X · rated)" in shown, shown
        assert "You challenged cat" in shown
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, CancelDialog), "which one?")
        listed = screen_text(app)
        assert "Your challenge to bob" in listed and "Your challenge to cat" in listed
        assert "All of them" in listed
        await pilot.press("down", "enter")  # cat's only
        await until(pilot, lambda: app.screen is app.lobby_screen, "the lobby again")
        cancels = [r for r in sent if isinstance(r, ChallengeCancel)]
        assert [r.challenge for r in cancels] == ["c2"]
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, CancelDialog), "which one?")
        await pilot.press("escape")  # keeps them
        await until(pilot, lambda: app.screen is app.lobby_screen, "the lobby again")
        assert [r for r in sent if isinstance(r, ChallengeCancel)] == cancels


@pytest.mark.parametrize("where", ["game", "puzzles", "account"])
async def test_an_incoming_challenge_is_answered_where_the_player_is(
        tmp_path: Path, where: str) -> None:
    app = unconnected(tmp_path)
    sent: list[object] = []
    async with app.run_test(size=(70, 20)) as pilot:
        app.send = lambda request, quiet=False: sent.append(request) or True  # type: ignore[method-assign]
        app.show_lobby()
        feed(app, lobby())
        await pilot.pause()
        if where == "game":
            feed(app, game())
            await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
        elif where == "puzzles":
            await pilot.press("z")
            await until(pilot, lambda: isinstance(app.screen, PuzzleScreen), "the puzzles")
        else:
            await pilot.press("u")
            await until(pilot, lambda: isinstance(app.screen, AccountScreen), "the account")
        below = app.screen
        feed(app, challenge())
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
        await pilot.pause()
        shown = screen_text(app)
        assert "dan challenges you" in shown and "4x4x4 · 5+5 · colours at random · rated" in \
            shown and "y accepts" in shown, shown
        await pilot.press("y")
        await until(pilot, lambda: app.screen is below, "back where the player was")
        assert [(type(r).__name__, getattr(r, "challenge", None)) for r in sent][-1] == (
            "ChallengeAccept", "c1")
