"""The help screen (``?``): the rules in brief and every key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# Qubic — 3D tic-tac-toe

Four in a row wins on the 4x4x4 cube: along a row, a column, a pillar through the levels,
or any diagonal — 76 lines in all. X moves first. On 3x3x3 it is three in a row; 4x4 is
flat. Cells are written *level, column, row*: `1a1` is the bottom corner of level 1, `4d4`
the far corner of level 4 (a 2-D board drops the level: `b3`).

## Lobby

- `c` — play the computer now (with the options shown)
- `o` — change the computer's level, the board, your colour and the clock
- `p` — quick pairing against a person of close rating (`x` cancels)
- `s` — post a seek that anyone can accept (`x` cancels)
- `n` — create a private room and show its code (`x` closes it)
- `j` — join a private room by its code (`0` and `O` are read the same)
- `g` — my games: go back to an unfinished one, or open a finished one to replay it
- `u` — your account (user): protect your name with a password (to log in on other computers),
  your devices (log one out, or every other one); if you lose the password, the connect
  screen's *Lost your password?* takes one of your recovery codes and a new one
- `z` — puzzles: win in N or survive; `n` next, `d` the puzzle of the day, `s` a streak
- `⏎` — accept the selected seek, watch the selected game, or challenge the selected
  player online (`v` challenges the player selected in that table). A challenge to you
  asks wherever you are (in a game, in puzzles): `y` accepts, `n`, Enter or Escape decline
- `l` — reload the leaderboard
- `i` — the page of the player selected online (or on the leaderboard): record, rating
  history, games to replay; `⏎` on the leaderboard opens it too
- `a` — the analysis board: try moves for both sides and see who wins
- `t` — tournaments: arenas (play as many games as you can while it runs: 2 points a win, 1 a
  draw, doubled after two wins in a row, *on fire*) and Swiss (a set number of rounds);
  `⏎` opens one: its standings (each game's points, `BOT` by a program's name, `●` playing
  now) and its games (`⏎` watches); `j` joins, `l` leaves, `y` goes to your game. Once in,
  your next game opens by itself; its title names the tournament and `b` comes back to it.
  A moderator's `n` on the list schedules one (name, arena or Swiss, start, length, clock,
  board, computer players, rated)
- `BOT` marks a program's account wherever a name is listed; `c` on a player's page
  challenges them, a bot as a person
- `w` — another server (or offline), or another name: the connect form, filled in with this
  session's; `⏎` connects (if that fails, the form says why and stays), `esc` goes back.
  A name is its own player: another name is a new player, or a protected one with its
  password (`ctrl+p` *Connect to a server…* and *Rename…* open the same form)
- `x` — cancel what you wait for: your seek, quick pairing, private room or a challenge you
  sent (each listed above the tables with its terms); with more than one, a list asks which
- `tab` — move between the tables

## Game

- arrows — move the cursor within a level
- `[` `]`, PgUp PgDn — the level below / above
- `⏎`, space, click — play the cell under the cursor
- `2b3` then `⏎` — play a cell by its name; an unfinished or wrong one is never played,
  the line under the board says why (`esc` clears what you typed)
- an occupied cell is never played: the line under the board says so
- the cursor is drawn in brackets `[ ]` on a grey ground; the last move in parentheses
  `( )`, underlined on a yellow ground; a winning line between equals signs `=X=` on a green
  ground, and named in the result
- `t` — show or hide each side's threats (`x`/`o`: that side wins there next; shown at first)
- `g` — show or hide the lines through the cursor cell: the grey `+` marks every empty
  cell on a line through it (where a move would join it), shown at first
- `,` `.` — step back / forward through the moves; `home` the position before the first
  move; `end` returns to the game
- `r` — resign
- `o` — offer a draw, or accept the one offered; `n` declines
- `k` — abort (before both sides have moved)
- `w` — claim the win when your opponent has been gone too long
- `m` — ask for a rematch once the game is over (once it was played: go to it)
- `h` — against the computer (casual games), a hint: the engine's move, marked `!`
- `u` — against the computer (casual games), take back your last move and its reply
- `/` — chat (`esc` back to the board)
- `v` — once the game is over, its review (also `v` in my games)
- `b` — a tournament's game: back to the tournament's page (the next game opens by itself)
- `esc` — clears a cell being typed; else back to the lobby (asks first during a game), or
  to the list of games it was opened from (my games, a player's page): the footer says which
- `2 watching` beside the game's terms: people watch (kept up to date as they come and go)
- in a question: `←` `→` or `tab` move between the buttons, `y` says yes, `n` or `esc` no

## Review and analysis

- review: `,` `.` (or ← →) step through the moves, `home` `end` jump; each move is marked
  `!` (a forced win found), `??` (a blunder: a win or a draw thrown away), `?!` (a threat
  missed); the best move there is marked `!` on the board, the line that would have won is
  written under it; `a` opens the analysis board on the position shown
- analysis board: play both sides on the board; `u` takes back, `e` empties the board, `p`
  sets up moves (`1a1 2b2 …`), `y` copies them; the solver says who wins and what each move
  does (`wins 3`: a forced win in 3 plies; `?`: not proved)

Everywhere: `?` this help, `ctrl+p` every command of the screen, `ctrl+q` quit.
The bell rings when a person you play moves, a game you waited for starts, or a challenge
comes; `ctrl+p` "Bell" turns it off (on at first: a terminal has no other way to call you
back from another window).
The level, colour, clock and other options you pick are remembered for next time.
"""


class HelpScreen(ModalScreen[None]):
    """Rules and keys; any of Escape, ``q`` or ``?`` closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
