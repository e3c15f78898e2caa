// A finished game's review (#review=GAMEID): step through the moves with the keys or the
// buttons; each move marked by what it did to the verdict, the best move shown on the board,
// the line that would have won, and "analyse from here". The server computes the review once
// (GET /api/games/{id}/review answers 202 while it does: asked again after Retry-After).

import { fill, h } from "./dom.js";
import { geometryOf, winningLine } from "./geometry.js";
import { LevelsView } from "./levels.js";
import { pliesWords, verdictWords } from "./analysis.js";
import { GAME_ACTIONS } from "./player.js";

// A player's page (player.js) offers each finished game's review beside its Replay.
GAME_ACTIONS.push((game, act) => (game.status === "over" && game.moves.length > 0
  ? h("button", { type: "button", class: "review-game", onclick: () => act.review(game.id) }, "Review")
  : null));

// Each class's mark and words, as chess annotators mark moves.
export const CLASSES = {
  found: ["!", "found a forced win"],
  blunder: ["??", "a blunder"],
  missed_threat: ["?!", "a threat missed"],
  best: ["", "the best move"],
  ok: ["", "a good move"],
  unknown: ["", "not proved either way"],
};

export class ReviewView {
  constructor(root, act) {
    this.root = root;
    this.act = act;
    this.review = null;
    this.gameId = null;
    this.ply = 0; // the position shown: after this many moves
    this.built = false;
  }

  // Show the review of `gameId`, asking the server (again while it computes it).
  async load(gameId) {
    this.gameId = gameId;
    this.review = null;
    this.ply = 0;
    this.render(`Asking for the review of game ${gameId}…`);
    for (;;) {
      let response;
      try {
        response = await fetch(`/api/games/${encodeURIComponent(gameId)}/review`);
      } catch {
        this.render("The server did not answer: try again in a moment.");
        return;
      }
      if (this.gameId !== gameId) return;
      const body = await response.json();
      if (response.status === 202 || response.status === 503) {
        this.render(response.status === 202 ? "The server is reviewing the game…"
          : "The solver is busy: trying again…");
        const wait = Number(response.headers.get("Retry-After") || "2");
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        if (this.gameId !== gameId) return;
        continue;
      }
      if (!response.ok) {
        this.render(body.code === "game_not_over" ? "The game is still being played: its review comes once it is over."
          : body.code === "no_such_game" ? `There is no game ${gameId}.` : body.message);
        return;
      }
      this.review = body;
      this.ply = 0;
      this.render();
      return;
    }
  }

  step(delta) { this.stepTo(this.ply + delta); }

  stepTo(ply) {
    if (!this.review) return;
    this.ply = Math.max(0, Math.min(this.review.moves.length, ply));
    this.render();
  }

  key(event) {
    if (event.target.closest("input, textarea, select")) return;
    const keys = { ArrowLeft: () => this.step(-1), ArrowRight: () => this.step(1),
      Home: () => this.stepTo(0), End: () => this.stepTo(Infinity) };
    const fn = keys[event.key];
    if (fn) {
      event.preventDefault();
      fn();
    }
  }

  build() {
    this.built = true;
    this.title = h("h2", { id: "review-title" });
    this.levelsRoot = h("div", { class: "levels-root" });
    this.levels = new LevelsView(this.levelsRoot, { onPick: () => {}, onHover: () => {} });
    const b = (id, label, glyph, fn) => h("button", { type: "button", id, "aria-label": label, title: label, onclick: fn }, glyph);
    this.nav = h("div", { class: "nav" },
      b("review-first", "First position (Home)", "«", () => this.stepTo(0)),
      b("review-prev", "One move back (←)", "‹", () => this.step(-1)),
      b("review-next", "One move forward (→)", "›", () => this.step(1)),
      b("review-last", "Last position (End)", "»", () => this.stepTo(Infinity)));
    this.explain = h("div", { class: "review-explain", id: "review-explain", role: "status" });
    this.summary = h("p", { class: "review-summary", id: "review-summary" });
    this.moveList = h("ol", { class: "moves review-moves", id: "review-moves" });
    this.actions = h("div", { class: "analysis-buttons" },
      h("button", { type: "button", id: "review-analyse", onclick: () => this.analyseHere() }, "Analyse from here"),
      h("button", { type: "button", id: "review-leave", onclick: () => this.act.leave() }, "Leave"));
    fill(this.root,
      h("div", { class: "game-main" }, this.title, this.levelsRoot, this.nav),
      h("div", { class: "game-side" }, this.summary, this.explain, this.moveList, this.actions));
  }

  analyseHere() {
    if (this.review) this.act.analyse(this.review.variant, this.review.moves.slice(0, this.ply).map((m) => m.cell));
  }

  render(message = null) {
    if (!this.built) this.build();
    const review = this.review;
    if (!review) {
      fill(this.title, "Game review");
      fill(this.explain, message || "");
      fill(this.summary);
      fill(this.moveList);
      this.levelsRoot.hidden = true;
      return;
    }
    this.levelsRoot.hidden = false;
    const g = geometryOf(review.variant);
    fill(this.title, `Review: ${review.x} (X) – ${review.o} (O), ${review.result}`);
    const shown = review.moves.slice(0, this.ply);
    const cells = new Array(g.size).fill(null);
    shown.forEach((m) => { cells[m.cell] = m.side; });
    const next = review.moves[this.ply]; // the move about to be played, marked with the best
    this.levels.update({ geometry: g, cells, last: shown.at(-1)?.cell ?? null,
      line: winningLine(g, cells), threats: { x: new Set(), o: new Set() }, hover: new Set(),
      playable: false });
    const current = shown.at(-1);
    if (current) {
      for (const best of current.best.slice(0, 1)) {
        const cell = g.parse(best);
        if (cell !== null && cell !== current.cell) this.levels.buttons[cell].classList.add("best");
      }
    }
    this.renderExplain(current, next);
    this.renderSummary(review);
    this.renderMoves(review);
  }

  renderExplain(current, next) {
    const review = this.review;
    if (!current) {
      const start = review.start;
      fill(this.explain, h("p", {}, `The start: ${verdictWords(start, "x")}`),
        next ? h("p", { class: "muted" }, "→ or › for the first move.") : null);
      return;
    }
    const [mark, words] = CLASSES[current.class] || ["", current.class];
    const who = current.side.toUpperCase();
    const parts = [
      h("p", {}, h("strong", {}, `${current.ply}. ${who} ${current.move}${mark}`), `: ${words}.`),
      h("p", {}, `Before: ${standing(current.before, current.side)} After: ${standing(current.after, current.side)}`),
    ];
    if (current.best.length && !(current.best.length === 1 && current.best[0] === current.move)) {
      parts.push(h("p", {}, `Best: ${current.best.join(", ")} (the first shown on the board, dashed).`));
    }
    if (current.line.length) {
      parts.push(h("p", { class: "review-line" }, `The line that would have won: ${current.line.join(" ")}.`));
    }
    fill(this.explain, parts);
  }

  renderSummary(review) {
    const count = (side) => {
      const s = review.summary[side];
      return `${side.toUpperCase()}: ${s.found || 0} found, ${s.blunder || 0} blunders, ${s.missed_threat || 0} threats missed`;
    };
    fill(this.summary, `${count("x")}. ${count("o")}.`);
  }

  renderMoves(review) {
    fill(this.moveList, review.moves.map((m) => {
      const [mark, words] = CLASSES[m.class] || ["", m.class];
      return h("li", {}, h("button", { type: "button", class: `move review-${m.class}`,
        "aria-current": m.ply === this.ply ? "step" : null, title: words,
        onclick: () => this.stepTo(m.ply) }, `${m.side.toUpperCase()} ${m.move}${mark}`));
    }));
    // The current move kept in sight: the list scrolls to it (itself, not the page).
    const current = this.moveList.querySelector("[aria-current]");
    if (current) scrollWithin(this.moveList, current);
  }
}

// Scroll `list` (a scrolling box) so that `item` is inside it; the page itself stays put.
export function scrollWithin(list, item) {
  const box = list.getBoundingClientRect();
  const at = item.getBoundingClientRect();
  const top = box.top + list.clientTop;
  const bottom = top + list.clientHeight;
  if (at.top < top) list.scrollTop -= top - at.top;
  else if (at.bottom > bottom) list.scrollTop += at.bottom - bottom;
}

// A side's standing in words: "X wins in 12 (proof)".
function standing(info, side) {
  const by = info.proved_by === "book" ? "proof" : "search";
  const plies = pliesWords(info.plies);
  const who = side.toUpperCase();
  switch (info.verdict) {
    case "win": return `${who} wins${plies} (${by}).`;
    case "loss": return `${who} loses${plies} (${by}).`;
    case "draw": return `a draw (${by}).`;
    default: return "unknown.";
  }
}
