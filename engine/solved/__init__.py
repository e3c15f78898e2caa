"""What is proved about positions: Patashnik's dictionary, X's proved strategy on 4x4x4 and
its proof (``dictionary``, ``strategy``, ``proof``), the solved small boards
(``small_boards``), the opening book (``book``), the truth of a position (``truth``, with its
fast ``probe``) and a finished game's review by it (``review``)."""
