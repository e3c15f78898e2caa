"""An exhaustive solver for short forced wins, separate from the engine's search.

Plain Python over bitboards: ``wins_within(mine, theirs, plies)`` answers whether the side to
move (stones ``mine``) can force a completed line within ``plies`` plies (odd), with every
defender reply considered. The only shortcuts are the game's own rules, which are exact:

- a side with a win cell on its move wins at once;
- the side to move facing two win cells of the other side, with none of its own, loses;
  facing one, every move but the block loses at once, so the block is its only move;
- after an attacker move that makes two win cells (and leaves the defender none), every
  reply loses; after one that makes one, every reply but the block loses at once.

``continuous`` restricts the attacker to moves that make a line one stone from done (a
restriction that can only miss wins). Results are memoised by position; they are used to
label the forced-win suite and to check the engine's threat search, never by the engine.
"""

from __future__ import annotations

from engine.rules.geometry import Bitboard, Cell, Geometry, cells_of, variant


class Solver:
    """Forced wins within a few plies on one board."""

    def __init__(self, board_variant: str | Geometry = "4x4x4") -> None:
        g = variant(board_variant)
        self.n = g.n
        self.full = g.full_mask
        self.masks = g.line_masks
        self.memo: dict[tuple[Bitboard, Bitboard, bool], tuple[int, int]] = {}
        self.nodes = 0
        self.threats_only = False

    def win_cells(self, mine: Bitboard, theirs: Bitboard) -> Bitboard:
        """The empty cells that complete a line for ``mine``."""
        out = 0
        n1 = self.n - 1
        for mask in self.masks:
            if not mask & theirs and (mask & mine).bit_count() == n1:
                out |= mask & ~mine
        return out

    def wins_within(self, mine: Bitboard, theirs: Bitboard, plies: int) -> bool:
        """Whether the side to move forces a win within ``plies`` plies."""
        if plies < 1:
            return False
        # memo: (proved win within a, proved no win within b)
        memo_key = (mine, theirs, self.threats_only)
        known_win, known_fail = self.memo.get(memo_key, (10**9, -1))
        if plies >= known_win:
            return True
        if plies <= known_fail:
            return False
        result = self._search(mine, theirs, plies)
        if result:
            known_win = min(known_win, plies)
        else:
            known_fail = max(known_fail, plies)
        self.memo[memo_key] = (known_win, known_fail)
        return result

    def _search(self, mine: Bitboard, theirs: Bitboard, plies: int) -> bool:
        self.nodes += 1
        if self.win_cells(mine, theirs):
            return True
        empty = self.full & ~(mine | theirs)
        if plies == 1 or not empty:
            return False
        threats = self.win_cells(theirs, mine)
        if threats & (threats - 1):
            return False
        moves = list(cells_of(threats)) if threats else self.ordered(mine, theirs, empty)
        return any(self.move_wins(mine, theirs, m, plies) for m in moves)

    def move_wins(self, mine: Bitboard, theirs: Bitboard, move: Cell, plies: int) -> bool:
        """Whether ``move`` by the side to move forces a win within ``plies`` plies in all."""
        after = mine | 1 << move
        if self.win_cells(after, theirs) == 0 and (plies < 5 or self.threats_only):
            return False  # with no threat the defender may play anywhere: no win in 3
        if self.win_cells(theirs, after):
            return False  # the defender completes a line at once
        empty = self.full & ~(after | theirs)
        if not empty:
            return False
        mine_wins = self.win_cells(after, theirs)
        if mine_wins & (mine_wins - 1):
            return plies >= 3
        replies = list(cells_of(mine_wins)) if mine_wins else self.ordered(theirs, after, empty)
        return all(self.wins_within(after, theirs | 1 << r, plies - 2) for r in replies)

    def winning_moves(self, mine: Bitboard, theirs: Bitboard, plies: int) -> list[Cell]:
        """Every move that forces a win within ``plies`` plies (an immediate win included)."""
        empty = self.full & ~(mine | theirs)
        now = self.win_cells(mine, theirs)
        out = []
        threats = self.win_cells(theirs, mine)
        for m in cells_of(empty):
            if now >> m & 1 or plies >= 3 and not (threats & ~(1 << m)) and self.move_wins(
                mine, theirs, m, plies
            ):
                out.append(m)
        return out

    def continuous(self, mine: Bitboard, theirs: Bitboard, plies: int) -> bool:
        """Whether a win within ``plies`` plies exists in which every attacker move makes a
        line one stone from done (a win by continuous threats)."""
        self.threats_only = True
        try:
            return self.wins_within(mine, theirs, plies)
        finally:
            self.threats_only = False

    def shortest_win(self, mine: Bitboard, theirs: Bitboard, limit: int) -> int | None:
        """The fewest plies (odd, at most ``limit``) within which the side to move wins."""
        for plies in range(1, limit + 1, 2):
            if self.wins_within(mine, theirs, plies):
                return plies
        return None

    def ordered(self, mine: Bitboard, theirs: Bitboard, empty: Bitboard) -> list[Cell]:
        """Empty cells, those on most lines still open to ``mine`` with stones first."""
        score = dict.fromkeys(cells_of(empty), 0)
        for mask in self.masks:
            if mask & theirs:
                continue
            k = (mask & mine).bit_count()
            if k:
                for c in cells_of(mask & empty):
                    score[c] += 4**k
        return sorted(score, key=lambda c: -score[c])
