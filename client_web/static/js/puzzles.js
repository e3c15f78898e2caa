// Puzzles: "X to play and win in 2", "O to play and survive". The board shows the puzzle's
// position; each move is sent with the ones before it (`puzzle_attempt`) and the server judges
// it: right (its reply is played), solved or wrong (the solution is shown), with the change to
// the player's puzzle rating. Next, the puzzle of the day and a streak (rising difficulty
// until the first mistake) are one click each. State lives in `state`, never in the DOM.

import { h, fill } from "./dom.js";
import { geometryOf, winningLine } from "./geometry.js";
import { LevelsView } from "./levels.js";

const MODE_NAMES = { next: "Puzzle", daily: "Puzzle of the day", streak: "Streak" };

export class PuzzleView {
  constructor(root, { send, say }) {
    this.root = root;
    this.send = send;
    this.say = say;
    this.state = {
      puzzle: null, // the `puzzle` message's puzzle
      mode: "next",
      day: null,
      line: [], // the moves played since the puzzle's position: mine and the replies
      mine: [], // my moves, as the attempts send them
      tried: null, // after a mistake: the move that was not the solution
      status: "idle", // idle | loading | solving | waiting | solved | wrong
      solution: [],
      rating: null,
      change: null,
      streak: null,
      best: null,
      history: [],
    };
    this.levelsRoot = h("div", { class: "levels-root" });
    this.levels = new LevelsView(this.levelsRoot, { onPick: (c) => this.pick(c), onHover: () => {} });
    this.title = h("h2", { id: "puzzle-title" });
    this.meta = h("p", { class: "puzzle-meta" });
    this.feedback = h("p", { class: "puzzle-feedback", role: "status", "aria-live": "polite" });
    this.buttons = h("div", { class: "puzzle-buttons" },
      h("button", { type: "button", id: "puzzle-next", onclick: () => this.ask("next") }, "Next puzzle"),
      h("button", { type: "button", id: "puzzle-daily", onclick: () => this.ask("daily") }, "Puzzle of the day"),
      h("button", { type: "button", id: "puzzle-streak", onclick: () => this.ask("streak") }, "Start a streak"),
      h("button", { type: "button", id: "puzzle-streak-next", onclick: () => this.ask("streak", false) }, "Next in streak"));
    this.historyList = h("ol", { class: "puzzle-history" });
    root.replaceChildren(
      h("div", { class: "puzzle-main" }, this.title, this.meta, this.feedback,
        h("div", { class: "game-main" }, this.levelsRoot)),
      h("aside", { class: "puzzle-side panel" }, this.buttons,
        h("h3", {}, "Your puzzles"), this.historyList));
  }

  // Ask the server for a puzzle: next, the day's, or a streak's (`fresh`: a new streak).
  ask(mode, fresh = true) {
    const s = this.state;
    const sent = mode === "next" ? this.send("puzzle_next")
      : mode === "daily" ? this.send("puzzle_daily")
        : this.send("puzzle_streak", { new: fresh });
    if (sent !== null) {
      s.status = "loading";
      this.render();
    }
  }

  // The view opens: a puzzle if none is on, and the history.
  opened() {
    if (this.state.puzzle === null && this.state.status !== "loading") this.ask("next");
    this.send("puzzle_history", { limit: 10 });
  }

  received(message) {
    const s = this.state;
    if (message.t === "puzzle") {
      Object.assign(s, {
        puzzle: message.puzzle, mode: message.mode, day: message.day ?? null, line: [], mine: [],
        status: "solving", solution: [], rating: message.rating, change: null,
        streak: message.streak ?? s.streak, best: message.best_streak ?? s.best,
      });
    } else if (message.t === "puzzle_result") {
      if (!s.puzzle || message.puzzle !== s.puzzle.id) return;
      if (message.verdict === "right") {
        s.line.push(message.reply);
        s.status = "solving";
      } else {
        s.status = message.verdict;
        s.solution = message.solution;
        s.tried = message.verdict === "wrong" ? s.mine.at(-1) : null;
        if (message.verdict === "wrong") s.line = s.line.slice(0, -1); // the solution replaces it
        s.rating = message.rating;
        s.change = message.rating_change;
        if (message.streak !== null) { s.streak = message.streak; s.best = message.best_streak; }
        this.send("puzzle_history", { limit: 10 });
      }
    } else if (message.t === "puzzle_history") {
      s.history = message.attempts;
      s.rating = s.rating ?? message.rating;
      s.best = s.best ?? message.best_streak;
    }
    this.render();
  }

  // A request of this view was refused: take back the move it carried, if any.
  failed() {
    const s = this.state;
    if (s.status === "waiting") {
      s.line.pop();
      s.mine.pop();
      s.status = "solving";
    } else if (s.status === "loading") {
      s.status = s.puzzle ? "solving" : "idle";
    }
    this.render();
  }

  pick(cell) {
    const s = this.state;
    if (s.status !== "solving" || this.cells()[cell] !== null) return;
    s.line.push(cell);
    s.mine.push(cell);
    s.status = "waiting";
    if (this.send("puzzle_attempt", { puzzle: s.puzzle.id, moves: [...s.mine], mode: s.mode }) === null) {
      s.line.pop();
      s.mine.pop();
      s.status = "solving";
    }
    this.render();
  }

  // The board as shown: the position, the moves since, and after a mistake the solution.
  shownMoves() {
    const s = this.state;
    const after = s.status === "wrong" ? s.solution : s.line;
    return [...s.puzzle.moves, ...after];
  }

  cells() {
    const geometry = geometryOf(this.state.puzzle.variant);
    const cells = new Array(geometry.size).fill(null);
    this.shownMoves().forEach((cell, ply) => { cells[cell] = ply % 2 === 0 ? "x" : "o"; });
    return cells;
  }

  words() {
    const s = this.state;
    if (s.status === "loading") return "Finding a puzzle…";
    if (!s.puzzle) return "";
    const g = geometryOf(s.puzzle.variant);
    const names = (cells) => cells.map((c) => g.format(c)).join(" ");
    const change = s.change === null ? "" : ` (${s.change >= 0 ? "+" : "−"}${Math.abs(s.change)})`;
    const other = s.puzzle.to_move === "x" ? "O" : "X";
    switch (s.status) {
      case "waiting": return "Checking your move…";
      case "solved": return `Solved! Your puzzle rating: ${s.rating}${change}.`;
      case "wrong": return `Not that one: the solution was ${names(s.solution)}. Your puzzle rating: ${s.rating}${change}.`;
      case "solving":
        if (s.mine.length) return `Right. ${other} answered ${g.format(s.line.at(-1))}: your move.`;
        return s.puzzle.kind === "survive"
          ? `Find the only move after which ${other} cannot force a win within ${s.puzzle.horizon} moves.`
          : "Find the winning move.";
      default: return "";
    }
  }

  render() {
    const s = this.state;
    this.buttons.querySelector("#puzzle-streak-next").hidden = !(s.mode === "streak" && s.status === "solved");
    fill(this.historyList, s.history.map((a) => h("li", { class: a.solved ? "solved" : "missed" },
      `${a.solved ? "✓" : "✗"} ${a.title} `,
      h("span", { class: "muted" }, a.rated ? `${a.rating_after - a.rating_before >= 0 ? "+" : "−"}${Math.abs(a.rating_after - a.rating_before)}` : a.mode))));
    if (!s.puzzle) {
      this.title.textContent = "Puzzles";
      this.meta.textContent = "";
      this.feedback.textContent = this.words() || "";
      return;
    }
    const streak = s.mode === "streak" ? ` · streak ${s.streak ?? 0} (best ${s.best ?? 0})` : "";
    this.title.textContent = s.puzzle.title;
    this.meta.textContent = `${MODE_NAMES[s.mode]}${s.day ? ` ${s.day}` : ""} · puzzle #${s.puzzle.id} rated ${s.puzzle.rating}`
      + `${s.rating !== null ? ` · your rating ${s.rating}` : ""}${streak}`;
    this.feedback.textContent = this.words();
    this.feedback.className = `puzzle-feedback ${s.status}`;
    const geometry = geometryOf(s.puzzle.variant);
    const cells = this.cells();
    const shown = this.shownMoves();
    this.levels.update({
      geometry, cells, last: shown.length ? shown.at(-1) : null,
      line: winningLine(geometry, cells), threats: { x: new Set(), o: new Set() },
      hover: new Set(), playable: s.status === "solving",
    });
    // after a mistake the board shows the solution: the move tried is marked where it was
    const tried = s.status === "wrong" && s.tried != null ? this.levels.buttons[s.tried] : null;
    if (tried && cells[s.tried] === null) {
      tried.classList.add("tried");
      tried.textContent = "✗";
      tried.setAttribute("aria-label", `${tried.dataset.name}, your move (not the solution)`);
    }
  }
}
