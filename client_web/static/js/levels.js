// The board as its levels side by side (a 2x2 grid on a phone): one button per cell, so mouse,
// touch, the keyboard and screen readers all work. The board is ONE Tab stop (a roving
// tabindex: the cell last focused has tabindex 0, every other -1); the arrow keys move within
// a level, PageUp/PageDown between levels, Enter or Space plays. Each level is an ARIA grid of
// rows and gridcells. Built once per geometry, then updated.

import { h } from "./dom.js";

export class LevelsView {
  constructor(root, { onPick, onHover }) {
    this.root = root;
    this.onPick = onPick;
    this.onHover = onHover;
    this.geometry = null;
    this.buttons = [];
    this.rove = 0; // the cell the Tab key reaches
  }

  build(geometry) {
    this.geometry = geometry;
    const n = geometry.n;
    this.buttons = new Array(geometry.size);
    const levels = [];
    for (let z = 0; z < geometry.levels; z++) {
      const grid = h("div", { class: "grid", role: "grid" });
      grid.style.setProperty("--n", n);
      for (let y = n - 1; y >= 0; y--) { // row 1 at the bottom, as in the terminal client
        const row = h("div", { class: "row", role: "row", "aria-label": `row ${y + 1}` },
          h("span", { class: "label", "aria-hidden": "true" }, String(y + 1)));
        for (let x = 0; x < n; x++) {
          const cell = geometry.cell(x, y, z);
          const button = h("button", {
            type: "button",
            class: "cell",
            tabindex: "-1",
            dataset: { cell: String(cell), name: geometry.format(cell) },
            onclick: () => this.onPick(cell),
            onmouseenter: () => this.onHover(cell),
            onfocus: () => { this.roveTo(cell); this.onHover(cell); },
            onkeydown: (event) => this.arrow(event, cell),
          });
          this.buttons[cell] = button;
          row.append(h("span", { class: "gridcell", role: "gridcell" }, button));
        }
        grid.append(row);
      }
      const title = geometry.d === 3 ? `Level ${z + 1}` : "Board";
      grid.setAttribute("aria-label", title);
      grid.append(h("div", { class: "row columns", "aria-hidden": "true" }, h("span", { class: "label" }),
        ...Array.from({ length: n }, (_, x) => h("span", { class: "label column" },
          String.fromCharCode(97 + x)))));
      levels.push(h("div", { class: "level", dataset: { level: String(z + 1) } },
        h("div", { class: "level-title" }, title), grid));
    }
    const board = h("div", { class: `levels n${n} d${geometry.d}`,
      onmouseleave: () => this.onHover(null) }, levels);
    this.root.replaceChildren(board);
    this.rove = geometry.cell(0, n - 1, 0); // level 1's top left, where reading starts
    this.buttons[this.rove].tabIndex = 0;
  }

  // `cell` becomes the board's one Tab stop.
  roveTo(cell) {
    if (cell === this.rove) return;
    this.buttons[this.rove].tabIndex = -1;
    this.rove = cell;
    this.buttons[cell].tabIndex = 0;
  }

  // Arrow keys move the focus within a level; PageUp/PageDown change level.
  arrow(event, cell) {
    const g = this.geometry;
    const [x, y, z] = g.coords(cell);
    const moves = {
      ArrowLeft: [x - 1, y, z], ArrowRight: [x + 1, y, z], ArrowUp: [x, y + 1, z],
      ArrowDown: [x, y - 1, z], PageUp: [x, y, z + 1], PageDown: [x, y, z - 1],
    };
    const to = moves[event.key];
    if (!to) return;
    event.preventDefault();
    event.stopPropagation();
    const [nx, ny, nz] = to;
    if (nx < 0 || ny < 0 || nz < 0 || nx >= g.n || ny >= g.n || nz >= g.levels) return;
    const target = g.cell(nx, ny, nz);
    this.roveTo(target);
    this.buttons[target].focus();
  }

  // `view`: {geometry, cells, last, line, threats: {x, o}, hover: Set, playable, you}.
  update(view) {
    if (view.geometry !== this.geometry) this.build(view.geometry);
    const line = new Set(view.line || []);
    view.cells.forEach((side, cell) => {
      const button = this.buttons[cell];
      const name = button.dataset.name;
      const notes = [];
      if (cell === view.last) notes.push("last move");
      if (line.has(cell)) notes.push("winning line");
      if (side === null && view.threats.x.has(cell)) notes.push("X threatens");
      if (side === null && view.threats.o.has(cell)) notes.push("O threatens");
      const what = side === null ? "empty" : side.toUpperCase();
      button.setAttribute("aria-label", [name, what, ...notes].join(", "));
      button.textContent = side === null ? "" : side.toUpperCase();
      button.className = "cell";
      button.tabIndex = cell === this.rove ? 0 : -1;
      const toggles = {
        x: side === "x", o: side === "o", last: cell === view.last, win: line.has(cell),
        "threat-x": side === null && view.threats.x.has(cell),
        "threat-o": side === null && view.threats.o.has(cell),
        hover: view.hover.has(cell),
        playable: view.playable && side === null,
      };
      for (const [name, on] of Object.entries(toggles)) if (on) button.classList.add(name);
    });
  }
}
