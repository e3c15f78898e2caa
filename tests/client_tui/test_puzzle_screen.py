"""The terminal client's puzzle screen: a puzzle solved by typed cells against a real server
(the rating change shown), a wrong move answered with the solution, a streak; the model alone;
and snapshots at 80x24 and 120x40."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Label
from tui_helpers import client, in_lobby, running_server, unconnected, until

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.screens.puzzle import PuzzleModel, PuzzleScreen
from client_tui.widgets.board import BoardWidget
from engine import format_cell, format_moves, variant
from engine.puzzles.mate import load_puzzles
from server.protocol import PuzzleAttempt, PuzzleInfo, PuzzleResult, PuzzleShown
from server.store import puzzles as ops
from server.store.puzzles import PuzzleStore, StoredPuzzle

G = variant("4x4x4")
SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def screen_of(app: QubicApp) -> PuzzleScreen:
    assert isinstance(app.screen, PuzzleScreen), app.screen
    return app.screen


def feedback(app: QubicApp) -> str:
    return str(screen_of(app).query_one("#puzzle-feedback", Label).render())


async def type_cell(pilot: Pilot, cell: int) -> None:
    for key in format_cell(cell, G):
        await pilot.press(key)
    await pilot.press("enter")


async def test_puzzles_solved_and_missed_against_a_server(tmp_path: Path) -> None:
    async with running_server(tmp_path) as running:
        app = client(running, "ann", tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: in_lobby(app), "the lobby")
            await pilot.press("z")
            await until(pilot, lambda: isinstance(app.screen, PuzzleScreen)
                        and app.puzzles.status == "solving", "a puzzle")
            info = app.puzzles.puzzle
            assert info is not None
            stored = await PuzzleStore(running.hub.store).read(ops.puzzle_by_id(info.id))
            assert isinstance(stored, StoredPuzzle)
            assert str(screen_of(app).query_one("#puzzle-title", Label).render()) == info.title
            step = stored.puzzle.solution
            while True:
                cell = min(step.accepted)
                await type_cell(pilot, cell)
                reply, nxt = step.accepted[cell]
                if nxt is None or not nxt.accepted:
                    break
                await until(pilot, lambda r=reply: app.puzzles.line[-1:] == [r]
                            and app.puzzles.status == "solving", "the reply")
                assert feedback(app).startswith("Right.")
                step = nxt
            await until(pilot, lambda: app.puzzles.status == "solved", "solved")
            assert feedback(app).startswith("Solved! Your puzzle rating: ")
            assert app.puzzles.change is not None and app.puzzles.change > 0
            await until(pilot, lambda: app.puzzles.history, "the history")
            # the next one, missed
            await pilot.press("n")
            await until(pilot, lambda: app.puzzles.status == "solving"
                        and app.puzzles.puzzle is not None
                        and app.puzzles.puzzle.id != info.id, "the next puzzle")
            second = app.puzzles.puzzle
            assert second is not None
            stored2 = await PuzzleStore(running.hub.store).read(ops.puzzle_by_id(second.id))
            assert stored2 is not None
            wrong = next(c for c in range(64) if c not in second.moves
                         and c not in stored2.puzzle.first_moves)
            await type_cell(pilot, wrong)
            await until(pilot, lambda: app.puzzles.status == "wrong", "the judgement")
            assert app.puzzles.solution == stored2.puzzle.solution.main_line()
            assert "the solution was" in feedback(app)
            # a streak
            await pilot.press("s")
            await until(pilot, lambda: app.puzzles.mode == "streak"
                        and app.puzzles.status == "solving", "a streak")
            assert "streak 0" in str(screen_of(app).query_one("#puzzle-meta", Label).render())
            # the footer's "d Daily" asks for the daily puzzle, not the column d (issue 38
            # item 8)
            await pilot.press("d")
            board = screen_of(app).query_one(BoardWidget)
            assert board.typed == ""
            await until(pilot, lambda: app.puzzles.mode == "daily"
                        and app.puzzles.status == "solving", "the daily puzzle")
            assert "Puzzle of the day" in str(
                screen_of(app).query_one("#puzzle-meta", Label).render())
            await pilot.press("escape")
            await until(pilot, lambda: in_lobby(app), "back in the lobby")


# a shipped "win in 2": its first accepted move, the reply, and the move that wins
TWO = next(p for p in load_puzzles() if p.kind == "win" and p.moves == 2)
FIRST = TWO.first_moves[0]
REPLY, AFTER = TWO.solution.accepted[FIRST]
assert REPLY is not None and AFTER is not None
WINNING = min(AFTER.accepted)
INFO = PuzzleInfo(id=7, variant="4x4x4", moves=list(TWO.position),
                  notation=format_moves(TWO.position, G), to_move=TWO.side,  # type: ignore[arg-type]
                  kind="win", length=2, horizon=0, title=TWO.title, rating=1200, plays=4,
                  solves=3)


def test_the_model_plays_only_when_it_is_its_turn() -> None:
    model = PuzzleModel()
    assert model.play(0) is None
    model.shown(PuzzleShown(puzzle=INFO, mode="next", rating=1500))
    assert model.play(INFO.moves[0]) is None  # taken
    attempt = model.play(FIRST)
    assert attempt == PuzzleAttempt(puzzle=7, moves=[FIRST], mode="next")
    assert model.play(WINNING) is None  # waiting for the judgement
    model.judged(PuzzleResult(puzzle=7, verdict="right", reply=REPLY))
    other = "O" if TWO.side == "x" else "X"
    assert model.words() == f"Right. {other} answered {format_cell(REPLY, G)}: your move."
    model.refused()  # nothing to take back while it is our move
    assert model.status == "solving"
    assert model.play(WINNING) == PuzzleAttempt(puzzle=7, moves=[FIRST, WINNING], mode="next")
    model.refused()
    assert model.mine == [FIRST] and model.line == [FIRST, REPLY]
    model.play(WINNING)
    model.judged(PuzzleResult(puzzle=7, verdict="solved", solution=[FIRST, REPLY, WINNING],
                              rated=True, rating=1562, rating_change=62))
    assert model.words() == "Solved! Your puzzle rating: 1562 (+62)."


async def show_puzzle(app: QubicApp, pilot: Pilot, result: PuzzleResult | None) -> None:
    # the puzzle is in before the screen opens (else it would ask for one, unconnected)
    app.post_message(LinkMessage(Received(PuzzleShown(puzzle=INFO, mode="streak", rating=1500,
                                                      streak=2, best_streak=4))))
    app.puzzles.shown(PuzzleShown(puzzle=INFO, mode="streak", rating=1500, streak=2,
                                  best_streak=4))
    app.push_screen(PuzzleScreen(app.puzzles))
    await pilot.pause()
    if result is not None:
        app.puzzles.play(FIRST)
        app.post_message(LinkMessage(Received(result)))
    await pilot.pause()


@sizes
def test_puzzle(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_puzzle(app, pilot, PuzzleResult(puzzle=7, verdict="right", reply=REPLY))

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_puzzle_missed(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_puzzle(app, pilot, PuzzleResult(
            puzzle=7, verdict="wrong", solution=TWO.solution.main_line(), rated=False,
            rating=1500,
            streak=0, best_streak=4))

    assert snap_compare(app, terminal_size=size, run_before=show)
