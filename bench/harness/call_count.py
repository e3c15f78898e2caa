"""Count the server's function calls over a stretch of a run: ``bench/load.py --profile-calls``.

``python -m bench.harness.call_count STATS qubic-arguments...`` runs ``qubic``, cProfile off;
``SIGUSR1`` turns it on in the event loop's thread, ``SIGUSR2`` turns it off and writes its
stats to ``STATS`` (``pstats``'s format). The load generator signals around a stretch of the
measured window and divides the calls by the moves the server counted in it
(``calls_per_move``): every Python function called and every built-in (C) function, listed
apart, and the functions called most a move."""

from __future__ import annotations

import cProfile
import pstats
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType


@dataclass(frozen=True)
class CallCount:
    """Calls a move over a profiled stretch: ``python`` (functions written in Python),
    ``builtin`` (C functions and methods), and the ``top`` functions by calls a move."""

    moves: int
    python: float
    builtin: float
    top: list[tuple[str, float]]

    def lines(self) -> list[str]:
        out = [f"calls a move     {self.python + self.builtin:.0f} ({self.python:.0f} Python "
               f"functions, {self.builtin:.0f} built-in), over {self.moves} moves"]
        out += [f"    {calls:7.2f}  {name}" for name, calls in self.top]
        return out


def calls_per_move(stats_path: str | Path, moves: int, top: int = 25) -> CallCount:
    """Read the stats ``STATS`` and divide by ``moves``."""
    stats = pstats.Stats(str(stats_path)).stats  # type: ignore[attr-defined]
    python = builtin = 0
    named: list[tuple[str, int]] = []
    for (filename, line, function), (_, calls, *_rest) in stats.items():
        if filename == "~":  # a built-in: cProfile names it "<built-in method ...>"
            builtin += calls
            named.append((function, calls))
        else:
            python += calls
            short = filename.split("/site-packages/")[-1].split("/hotpath/")[-1]
            named.append((f"{short}:{line}({function})", calls))
    named.sort(key=lambda item: -item[1])
    per = max(1, moves)
    return CallCount(moves, python / per, builtin / per,
                     [(name, calls / per) for name, calls in named[:top]])


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    profiler = cProfile.Profile()

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    def stop(signum: int, frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from qubic_cli.main import main as qubic

    return qubic(argv)


if __name__ == "__main__":
    sys.exit(main())
