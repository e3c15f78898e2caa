"""A program outside the project as a player: it reads a position line and writes a move line.

    position 4x4x4 <millis> <cell> <cell> ...     (to the program: the moves so far, notation)
    <cell>                                        (from the program: its move, e.g. 2b3)

The program is started once per player and kept for its games (``quit`` ends it). Used by
``bench/research/engine_strength.py --outside NAME=CMD`` to measure the master against
programs it was not tuned on (docs/benchmarks.md says which were held out).
"""

from __future__ import annotations

import shlex
import subprocess
from typing import ClassVar

from engine.players import Decision, Limit, Player
from engine.rules.board import Board
from engine.rules.notation import parse_cell


class LinePlayer(Player):
    """The program ``command`` (a shell-quoted command line) as a player."""

    name: ClassVar[str] = "outside"
    summary: ClassVar[str] = "a program speaking the position-line protocol"

    def __init__(self, command: str, label: str = "outside", seed: int = 0) -> None:
        super().__init__(seed)
        self.command, self.label = command, label
        self._process: subprocess.Popen[str] | None = None

    @property
    def spec(self) -> str:
        return f"outside:{self.label}"

    def _program(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(shlex.split(self.command), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True, bufsize=1)
        return self._process

    def _decide(self, board: Board, limit: Limit) -> Decision:
        program = self._program()
        assert program.stdin is not None and program.stdout is not None
        millis = round(1000 * (limit.time or 1.0))
        program.stdin.write(f"position {board.geometry.name} {millis} {board.notation()}\n")
        program.stdin.flush()
        answer = program.stdout.readline().strip()
        if not answer:
            raise RuntimeError(f"{self.label} ({self.command}) said nothing: it exited "
                               f"with {program.poll()}")
        cell = parse_cell(answer, board.geometry)
        if not board.is_legal(cell):
            raise RuntimeError(f"{self.label} played {answer}, illegal after "
                               f"{board.notation() or 'the empty board'}")
        return Decision(move=cell)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.write("quit\n")
            self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
