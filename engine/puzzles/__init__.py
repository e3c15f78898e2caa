"""Puzzles: "X to play and force a win in N" and "O to play and survive", made and checked by
an exact bounded search (``mate``), and harvested from finished games (``sources``)."""
