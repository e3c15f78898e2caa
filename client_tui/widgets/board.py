"""The board: the layers side by side, a cursor, typed coordinates and mouse clicks.

The widget draws whatever ``BoardView`` it is given (attributes down) and posts
``BoardWidget.CellPicked`` when the player picks a cell (messages up); whether the move is
allowed is the screen's business. ``BoardLayout`` is the pure geometry of the drawing, shared by
rendering and by mouse hit-testing: the largest of a few styles that fits the room there is.
About 500 lines, kept whole: drawing, cursor, typing and clicks are one widget's idea, and the
layout they share reads best beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from engine import Board, Cell, O, X, format_cell, parse_cell
from engine.rules.geometry import Geometry

LABEL_WIDTH = 2  # "4 " before each row


@dataclass(frozen=True)
class BoardLayout:
    """Where every part of the drawing goes, in characters, for one board and style."""

    n: int
    layers: int  # n on a 3-D board, 1 on a 2-D one
    cell_w: int  # characters inside a cell
    cell_h: int  # lines inside a cell
    grid: bool  # box-drawing lines around cells
    gap: int  # spaces between layers

    @classmethod
    def for_geometry(
        cls, g: Geometry, cell_w: int, cell_h: int, grid: bool, gap: int
    ) -> BoardLayout:
        return cls(g.n, g.n if g.d == 3 else 1, cell_w, cell_h, grid, gap)

    @property
    def pitch_x(self) -> int:
        return self.cell_w + 1 if self.grid else self.cell_w

    @property
    def pitch_y(self) -> int:
        return self.cell_h + 1 if self.grid else self.cell_h

    @property
    def layer_width(self) -> int:
        return LABEL_WIDTH + self.n * self.pitch_x + (1 if self.grid else 0)

    @property
    def grid_height(self) -> int:
        return self.n * self.pitch_y + (1 if self.grid else 0)

    @property
    def width(self) -> int:
        return self.layers * self.layer_width + (self.layers - 1) * self.gap

    @property
    def height(self) -> int:
        return self.grid_height + 2  # a title above, column letters below

    def layer_x(self, z: int) -> int:
        return z * (self.layer_width + self.gap)

    def cell_box(self, x: int, y: int, z: int) -> tuple[int, int]:
        """The top-left character (column, line) inside the cell at column x, row y, level z."""
        border = 1 if self.grid else 0
        column = self.layer_x(z) + LABEL_WIDTH + border + x * self.pitch_x
        line = 1 + border + (self.n - 1 - y) * self.pitch_y  # row 1 at the bottom
        return column, line

    def hit(self, column: int, line: int) -> tuple[int, int, int] | None:
        """The (x, y, z) of the cell drawn at a character, or None (labels, lines, gaps)."""
        border = 1 if self.grid else 0
        for z in range(self.layers):
            dx = column - self.layer_x(z) - LABEL_WIDTH - border
            dy = line - 1 - border
            if not (0 <= dx < self.n * self.pitch_x and 0 <= dy < self.n * self.pitch_y):
                continue
            x, inside_x = divmod(dx, self.pitch_x)
            row, inside_y = divmod(dy, self.pitch_y)
            if inside_x >= self.cell_w or inside_y >= self.cell_h:
                return None  # on a grid line
            return x, self.n - 1 - row, z
        return None


STYLES: tuple[tuple[int, int, bool, int], ...] = (
    (7, 3, True, 3),  # big cells, for small boards on big terminals
    (3, 1, True, 3),  # a grid
    (3, 1, False, 2),  # compact: fits 4x4x4 in 80 columns
    (2, 1, False, 1),  # the least room
)


def choose_layout(g: Geometry, width: int, height: int) -> BoardLayout:
    """The largest style whose drawing fits ``width`` x ``height`` (the smallest otherwise)."""
    layouts = [BoardLayout.for_geometry(g, *style) for style in STYLES]
    for layout in layouts:
        if layout.width <= width and layout.height <= height:
            return layout
    return layouts[-1]


def read_typed(text: str, g: Geometry) -> tuple[Cell | None, str]:
    """The cell a typed coordinate names, or None and why not (unfinished or no such cell).

    ``text`` is read one character at a time, as typed: level (3-D boards), column, row.
    """
    n, last = g.n, chr(96 + g.n)
    parts = [("level", f"1–{n}"), ("column", f"a–{last}"), ("row", f"1–{n}")][3 - g.d :]
    for char, (part, allowed) in zip(text, parts, strict=False):
        is_letter = part == "column"
        if is_letter != char.isalpha() or not char.isalnum():
            kind = "a letter" if is_letter else "a number"
            return None, f"the {part} comes next: {kind} {allowed}"
        if (ord(char) - 96 if is_letter else int(char)) not in range(1, n + 1):
            return None, f"no {part} {char} (only {allowed})"
    if len(text) > len(parts):
        return None, f"a cell is {len(parts)} characters, like {'2b3' if g.d == 3 else 'b3'}"
    if len(text) < len(parts):
        part, allowed = parts[len(text)]
        return None, f"unfinished: add the {part} ({allowed})"
    return parse_cell(text, g), ""


@dataclass(frozen=True)
class BoardView:
    """What the board shows: a position and the cells to highlight."""

    board: Board
    last_move: Cell | None = None
    winning_line: tuple[Cell, ...] = ()
    threats: tuple[frozenset[Cell], frozenset[Cell]] = field(
        default=(frozenset(), frozenset())
    )
    show_threats: bool = False
    show_guides: bool = True  # mark the lines through the cursor cell
    suggested: Cell | None = None  # the engine's hint, marked "!"
    # why Enter plays nothing now, for the line under the board; None: it plays (this
    # player's move, the live position)
    not_playable: str | None = None
    over: bool = False  # the game has ended, whatever the board shows (a resignation, a flag)
    caption: str | None = None  # a board to look at, not play on: no cursor, this line under it


class BoardWidget(Widget, can_focus=True):
    """The n layers of an n^3 board side by side (or one n^2 grid), with a cursor."""

    DEFAULT_CSS = """
    BoardWidget {
        width: 1fr;
        height: auto;
        padding: 0 1;
    }
    BoardWidget > .board--x { color: #ff6b6b; text-style: bold; }
    BoardWidget > .board--o { color: #5fafff; text-style: bold; }
    BoardWidget > .board--empty { color: $text-muted; }
    BoardWidget > .board--threat-x { color: #ff6b6b 70%; }
    BoardWidget > .board--threat-o { color: #5fafff 70%; }
    BoardWidget > .board--lines { color: $text-muted; }
    BoardWidget > .board--label { color: $text-muted; }
    BoardWidget > .board--title { color: $text-muted; }
    BoardWidget > .board--title-active { color: $text; text-style: bold; }
    BoardWidget > .board--guide { color: $text; background: $foreground 8%; }
    BoardWidget > .board--last { background: $warning 35%; text-style: underline; }
    /* a green that stays green at 256 colours (xterm 22), far from the cursor's greys; and a
       shape too: the winning line's pieces are drawn =X= */
    BoardWidget > .board--win { background: #005f00; text-style: bold; }
    /* grey, never the last move's amber (the default theme's $accent is its $warning) */
    BoardWidget > .board--cursor { background: $foreground 20%; }
    BoardWidget:focus > .board--cursor { background: $foreground 40%; text-style: bold; }
    BoardWidget > .board--hint { color: $text-muted; }
    BoardWidget > .board--refused { color: $text-warning; text-style: bold; }
    BoardWidget > .board--suggested { color: $text-success; background: $success 30%;
                                      text-style: bold; }
    """

    COMPONENT_CLASSES = {
        "board--x", "board--o", "board--empty", "board--threat-x", "board--threat-o",
        "board--lines", "board--label", "board--title", "board--title-active",
        "board--last", "board--win", "board--cursor", "board--hint", "board--guide",
        "board--refused", "board--suggested",
    }  # fmt: skip

    BINDINGS = [
        Binding("up", "cursor(0, 1, 0)", "Up", show=False, id="board.up"),
        Binding("down", "cursor(0, -1, 0)", "Down", show=False, id="board.down"),
        Binding("left", "cursor(-1, 0, 0)", "Left", show=False, id="board.left"),
        Binding("right", "cursor(1, 0, 0)", "Right", show=False, id="board.right"),
        Binding("left_square_bracket,pageup", "cursor(0, 0, -1)", "Level",
                key_display="[ ]", id="board.level_down"),
        Binding("right_square_bracket,pagedown", "cursor(0, 0, 1)", "Level up", show=False,
                id="board.level_up"),
        Binding("enter,space", "pick", "Play", key_display="⏎", show=False, id="board.play",
                tooltip="Play the cell under the cursor (or the one typed)"),
    ]

    view: reactive[BoardView] = reactive(lambda: BoardView(Board()), layout=True,
                                          always_update=True)
    cursor: reactive[Cell] = reactive(0)
    typed: reactive[str] = reactive("")
    refused: reactive[str] = reactive("")  # why the cell picked was not played, until a key

    class CellPicked(Message):
        """The player picked ``cell`` to play (Enter, space, a typed coordinate or a click)."""

        def __init__(self, board: BoardWidget, cell: Cell) -> None:
            super().__init__()
            self.board = board
            self.cell = cell

        @property
        def control(self) -> BoardWidget:
            return self.board

    def __init__(
        self,
        view: BoardView | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        if view is not None:
            self.set_reactive(BoardWidget.view, view)
            self.set_reactive(BoardWidget.cursor, _centre(view.board.geometry))
        self._layout: BoardLayout | None = None

    # -- attributes down ---------------------------------------------------------------------

    def watch_view(self, old: BoardView, new: BoardView) -> None:
        if old.board.geometry is not new.board.geometry:
            self.cursor = _centre(new.board.geometry)
            self.typed = ""
        if old.board.ply != new.board.ply:
            self.refused = ""

    def watch_cursor(self) -> None:
        self.refused = ""

    def watch_typed(self) -> None:
        self.refused = ""

    def refuse(self, why: str) -> None:
        """Say on the line under the board why the cell picked was not played (the line the
        help promises); it stays until the cursor moves, a key is typed or a move lands."""
        self.refused = why

    @property
    def geometry(self) -> Geometry:
        return self.view.board.geometry

    # -- layout ------------------------------------------------------------------------------

    def board_layout(self, width: int | None = None, height: int | None = None) -> BoardLayout:
        """The layout for the room there is: the widget's width and half the screen's height."""
        if width is None:
            width = self.content_size.width
        if height is None:
            height = max(6, self.app.size.height // 2 - 1)
        return choose_layout(self.geometry, width, height)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self.board_layout(container.width, viewport.height // 2 - 1).width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._layout = self.board_layout(width, viewport.height // 2 - 1)
        return self._layout.height + 1  # and the line of hints

    def _current_layout(self) -> BoardLayout:
        layout = self._layout or self.board_layout()
        if (layout.n, layout.layers) != (self.geometry.n, _layers(self.geometry)):
            layout = self.board_layout()
        return layout

    def _left(self, layout: BoardLayout) -> int:
        return max(0, (self.content_size.width - layout.width) // 2)

    # -- drawing -----------------------------------------------------------------------------

    def render(self) -> Text:
        layout = self._current_layout()
        canvas = _Canvas(layout.width, layout.height)
        style = self._style
        g = self.geometry
        view = self.view
        board = view.board
        cursor_z = g.coords(self.cursor)[2] if g.d == 3 else 0
        lines, label = style("board--lines"), style("board--label")
        for z in range(layout.layers):
            left = layout.layer_x(z)
            title = f"level {z + 1}" if g.d == 3 else g.name
            active = z == cursor_z and view.caption is None
            title_style = style("board--title-active" if active else "board--title")
            grid_left = left + LABEL_WIDTH
            grid_width = layout.layer_width - LABEL_WIDTH
            canvas.put(grid_left + (grid_width - len(title)) // 2, 0, title, title_style)
            if layout.grid:
                _draw_grid(canvas, layout, grid_left, lines)
            for y in range(layout.n):
                column, line = layout.cell_box(0, y, z)
                canvas.put(left, line + layout.cell_h // 2, str(y + 1), label)
            for x in range(layout.n):
                column, _ = layout.cell_box(x, 0, z)
                canvas.put(column + layout.cell_w // 2, layout.height - 1, chr(97 + x), label)
        win = set(view.winning_line)
        guides = self.guide_cells() if view.show_guides else frozenset()
        ground = {name: self._ground(f"board--{name}") for name in ("win", "last", "guide",
                                                                     "cursor")}
        for cell in range(g.size):
            x, y, *rest = g.coords(cell)
            z = rest[0] if rest else 0
            column, line = layout.cell_box(x, y, z)
            text, text_style = self._cell_text(cell, board, view)
            if text == "·" and cell in guides:
                text, text_style = "+", ground["guide"]
            background = Style()
            if cell in win:
                background += ground["win"]
            elif cell == view.last_move:
                background += ground["last"]
            elif cell in guides:
                background += ground["guide"]
            cursor = cell == self.cursor and view.caption is None
            if cursor:
                background += ground["cursor"]
            for dy in range(layout.cell_h):
                canvas.put(column, line + dy, " " * layout.cell_w, background)
            middle = line + layout.cell_h // 2
            centre = column + (layout.cell_w - 1) // 2
            canvas.put(centre, middle, text, background + text_style)
            if cursor:  # a shape, not only a colour: brackets around the piece
                before, after = ("[", "]") if layout.cell_w >= 3 else ("", "<")
                canvas.put(centre - 1, middle, before, background)
                canvas.put(centre + 1, middle, after, background)
            elif cell in win:  # equals signs: the winning line, not only its colour
                before, after = ("=", "=") if layout.cell_w >= 3 else ("", "=")
                canvas.put(centre - 1, middle, before, background)
                canvas.put(centre + 1, middle, after, background)
            elif cell == view.last_move:  # and parentheses: the last move
                before, after = ("(", ")") if layout.cell_w >= 3 else ("", ")")
                canvas.put(centre - 1, middle, before, background)
                canvas.put(centre + 1, middle, after, background)
        rendered = Text("\n").join(canvas.lines())
        left = self._left(layout)
        if left:
            rendered = Text("\n").join(Text(" " * left) + row for row in rendered.split("\n"))
        rendered.append("\n")
        rendered.append(" " * left)
        rendered.append_text(self._hint())
        rendered.no_wrap = True
        return rendered

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _ground(self, name: str) -> Style:
        """A component's style with its background as drawn: a partial style keeps a colour
        such as ``$foreground 8%`` at full strength (the faint grey of the lines through the
        cursor drawn light grey, and the cursor no different); the full one blends it."""
        partial = self._style(name)
        if partial.bgcolor is None:
            return partial
        return partial + Style(bgcolor=self.get_component_rich_style(name).bgcolor)

    def _cell_text(self, cell: Cell, board: Board, view: BoardView) -> tuple[str, Style]:
        style = self._style
        piece = board.piece_at(cell)
        if piece == X:
            return "X", style("board--x")
        if piece == O:
            return "O", style("board--o")
        if cell == view.suggested:
            return "!", style("board--suggested")
        if view.show_threats:
            x_threat, o_threat = cell in view.threats[X], cell in view.threats[O]
            if x_threat and o_threat:
                return "*", style("board--threat-x")
            if x_threat:
                return "x", style("board--threat-x")
            if o_threat:
                return "o", style("board--threat-o")
        return "·", style("board--empty")

    def guide_cells(self) -> frozenset[Cell]:
        """The cells of every line through the cursor cell."""
        g = self.geometry
        cells = {cell for index in g.lines_through[self.cursor] for cell in g.lines[index]}
        return frozenset(cells - {self.cursor})

    def _hint(self) -> Text:
        style = self._style
        if self.view.caption is not None:
            return Text(self.view.caption, style("board--hint"))
        if self.refused:
            return Text.assemble((self.refused, style("board--refused")),
                                 (" · move to an empty cell", style("board--hint")))
        if self.typed:
            cell, problem = read_typed(self.typed, self.geometry)
            if cell is None:
                return Text.assemble(
                    (f"typed {self.typed}: {problem}", style("board--refused")),
                    (" · esc clears", style("board--hint")),
                )
            blocked = self._blocked(cell)  # promise only what Enter does
            if blocked is not None:
                return Text(f"typed {self.typed}: {blocked} · esc clears", style("board--hint"))
            return Text(f"go to {self.typed} · ⏎ plays · esc clears", style("board--hint"))
        example = "2b3" if self.geometry.d == 3 else "b3"
        here = format_cell(self.cursor, self.geometry)
        if self._over():
            return Text(f"[{here}] the game is over · arrows and , . look around",
                        style("board--hint"))
        if self.view.board.piece_at(self.cursor) is not None:  # promise only what Enter does
            return Text(f"[{here}] is taken · move to an empty cell, or type one like "
                        f"{example}", style("board--hint"))
        lines = " · + its lines (g)" if self.view.show_guides else ""
        if self.view.not_playable is not None:
            return Text(f"[{here}] {self.view.not_playable}{lines} · arrows look around",
                        style("board--hint"))
        return Text(f"[{here}] ⏎ plays it{lines} · or type a cell like {example}",
                    style("board--hint"))

    def _over(self) -> bool:
        board = self.view.board
        return self.view.over or board.winning_line is not None or not board.empty

    def _blocked(self, cell: Cell) -> str | None:
        """Why Enter would not play ``cell`` now, or None when it would."""
        if self._over():
            return "the game is over"
        if self.view.board.piece_at(cell) is not None:
            return "that cell is taken"
        return self.view.not_playable

    # -- input -------------------------------------------------------------------------------

    def action_cursor(self, dx: int, dy: int, dz: int) -> None:
        """Move the cursor within its layer (dx, dy) or to another layer (dz), wrapping."""
        g = self.geometry
        coords = list(g.coords(self.cursor))
        coords[0] = (coords[0] + dx) % g.n
        coords[1] = (coords[1] + dy) % g.n
        if g.d == 3:
            coords[2] = (coords[2] + dz) % g.n
        self.cursor = g.cell_at(coords)
        self.typed = ""

    def action_pick(self) -> None:
        """Play the typed coordinate if there is one, else the cell under the cursor.

        A typed coordinate that is unfinished or names no cell is never played: it stays
        shown with the reason until it is mended or cleared.
        """
        if self.typed:
            cell, problem = read_typed(self.typed, self.geometry)
            if cell is None:
                self.app.bell()
                self.notify(f"Not played: {self.typed} — {problem}. Esc clears it.",
                            severity="warning", timeout=3, markup=False)
                return
            self.cursor = cell
            self.typed = ""
        self.post_message(self.CellPicked(self, self.cursor))

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.fit_toasts)

    def fit_toasts(self) -> None:
        """Keep the screen's toasts (hints, notes) below the board, never over a level: the
        toast rack, docked at the bottom, gets the rows under the board (the newest toasts
        shown; older ones scroll away, and expire)."""
        if not self.is_attached:
            return
        for rack in self.screen.query("#textual-toastrack"):
            room = self.screen.size.height - self.region.bottom - 1  # the footer's row
            rack.styles.max_height = max(3, room)

    def on_key(self, event: events.Key) -> None:
        char = (event.character or "").lower()
        full = self.geometry.d
        if event.key == "escape" and self.typed:
            self.typed = ""
        elif event.key == "backspace" and self.typed:
            self.typed = self.typed[:-1]
        elif len(char) == 1 and char.isascii() and (
            char.isdigit()  # no key binding is a digit: every one is part of a cell
            # a column letter; on a 3-D board a cell starts with its level, so a letter with
            # nothing typed is a key of the screen's (the puzzles' d, Daily), not a cell
            or ("a" <= char <= chr(96 + self.geometry.n) and (self.typed or full < 3))
            or (char.isalpha() and 0 < len(self.typed) < full)  # a wrong column letter
        ):
            self.typed = (self.typed if len(self.typed) < full else "") + char
            cell, _ = read_typed(self.typed, self.geometry)
            if cell is not None:
                self.cursor = cell
        else:
            if len(char) == 1 and char.isalpha() and self.typed:
                self.typed = ""  # a key after a whole cell is a command: the cell is dropped
            return
        event.stop()
        event.prevent_default()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        layout = self._current_layout()
        hit = layout.hit(offset.x - self._left(layout), offset.y)
        if hit is None:
            return
        x, y, z = hit
        g = self.geometry
        self.cursor = g.cell_at([x, y, z][: g.d])
        self.typed = ""
        self.focus()
        self.post_message(self.CellPicked(self, self.cursor))

    def cell_offset(self, cell: Cell) -> tuple[int, int]:
        """Where ``cell``'s piece is drawn, relative to the widget (for tests and tools)."""
        layout = self._current_layout()
        x, y, *rest = self.geometry.coords(cell)
        column, line = layout.cell_box(x, y, rest[0] if rest else 0)
        gutter = self.styles.gutter
        return (
            gutter.left + self._left(layout) + column + (layout.cell_w - 1) // 2,
            gutter.top + line + layout.cell_h // 2,
        )


def _layers(g: Geometry) -> int:
    return g.n if g.d == 3 else 1


def _centre(g: Geometry) -> Cell:
    middle = (g.n - 1) // 2
    return g.cell_at([middle] * g.d)


def _draw_grid(canvas: _Canvas, layout: BoardLayout, left: int, style: Style) -> None:
    n, px, py = layout.n, layout.pitch_x, layout.pitch_y
    top = 1
    for row in range(n + 1):
        line = top + row * py
        if row == 0:
            ends, joint = "┌┐", "┬"
        elif row == n:
            ends, joint = "└┘", "┴"
        else:
            ends, joint = "├┤", "┼"
        text = ends[0] + joint.join(["─" * layout.cell_w] * n) + ends[1]
        canvas.put(left, line, text, style)
        if row < n:
            for dy in range(1, py):
                for column in range(n + 1):
                    canvas.put(left + column * px, line + dy, "│", style)


class _Canvas:
    """A rectangle of styled characters, turned into ``Text`` lines at the end."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.chars = [[" "] * width for _ in range(height)]
        self.styles = [[Style()] * width for _ in range(height)]

    def put(self, x: int, y: int, text: str, style: Style) -> None:
        if not 0 <= y < len(self.chars):
            return
        for i, char in enumerate(text):
            if 0 <= x + i < self.width:
                self.chars[y][x + i] = char
                self.styles[y][x + i] = style

    def lines(self) -> list[Text]:
        out = []
        for chars, styles in zip(self.chars, self.styles, strict=True):
            line = Text()
            start = 0
            for i in range(1, self.width + 1):
                if i == self.width or styles[i] != styles[start]:
                    line.append("".join(chars[start:i]), styles[start])
                    start = i
            out.append(line)
        return out
