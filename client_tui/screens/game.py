"""The game screen: the board, the seats and clocks, the moves, the chat, and the game's keys."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input

from client_tui.messages import LeaveGame, OpenTournament, Outgoing, SettingsChanged
from client_tui.model import GameModel, other, threats
from client_tui.screens.dialogs import ConfirmDialog
from client_tui.settings import Settings
from client_tui.text import visible
from client_tui.widgets.board import BoardView, BoardWidget
from client_tui.widgets.chat import ChatPanel
from client_tui.widgets.game_info import GameInfo
from client_tui.widgets.header import ScreenHeader
from client_tui.widgets.move_list import MoveList
from engine import O, X
from server.protocol import (
    Abort,
    Chat,
    Claim,
    DrawAccept,
    DrawDecline,
    DrawOffer,
    Hint,
    Move,
    Rematch,
    Resign,
    ReviewGame,
    TakeBack,
    Watch,
)

TICK_SECONDS = 0.1


class GameScreen(Screen[None]):
    """One game, played or watched. The app owns the model and calls ``update`` on changes."""

    # The footer shows a few keys (it must fit 80 columns with "? Help" and the palette);
    # every one is in the help (?) and in the command palette (ctrl+p), by its tooltip.
    BINDINGS = [
        Binding("t", "threats", "Threats", show=False, id="game.threats",
                tooltip="Show or hide each side's threats (where it would complete a line)"),
        Binding("g", "guides", "Lines", show=False, id="game.guides",
                tooltip="Show or hide the lines through the cursor cell"),
        Binding("r", "resign", "Resign", id="game.resign", tooltip="Resign the game"),
        Binding("o", "offer_draw", "Draw", id="game.offer_draw", tooltip="Offer a draw"),
        Binding("o", "accept_draw", "Accept", id="game.accept_draw",
                tooltip="Accept the draw offered"),
        Binding("n", "decline_draw", "Decline", id="game.decline_draw",
                tooltip="Decline the draw offered"),
        Binding("o", "say('The computer never agrees to a draw: play on, or r resigns.')",
                show=False, id="game.no_draw"),
        Binding("k", "abort", "Abort", show=False, id="game.abort",
                tooltip="Abort the game (before both sides have moved)"),
        Binding("w", "claim", "Claim win", show=False, id="game.claim",
                tooltip="Claim the win: your opponent has been gone too long"),
        Binding("h", "hint", "Hint", id="game.hint",
                tooltip="Ask the engine for a move (casual games against the computer)"),
        Binding("u", "takeback", "Take back", id="game.takeback",
                tooltip="Take back your last move and the computer's reply"),
        Binding("h", "say_refused('hint')", show=False, id="game.no_hint"),
        Binding("u", "say_refused('takeback')", show=False, id="game.no_takeback"),
        Binding("m", "rematch", "Rematch", id="game.rematch", tooltip="Ask for a rematch"),
        Binding("m", "say('Rematch asked: waiting for your opponent to agree.')", show=False,
                id="game.rematch_asked"),
        Binding("m", "open_rematch", "Rematch game", id="game.open_rematch",
                tooltip="Go to the rematch that followed this game"),
        Binding("comma", "step(-1)", "Moves", key_display=", .", id="game.back",
                tooltip="Step back one move"),
        Binding("full_stop", "step(1)", "Forward", show=False, id="game.forward",
                tooltip="Step forward one move"),
        Binding("home", "first", "First move", show=False, id="game.first",
                tooltip="Show the position before the first move"),
        Binding("end", "live", "Live", show=False, id="game.live",
                tooltip="Back to the live position"),
        Binding("slash", "chat", "Chat", key_display="/", show=False, id="game.chat",
                tooltip="Type in the chat"),
        Binding("escape", "leave('lobby')", "Lobby", id="game.leave",
                tooltip="Back to the lobby"),
        Binding("escape", "leave('back')", "Back", id="game.leave_back",
                tooltip="Back to the list of games this one was opened from"),
        Binding("v", "review", "Review", id="game.review",
                tooltip="The game's review: where it was won and lost"),
        Binding("b", "tournament", "Tournament", id="game.tournament",
                tooltip="The page of the tournament this game belongs to"),
    ]

    def __init__(
        self, model: GameModel, clock: Callable[[], float] = time.monotonic,
        settings: Settings | None = None, back: bool = False,
    ) -> None:
        super().__init__()
        self.model = model
        self.back = back  # opened from a list of games (My games, a player's page): Esc
        # goes back to it; else (a game started, or arrived over Puzzles...) to the lobby
        self.settings = settings or Settings()  # what the board shows, shared with the app
        self._clock = clock
        self._pending_ply: int | None = None  # the ply our last move answered, until it lands
        self._ready = False  # composed and mounted: the widgets can be queried
        self._chatted = False  # a chat line was just said: the next key is the first after it

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield BoardWidget(self._board_view(), id="board")
        with Horizontal(id="game-below"):
            with Vertical(id="game-left"):
                yield GameInfo(id="game-info")
                yield MoveList(id="moves")
            yield ChatPanel(id="chat")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True
        self.update()
        self.query_one(BoardWidget).focus()
        self.set_interval(TICK_SECONDS, self._tick)

    def now(self) -> float:
        return self._clock()

    # -- attributes down -------------------------------------------------------------------

    @property
    def show_threats(self) -> bool:
        """Threats are shown (unless hidden) while they matter: not on a game's last position."""
        return self.settings.show_threats and not (self.model.over and not self.model.reviewing)

    def _board_view(self) -> BoardView:
        model = self.model
        board = model.shown_board()
        return BoardView(
            board=board,
            last_move=model.last_move(),
            winning_line=model.winning_line() or (),
            threats=(threats(board, X), threats(board, O)) if self.show_threats else
            (frozenset(), frozenset()),
            show_threats=self.show_threats,
            show_guides=self.settings.show_guides,
            suggested=None if model.suggestion is None or model.reviewing
            else model.suggestion.cell,
            not_playable=(None if model.my_turn and not model.reviewing
                          else "watching" if model.you is None
                          else "looking back (end: live)" if model.reviewing
                          else "not your move now"),
            over=model.over,
        )

    def update(self, model: GameModel | None = None) -> None:
        """Redraw everything from the model (a new one replaces the old, e.g. on resync)."""
        if model is not None:
            self.model = model
        if not self._ready:
            return
        with contextlib.suppress(NoMatches):  # the screen is being taken down (app closing)
            self._redraw()

    def _redraw(self) -> None:
        model = self.model
        if self._pending_ply is not None and model.ply != self._pending_ply:
            self._pending_ply = None
        x, o = model.seat("x"), model.seat("o")
        self.title = visible(f"{x.name} vs {o.name}" + (
            "" if model.tournament is None else f" · {model.tournament_name or 'tournament'}"))
        self.sub_title = self.app.sub_title
        self.query_one(BoardWidget).view = self._board_view()
        self.query_one(GameInfo).show(model, self.now(), self.show_threats)
        self.query_one(MoveList).show(model.move_texts(), model.shown_ply)
        chat = self.query_one(ChatPanel)
        chat.describe(model.you is not None, model.spectator_chat)
        chat.show(model.chat)
        self.refresh_bindings()

    def _tick(self) -> None:
        model = self.model
        ticking = model.clocks is not None and model.clocks.running and not model.over
        if ticking or model.claim_at:
            self.query_one(GameInfo).show(model, self.now(), self.show_threats)
            if model.claim_at:
                self.refresh_bindings()

    # -- playing ---------------------------------------------------------------------------

    def on_board_widget_cell_picked(self, event: BoardWidget.CellPicked) -> None:
        event.stop()
        self._chatted = False
        model = self.model
        if model.reviewing:
            model.show(model.ply)
            self.update()
            self.notify("Back to the live position.", timeout=2)
            return
        if model.you is None:
            self.notify("You are watching this game.", timeout=2)
            return
        if model.over:
            self.notify("The game is over.", timeout=2)
            return
        if not model.my_turn:
            self.notify("Not your turn yet.", timeout=2)
            return
        if model.board.piece_at(event.cell) is not None:
            event.board.refuse(f"Not played: {model.notation(event.cell)} is taken")
            return
        if self._pending_ply == model.ply:
            return  # already sent a move for this position
        self._pending_ply = model.ply
        self.post_message(Outgoing(Move(game=model.id, cell=model.notation(event.cell),
                                        ply=model.ply)))

    def on_chat_panel_said(self, event: ChatPanel.Said) -> None:
        event.stop()
        self.post_message(Outgoing(Chat(game=self.model.id, text=event.text)))
        self.query_one(BoardWidget).focus()  # back to playing; / opens the chat again
        self._chatted = True  # an Esc next, out of habit, only leaves the chat: done already

    def on_key(self, event: events.Key) -> None:
        key = event.key
        chatted, self._chatted = self._chatted, False
        if key == "escape" and (chatted or isinstance(self.focused, Input)):
            self.query_one(BoardWidget).focus()
            event.stop()

    # -- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        model = self.model
        seated = model.you is not None
        playing = seated and not model.over
        offered_to_me = seated and model.draw_offer == (other(model.you) if model.you else None)
        if action == "resign":
            return playing
        if action == "offer_draw":
            return playing and not model.against_computer and not offered_to_me
        if action in ("accept_draw", "decline_draw"):
            return playing and offered_to_me
        if action in ("abort", "claim"):
            return playing  # hidden keys: when they cannot act, they say why
        if action in ("hint", "takeback"):  # in the footer of a casual game against it
            return playing and model.against_computer and not model.rated
        if action == "say_refused":  # elsewhere the key says why it does nothing
            return not (playing and model.against_computer and not model.rated)
        if action == "leave":  # one Esc, labelled with where it goes
            return parameters == (("back",) if self.back else ("lobby",))
        if action == "review":
            return model.over
        if action == "tournament":
            return model.tournament is not None
        if action == "rematch":  # a tournament pairs its players again by itself
            return (seated and model.over and model.you not in model.rematch
                    and model.rematch_game is None and model.tournament is None)
        if action == "open_rematch":  # played already: m goes to it, never asks again
            return model.over and model.rematch_game is not None
        if action == "say":  # a key that cannot act here says why
            said = str(parameters[0]) if parameters else ""
            if said.startswith("The computer"):
                return playing and model.against_computer
            if said.startswith("Rematch asked"):
                return (seated and model.over and model.you in model.rematch
                        and model.rematch_game is None)
        return True

    def action_review(self) -> None:
        self.post_message(Outgoing(ReviewGame(game=self.model.id)))

    def action_tournament(self) -> None:
        if self.model.tournament is not None:
            self.post_message(OpenTournament(self.model.tournament, self.model.id))

    def action_say(self, text: str) -> None:
        self.notify(text, timeout=3)

    def action_say_refused(self, what: str) -> None:
        self.notify(self.model.help_refused(what) or "", timeout=3)

    def action_hint(self) -> None:
        model = self.model
        refused = model.help_refused("hint")
        if refused is not None:
            self.notify(refused, timeout=3)
        elif model.suggestion is not None:
            self.notify(f"Hint: {model.suggestion.notation} (marked ! on the board).", timeout=3)
        else:
            self.post_message(Outgoing(Hint(game=model.id)))
            self.notify("Asking the engine for a hint…", timeout=2)

    def action_takeback(self) -> None:
        refused = self.model.help_refused("takeback")
        if refused is not None:
            self.notify(refused, timeout=3)
            return
        self.post_message(Outgoing(TakeBack(game=self.model.id)))

    def action_threats(self) -> None:
        self.settings.show_threats = not self.settings.show_threats
        self.post_message(SettingsChanged())
        self.update()
        self.notify("Threats shown: x and o mark where that side would complete a line."
                    if self.show_threats else "Threats hidden (t shows them).", timeout=3)

    def action_guides(self) -> None:
        self.settings.show_guides = not self.settings.show_guides
        self.post_message(SettingsChanged())
        self.update()
        self.notify("The lines through the cursor are marked with +." if
                    self.settings.show_guides else "Lines hidden (g shows them).", timeout=3)

    def action_resign(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(Outgoing(Resign(game=self.model.id)))

        question = "Resign this game?"
        if self.model.ply < 2:
            question += " (Before both sides have moved, k aborts it instead: no result.)"
        self.app.push_screen(ConfirmDialog(question, "Resign", "Play on"), answered)

    def action_offer_draw(self) -> None:
        self.post_message(Outgoing(DrawOffer(game=self.model.id)))
        self.notify("Draw offered.", timeout=2)

    def action_accept_draw(self) -> None:
        self.post_message(Outgoing(DrawAccept(game=self.model.id)))

    def action_decline_draw(self) -> None:
        self.post_message(Outgoing(DrawDecline(game=self.model.id)))

    def action_abort(self) -> None:
        if self.model.ply >= 2:
            self.notify("Too late to abort: both sides have moved (r resigns).", timeout=3)
            return
        self.post_message(Outgoing(Abort(game=self.model.id)))

    def action_claim(self) -> None:
        model = self.model
        if not model.can_claim(self.now()):
            opponent = other(model.you) if model.you else "o"
            wait = model.claim_in(opponent, self.now())
            self.notify("Nothing to claim: your opponent is here." if wait is None else
                        f"Your opponent may come back: you can claim in {wait:.0f}s.",
                        timeout=3)
            return
        self.post_message(Outgoing(Claim(game=model.id)))

    def action_rematch(self) -> None:
        self.post_message(Outgoing(Rematch(game=self.model.id)))
        self.notify("Rematch asked for.", timeout=2)

    def action_open_rematch(self) -> None:
        if self.model.rematch_game is not None:
            self.post_message(Outgoing(Watch(game=self.model.rematch_game)))

    def action_step(self, delta: int) -> None:
        self.model.step(delta)
        self.update()

    def action_first(self) -> None:
        self.model.show(0)
        self.update()

    def action_live(self) -> None:
        self.model.show(self.model.ply)
        self.update()

    def action_chat(self) -> None:
        self.query_one(ChatPanel).query_one(Input).focus()

    def action_leave(self, where: str = "lobby") -> None:
        """Back to the lobby, or (``back``) to the list this game was opened from: the app
        goes where ``self.back`` says; during a game, after asking."""
        model = self.model
        if model.you is None or model.over:
            self.post_message(LeaveGame(model.id))
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(LeaveGame(model.id))
            else:  # Stay: the keys are the board's again, not the chat's or nobody's
                self.query_one(BoardWidget).focus()

        self.app.push_screen(
            ConfirmDialog("Leave this game? It goes on without you: come back from the lobby, "
                          "or your opponent may claim the win after a while.", "Leave", "Stay"),
            answered,
        )
