// The board as its levels side by side (stacked in portrait): one button per cell, so mouse,
// touch, Tab/Enter and screen readers all work. Built once per geometry, then updated.

import { h } from "./dom.js";

export class LevelsView {
  constructor(root, { onPick, onHover }) {
    this.root = root;
    this.onPick = onPick;
    this.onHover = onHover;
    this.geometry = null;
    this.buttons = [];
  }

  build(geometry) {
    this.geometry = geometry;
    const n = geometry.n;
    this.buttons = new Array(geometry.size);
    const levels = [];
    for (let z = 0; z < geometry.levels; z++) {
      const grid = h("div", { class: "grid", role: "group" });
      grid.style.setProperty("--n", n);
      for (let y = n - 1; y >= 0; y--) { // row 1 at the bottom, as in the terminal client
        grid.append(h("span", { class: "label", "aria-hidden": "true" }, String(y + 1)));
        for (let x = 0; x < n; x++) {
          const cell = geometry.cell(x, y, z);
          const button = h("button", {
            type: "button",
            class: "cell",
            dataset: { cell: String(cell), name: geometry.format(cell) },
            onclick: () => this.onPick(cell),
            onmouseenter: () => this.onHover(cell),
            onfocus: () => this.onHover(cell),
            onkeydown: (event) => this.arrow(event, cell),
          });
          this.buttons[cell] = button;
          grid.append(button);
        }
      }
      const title = geometry.d === 3 ? `Level ${z + 1}` : "Board";
      grid.setAttribute("aria-label", title);
      grid.append(h("span", { class: "label" }),
        ...Array.from({ length: n }, (_, x) => h("span", { class: "label column", "aria-hidden": "true" },
          String.fromCharCode(97 + x))));
      levels.push(h("div", { class: "level", dataset: { level: String(z + 1) } },
        h("div", { class: "level-title" }, title), grid));
    }
    const board = h("div", { class: `levels n${n} d${geometry.d}`,
      onmouseleave: () => this.onHover(null) }, levels);
    this.root.replaceChildren(board);
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
    this.buttons[g.cell(nx, ny, nz)].focus();
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
