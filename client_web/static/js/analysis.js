// The analysis board: any position (from the empty board, typed or pasted moves, or a review's
// "analyse from here"), moves played for both sides and taken back, the verdict of the position
// and of each move from /api/solve, and the position shared as a link (#analysis=1a1+2b2) or a
// move string. The server is the judge: this only draws and asks.

import { fill, h } from "./dom.js";
import { geometryOf, winningLine } from "./geometry.js";
import { LevelsView } from "./levels.js";

const VARIANTS = ["4x4x4", "3x3x3", "4x4"];
const SHOWN_MOVES = 12; // moves listed with their verdicts, best first

// " within 12 plies" (an upper bound on the plies to the end), or nothing when unknown.
export function pliesWords(plies) {
  if (plies === null || plies === undefined) return "";
  return ` within ${plies} ${plies === 1 ? "ply" : "plies"}`;
}

// A verdict in words, for the side to move: who wins.
export function verdictWords(answer, toMove) {
  const other = toMove === "x" ? "o" : "x";
  const by = answer.proved_by === "book" ? "by the proof" : "by search";
  const within = pliesWords(answer.plies);
  switch (answer.verdict) {
    case "win": return `${toMove.toUpperCase()} wins${within} (${by}).`;
    case "loss": return `${other.toUpperCase()} wins${within} (${by}).`;
    case "draw": return `A draw with best play (${by}).`;
    default: return "Not proved within the solver's time: unknown.";
  }
}

// A move's verdict for the player who makes it (the answer gives the opponent's after it).
export function moveWords(move) {
  const plies = move.plies === null || move.plies === undefined ? "" : ` ${move.plies + 1}`;
  return { loss: `wins${plies}`, win: `loses${plies}`, draw: "draws", unknown: "unproved" }[move.verdict];
}

// A move's verdict in a sentence, for its title.
function moveTitle(move) {
  return { loss: "a forced win for the player who makes it", win: "a forced win for the opponent",
    draw: "a draw with best play", unknown: "not proved either way in the solver's time" }[move.verdict];
}

export function moveClass(move) {
  return { loss: "good", win: "bad", draw: "even", unknown: "unknown" }[move.verdict];
}

export class AnalysisView {
  constructor(root, act) {
    this.root = root;
    this.act = act;
    this.variant = "4x4x4";
    this.moves = [];
    this.answers = new Map(); // "variant moves" -> the /api/solve answer
    this.asking = null;
    this.levels = null;
    this.built = false;
  }

  get geometry() { return geometryOf(this.variant); }

  notation(moves = this.moves) { return moves.map((c) => this.geometry.format(c)).join(" "); }

  // Open the board on `variant` after `moves` (cells), as a link or a review asks.
  load(variant, moves) {
    this.variant = VARIANTS.includes(variant) ? variant : "4x4x4";
    this.moves = [];
    for (const cell of moves) if (!this.play(cell, false)) break;
    this.changed();
  }

  // The moves of a link's or a paste's text ("1a1 2b2", "1a1+2b2"), or null if one is wrong.
  parse(text, variant = this.variant) {
    const cells = [];
    const geometry = geometryOf(VARIANTS.includes(variant) ? variant : "4x4x4");
    for (const word of text.split(/[\s,+]+/).filter(Boolean)) {
      const cell = geometry.parse(word);
      if (cell === null || cells.includes(cell)) return null;
      cells.push(cell);
    }
    return cells;
  }

  cells(moves = this.moves) {
    const cells = new Array(this.geometry.size).fill(null);
    moves.forEach((c, i) => { cells[c] = i % 2 === 0 ? "x" : "o"; });
    return cells;
  }

  over() {
    const cells = this.cells();
    return winningLine(this.geometry, cells) !== null || !cells.includes(null);
  }

  play(cell, update = true) {
    if (this.moves.includes(cell) || this.over()) return false;
    this.moves.push(cell);
    if (update) this.changed();
    return true;
  }

  back() {
    if (this.moves.length === 0) return;
    this.moves.pop();
    this.changed();
  }

  reset() { this.moves = []; this.changed(); }

  link() {
    const variant = this.variant === "4x4x4" ? "" : `&variant=${this.variant}`;
    return `#analysis=${this.moves.map((c) => this.geometry.format(c)).join("+")}${variant}`;
  }

  changed() {
    history.replaceState(null, "", `${location.pathname}${this.link()}`);
    this.render();
    this.ask();
  }

  key(event) {
    const keys = { ArrowLeft: () => this.back(), Backspace: () => this.back(), Home: () => this.reset() };
    const fn = keys[event.key];
    if (fn && !event.target.closest("input, textarea, select")) {
      event.preventDefault();
      fn();
    }
  }

  // The verdicts of this position: from the answers kept, else /api/solve (once at a time;
  // a refusal for the rate waits as long as the server says).
  async ask() {
    const key = `${this.variant} ${this.notation()}`;
    if (this.answers.has(key) || this.asking === key) return;
    this.asking = key;
    const query = `variant=${this.variant}&moves=${this.moves.map((c) => this.geometry.format(c)).join("+")}`;
    try {
      const response = await fetch(`/api/solve?${query}`);
      const body = await response.json();
      if (response.status === 429 || response.status === 503) {
        const wait = Number(response.headers.get("Retry-After") || "1");
        setTimeout(() => { if (this.asking === key) { this.asking = null; this.ask(); } }, wait * 1000);
        return;
      }
      this.answers.set(key, response.ok ? body : { error: body.message });
    } catch {
      this.answers.set(key, { error: "The server did not answer." });
    }
    if (this.asking === key) this.asking = null;
    if (key === `${this.variant} ${this.notation()}`) this.render();
  }

  build() {
    this.built = true;
    this.levelsRoot = h("div", { class: "levels-root" });
    this.levels = new LevelsView(this.levelsRoot, {
      onPick: (cell) => this.play(cell), onHover: () => {} });
    this.variantSelect = h("select", { id: "analysis-variant", "aria-label": "Board",
      onchange: () => this.load(this.variantSelect.value, []) },
    VARIANTS.map((v) => h("option", { value: v }, v)));
    this.pasteInput = h("input", { id: "analysis-moves", placeholder: "Moves: 1a1 2b2 …",
      autocomplete: "off", spellcheck: "false", autocapitalize: "off", "aria-label": "Moves to set up" });
    const paste = h("form", { class: "analysis-paste", onsubmit: (e) => {
      e.preventDefault();
      const cells = this.parse(this.pasteInput.value);
      if (cells === null) this.act.say("Write the moves as cells, such as 1a1 2b2, each once.");
      else { this.load(this.variant, cells); this.pasteInput.value = ""; }
    } }, this.variantSelect, this.pasteInput, h("button", { type: "submit" }, "Set up"));
    const b = (id, label, fn) => h("button", { type: "button", id, onclick: fn }, label);
    this.buttons = h("div", { class: "analysis-buttons" },
      b("analysis-back", "Take back", () => this.back()),
      b("analysis-reset", "Empty board", () => this.reset()),
      b("analysis-link", "Copy link", () => this.act.copy(`${location.origin}${location.pathname}${this.link()}`)),
      b("analysis-copy", "Copy moves", () => this.act.copy(this.notation())),
      b("analysis-leave", "Leave", () => this.act.leave()));
    this.position = h("p", { class: "analysis-position" });
    this.verdict = h("p", { class: "verdict", id: "analysis-verdict", role: "status" });
    this.moveList = h("ol", { class: "verdict-moves", id: "analysis-moves-list" });
    this.legend = h("p", { class: "verdict-legend", id: "analysis-legend" },
      "For the player to move: “wins 7” forces a win within 7 plies, “loses” lets the opponent force one, ",
      "“unproved”: the solver found no proof in its time (it may be good or bad).");
    fill(this.root,
      h("div", { class: "game-main" }, h("h2", {}, "Analysis board"), this.levelsRoot),
      h("div", { class: "game-side" }, paste, this.position, this.verdict, this.moveList, this.legend, this.buttons));
  }

  render() {
    if (!this.built) this.build();
    this.variantSelect.value = this.variant;
    const g = this.geometry;
    const cells = this.cells();
    const answer = this.answers.get(`${this.variant} ${this.notation()}`);
    const good = new Set((answer?.moves || []).filter((m) => m.verdict === "loss").map((m) => m.cell));
    this.levels.update({ geometry: g, cells, last: this.moves.at(-1) ?? null,
      line: winningLine(g, cells), threats: { x: new Set(), o: new Set() }, hover: new Set(),
      playable: !this.over() });
    for (const cell of good) this.levels.buttons[cell].classList.add("best");
    const toMove = this.moves.length % 2 === 0 ? "x" : "o";
    fill(this.position, this.moves.length ? `${this.moves.length} moves: ${this.notation()}.` : "The empty board.",
      ` ${toMove.toUpperCase()} to move.`);
    if (!answer) fill(this.verdict, "Asking the solver…");
    else if (answer.error) fill(this.verdict, answer.error);
    else fill(this.verdict, verdictWords(answer, toMove));
    const moves = answer?.moves || [];
    fill(this.moveList, moves.slice(0, SHOWN_MOVES).map((m) => h("li", {},
      h("button", { type: "button", class: `verdict-move ${moveClass(m)}`, onclick: () => this.play(m.cell),
        title: moveTitle(m) }, `${m.move} ${moveWords(m)}`))));
    // What the words mean, said once under the list.
    this.legend.hidden = moves.length === 0;
  }
}
