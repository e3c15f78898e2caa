"""bench/perft.c, the yardstick of the kernel's perft, counts what the kernel counts; and the
kernels' shared helpers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine import Board
from engine.kernels import negamax as kernel
from engine.kernels.perft import count_sequences
from engine.players.base import parse_float

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_c_perft_and_its_other_builds_count_what_the_kernel_counts(tmp_path: Path) -> None:
    for flags in ([], ["-DHISTOGRAM"], ["-DCOUNTERS"]):
        binary = tmp_path / "perft"
        subprocess.run(["cc", "-O2", *flags, "-o", str(binary), str(ROOT / "bench" / "perft.c")],
                       check=True)
        for depth in (1, 3):
            out = subprocess.run([str(binary), str(depth), "1"], capture_output=True, text=True,
                                 check=True).stdout.split()
            assert int(out[1]) == count_sequences(Board("4x4x4"), depth)


def test_tables_are_unsigned_so_no_index_wraps_around() -> None:
    t = kernel.tables_for(Board("4x4x4").geometry)
    for table in (t.line_cells, t.cell_lines, t.cell_degree):
        assert table.dtype.kind == "u"
    assert (t.cell_lines[0, : t.cell_degree[0]] != kernel.PAD).all()
    assert kernel.State.from_board(Board("4x4x4")).counts.dtype == np.uint8


def test_take_pv_puts_the_move_before_the_childs_line() -> None:
    pv = np.zeros((4, 4), dtype=np.int32)
    pv_len = np.array([0, 0, 4, 0], dtype=np.int32)
    pv[2, 2:4] = [7, 9]
    take_pv = kernel.take_pv.py_func  # the compiled one is inlined into the searches
    take_pv(pv, pv_len, 1, 5)
    assert list(pv[1, 1:4]) == [5, 7, 9] and pv_len[1] == 4
    pv_len[1] = 1  # a child that ended at once: the line is the move alone
    take_pv(pv, pv_len, 0, 3)
    assert pv[0, 0] == 3 and pv_len[0] == 1


def test_a_number_option_names_its_range_and_unit() -> None:
    seconds = parse_float(0.01, 3600.0, " seconds")
    assert seconds("2.5") == 2.5
    with pytest.raises(ValueError, match="must be 0.01-3600 seconds"):
        seconds("0")
