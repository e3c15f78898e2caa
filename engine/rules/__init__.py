"""The rules and geometry of n^d Qubic: cells, winning lines and symmetries (``geometry``),
the board, its moves and outcome (``board``), and text for cells and games (``notation``).
No numba: numpy only, loaded with the geometry."""
