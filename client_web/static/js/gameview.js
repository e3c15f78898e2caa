// The game: the board (levels or the 3-D cube), the players and clocks, what is happening,
// the buttons, the moves (step back through them) and the chat.

import { CubeView } from "./cube.js";
import { fill, h } from "./dom.js";
import { other, SIDES } from "./game.js";
import { formatClock, formatClockSpec } from "./protocol.js";
import { LevelsView } from "./levels.js";
import { isModerator } from "./moderation.js";
import { botMark, nameLink } from "./player.js";

export class GameView {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.hover = null;
    this.mode = "levels";
    this.showThreats = true;
    this.confirmResign = false;
    this.build();
  }

  build() {
    const act = this.act;
    const pick = (cell) => this.pick(cell);
    const hover = (cell) => { if (cell !== this.hover) { this.hover = cell; this.renderBoard(); } };
    this.levelsRoot = h("div", { class: "levels-root" });
    this.canvas = h("canvas", { class: "cube", tabindex: "0", role: "img",
      "aria-label": "The cube in 3-D: drag or use the arrow keys to turn it; click a cell to play it. The levels view lists every cell for screen readers." });
    this.levels = new LevelsView(this.levelsRoot, { onPick: pick, onHover: hover });
    this.cube = new CubeView(this.canvas, { onPick: pick, onHover: hover });
    this.tabs = h("div", { class: "tabs", role: "group", "aria-label": "Board view" },
      h("button", { type: "button", id: "view-levels", onclick: () => this.setMode("levels") }, "Levels"),
      h("button", { type: "button", id: "view-cube", onclick: () => this.setMode("cube") }, "3-D"),
      h("label", { class: "check" }, h("input", { type: "checkbox", checked: true,
        onchange: (e) => { this.showThreats = e.target.checked; this.renderBoard(); } }),
      "Threats"));
    this.cellInput = h("input", { id: "cell-input", autocomplete: "off", autocapitalize: "off",
      spellcheck: "false", maxlength: 4, placeholder: "2b3", "aria-label": "Type a cell to play" });
    this.typeForm = h("form", { class: "type-cell", onsubmit: (e) => {
      e.preventDefault();
      this.typed(this.cellInput.value);
    } }, h("label", { for: "cell-input" }, "Type a cell"), this.cellInput,
    h("button", { type: "submit" }, "Play"));
    this.hint = h("p", { class: "hint", "aria-live": "polite" });
    this.seatEls = { x: h("div", { class: "seat x" }), o: h("div", { class: "seat o" }) };
    this.status = h("p", { class: "status", role: "status", "aria-live": "polite" });
    this.result = h("div", { class: "result", "aria-live": "polite" });
    this.actions = h("div", { class: "actions", role: "group", "aria-label": "Game actions" });
    this.moveList = h("ol", { class: "moves", "aria-label": "Moves" });
    this.nav = h("div", { class: "nav", role: "group", "aria-label": "Step through the moves" },
      [["first", "«", "First position", () => this.stepTo(0)],
        ["back", "‹", "One move back", () => this.step(-1)],
        ["forward", "›", "One move forward", () => this.step(1)],
        ["live", "»", "Live position", () => this.stepTo(Infinity)]]
        .map(([id, glyph, label, fn]) => h("button", { type: "button", id: `nav-${id}`,
          "aria-label": label, title: label, onclick: fn }, glyph)));
    this.chatTitle = h("h3", { class: "chat-title" }, "Chat");
    this.chatNote = h("p", { class: "chat-note" });
    this.chatLog = h("ul", { class: "chat-log", "aria-label": "Chat", "aria-live": "polite" });
    this.chatInput = h("input", { id: "chat-input", maxlength: 300, autocomplete: "off",
      placeholder: "Say something", "aria-label": "Chat message" });
    const chatForm = h("form", { class: "chat-form", onsubmit: (e) => {
      e.preventDefault();
      const text = this.chatInput.value.trim();
      if (text && act.chat(text)) this.chatInput.value = "";
    } }, this.chatInput, h("button", { type: "submit" }, "Send"));
    this.boardArea = h("div", { class: "board-area" }, this.levelsRoot, this.canvas);
    // The game's actions right after the board: one Tab from the board (its one Tab stop) to
    // Resign; on a phone they are a bar fixed at the bottom of the screen.
    fill(this.root,
      h("div", { class: "game-main" }, this.tabs, this.boardArea, this.actions,
        this.typeForm, this.hint),
      h("aside", { class: "game-side" },
        h("div", { class: "seats" }, this.seatEls.x, this.seatEls.o),
        this.status, this.result,
        h("div", { class: "moves-box" }, this.nav, this.moveList),
        h("div", { class: "chat" }, this.chatTitle, this.chatNote, this.chatLog, chatForm)));
    this.setMode("levels");
  }

  get model() { return this.app.games.get(this.app.current) || null; }

  setMode(mode) {
    this.mode = mode;
    this.boardArea.dataset.mode = mode;
    this.tabs.querySelector("#view-levels").setAttribute("aria-pressed", String(mode === "levels"));
    this.tabs.querySelector("#view-cube").setAttribute("aria-pressed", String(mode === "cube"));
    this.renderBoard();
  }

  pick(cell) {
    const model = this.model;
    if (!model) return;
    const why = this.cannotPlay(model, cell);
    if (why) {
      this.act.say(why);
      return;
    }
    this.act.move(cell);
  }

  cannotPlay(model, cell) {
    if (model.over) return "The game is over.";
    if (model.you === null) return "You are watching this game.";
    if (model.reviewing) return "You are looking at an earlier move: step forward to play.";
    if (!model.myTurn) return "It is not your turn.";
    if (this.app.pendingMove) return "Your move is on its way.";
    if (model.cells(model.ply)[cell] !== null) return `${model.notation(cell)} is taken.`;
    return null;
  }

  typed(text) {
    const model = this.model;
    if (!model) return;
    const cell = model.geometry.parse(text);
    if (cell === null) {
      const example = model.geometry.d === 3 ? "2b3" : "b3";
      this.act.say(`"${text}" is not a cell of this board: write it like ${example}.`);
      return;
    }
    this.cellInput.value = "";
    this.pick(cell);
  }

  step(delta) {
    const model = this.model;
    if (model) { model.step(delta); this.render(); }
  }

  stepTo(ply) {
    const model = this.model;
    if (model) { model.show(ply); this.render(); }
  }

  // -- rendering ------------------------------------------------------------------------

  render() {
    const model = this.model;
    if (!model) return;
    this.cellInput.placeholder = model.geometry.d === 3 ? "2b3" : "b3";
    this.renderBoard();
    this.renderSeats();
    this.renderStatus();
    this.renderActions();
    this.renderMoves();
    this.renderChat();
  }

  boardView(model) {
    const cells = model.cells();
    const g = model.geometry;
    const none = { x: new Set(), o: new Set() };
    const hoverLines = this.hover === null ? [] : g.linesThrough[this.hover].map((i) => g.lines[i]);
    return {
      geometry: g,
      cells,
      last: model.lastMove(),
      line: model.winningLine(cells),
      threats: this.showThreats && !model.over ? model.threats(cells) : none,
      hover: new Set(hoverLines.flat()),
      hoverLines,
      playable: model.myTurn && !model.reviewing && !this.app.pendingMove,
    };
  }

  renderBoard() {
    const model = this.model;
    if (!model) return;
    const view = this.boardView(model);
    if (this.mode === "levels") this.levels.update(view);
    else this.cube.update(view);
    let hint;
    if (this.hover !== null) {
      const n = view.hoverLines.length;
      hint = `${model.notation(this.hover)}: ${n} line${n === 1 ? "" : "s"} through it`;
    } else {
      const mine = model.you ? view.threats[model.you] : null;
      const theirs = model.you ? view.threats[other(model.you)] : null;
      const list = (set) => [...set].map((c) => model.notation(c)).join(", ");
      const parts = [];
      if (model.you === null) {
        for (const side of SIDES) if (view.threats[side].size) parts.push(`${side.toUpperCase()} threatens ${list(view.threats[side])}`);
      } else {
        if (mine.size) parts.push(`You threaten ${list(mine)}`);
        if (theirs.size) parts.push(`Opponent threatens ${list(theirs)}`);
      }
      hint = parts.join(" · ") || (this.mode === "cube" ? "Drag to turn the cube." : "");
    }
    this.hint.textContent = hint;
  }

  renderSeats() {
    const model = this.model;
    const now = performance.now();
    for (const side of SIDES) {
      const seat = model.seat(side);
      const el = this.seatEls[side];
      // After a rated game, the rating it left (read from the server, which rounds it as the
      // leaderboard does), beside the one before.
      const after = model.ratingsAfter?.[side];
      const rating = seat.ai !== null || seat.rating === null || seat.rating === undefined ? ""
        : after === undefined ? seat.rating : `${seat.rating} → ${after}`;
      const turn = !model.over && model.turn === side;
      el.classList.toggle("turn", turn);
      el.classList.toggle("gone", !seat.online);
      // The name on one line (cut with … when long, whole in its title), the rating and
      // "(you)" beside it, or under it on a phone.
      const name = nameLink(seat.name, this.act, seat.ai);
      name.title = seat.name;
      fill(el,
        h("span", { class: "mark", "aria-hidden": "true" }, side.toUpperCase()),
        h("span", { class: "who" }, name,
          h("span", { class: "meta" }, botMark(seat.bot),
            rating === "" ? null : h("span", { class: "rating" }, String(rating)),
            model.you === side ? h("span", { class: "you" }, "(you)") : null,
            seat.online ? null : h("span", { class: "away" }, "away"))),
        h("span", { class: "clock", dataset: { side } }, this.clockText(model, side, now)));
      el.setAttribute("aria-label", `${side.toUpperCase()}: ${seat.name}${turn ? ", to move" : ""}`);
    }
  }

  clockText(model, side, now) {
    const left = model.timeLeft(side, now);
    return left === null ? "" : formatClock(left);
  }

  // Called often: the running clock and a claim that becomes possible.
  tick() {
    const model = this.model;
    if (!model) return;
    const now = performance.now();
    for (const el of this.root.querySelectorAll(".clock")) {
      el.textContent = this.clockText(model, el.dataset.side, now);
      el.classList.toggle("low", (model.timeLeft(el.dataset.side, now) ?? Infinity) < 10000);
    }
    // The claim button, or the seconds until it comes, when the opponent has gone.
    const wait = model.you === null ? null : model.claimIn(other(model.you), now);
    const shown = `${model.canClaim(now)} ${wait === null ? "" : Math.ceil(wait / 1000)}`;
    if (shown !== this.claimShown) this.renderActions();
  }

  renderStatus() {
    const model = this.model;
    const info = `${model.variant} · ${formatClockSpec(model.clock)} · ${model.rated ? "rated" : "casual"}` +
      (model.spectators ? ` · ${model.spectators} watching` : "");
    let text;
    if (model.over) text = "Game over.";
    else if (model.engine && model.engine.state === "preparing") {
      const pct = typeof model.engine.progress === "number" ? ` ${Math.round(model.engine.progress * 100)}%` : "";
      text = `The computer is getting ready…${pct}${model.engine.message ? ` (${model.engine.message})` : ""}`;
    } else if (model.engine && model.engine.state === "unavailable") {
      text = `The computer is unavailable${model.engine.message ? `: ${model.engine.message}` : "."}`;
    } else if (model.thinking) {
      text = `Computer thinking…${model.thinking.depth ? ` (depth ${model.thinking.depth})` : ""}`;
    } else if (model.you === null) text = `${model.turn.toUpperCase()} to move.`;
    else text = model.myTurn ? "Your move." : "Waiting for your opponent…";
    if (model.drawOffer && !model.over) {
      text += model.drawOffer === model.you ? " You offered a draw." : ` ${model.drawOffer.toUpperCase()} offers a draw.`;
    }
    if (model.drawDeclined && model.drawDeclined !== model.you && model.you !== null && !model.over) {
      text += " Your draw offer was declined.";
    }
    if (model.reviewing) text += ` Showing move ${model.shownPly} of ${model.ply}.`;
    // A tournament's game says which, and leads back to its page.
    const tournament = model.tournament === null ? null : h("a", { class: "tournament-link",
      id: "game-tournament", href: `#tournament=${encodeURIComponent(model.tournament)}`,
      onclick: (e) => { e.preventDefault(); this.act.tournament(model.tournament); } },
    this.act.tournamentName(model.tournament));
    fill(this.status, tournament, h("span", {}, text), h("span", { class: "info" }, info));
    if (model.over) {
      fill(this.result, h("p", { id: "result-text" }, model.describeEnd()));
    } else {
      fill(this.result);
    }
  }

  renderActions() {
    const model = this.model;
    const act = this.act;
    const now = performance.now();
    const gone = model.you === null ? null : model.claimIn(other(model.you), now);
    this.claimShown = `${model.canClaim(now)} ${gone === null ? "" : Math.ceil(gone / 1000)}`;
    const b = (id, label, fn, cls) => h("button", { type: "button", id, class: cls, onclick: fn }, label);
    const buttons = [];
    const offer = []; // a draw to answer: first in the bar
    if (model.you !== null && !model.over) {
      if (model.ply < 2) buttons.push(b("abort", "Abort", () => act.game("abort")));
      else if (this.confirmResign) {
        buttons.push(b("resign", "Really resign?", () => { this.confirmResign = false; act.game("resign"); }, "danger"));
        buttons.push(b("resign-no", "Keep playing", () => { this.confirmResign = false; this.renderActions(); }));
      } else {
        buttons.push(b("resign", "Resign", () => { this.confirmResign = true; this.renderActions(); }));
      }
      if (!model.againstComputer && model.ply >= 2) {
        if (model.drawOffer === other(model.you)) {
          offer.push(b("draw-accept", "Accept draw", () => act.game("draw_accept"), "primary"),
            b("draw-decline", "Decline", () => act.game("draw_decline")));
        } else if (model.drawOffer === model.you) {
          buttons.push(h("button", { type: "button", disabled: true }, "Draw offered"));
        } else {
          buttons.push(b("draw-offer", "Offer draw", () => act.game("draw_offer")));
        }
      }
      const wait = model.claimIn(other(model.you), now);
      if (model.canClaim(now)) buttons.push(b("claim", "Claim the win", () => act.game("claim"), "primary"));
      else if (wait !== null) buttons.push(h("span", { class: "note" }, `Your opponent left; you may claim the win in ${Math.ceil(wait / 1000)} s.`));
    }
    if (model.you !== null && model.over && model.tournament === null) { // a tournament pairs again
      const opp = other(model.you);
      const them = model.seat(opp).name;
      if (model.rematchGame) { // played already: nothing to wait for
      } else if (model.rematch.has(model.you)) {
        buttons.push(h("span", { class: "note", id: "rematch-note" }, `Rematch asked: waiting for ${them}…`));
      } else if (model.rematch.has(opp)) {
        buttons.push(h("span", { class: "note", id: "rematch-note" }, `${them} offers a rematch.`),
          b("rematch", "Accept rematch", () => act.game("rematch"), "primary"));
      } else {
        buttons.push(b("rematch", "Rematch", () => act.game("rematch"), "primary"));
      }
    }
    if (model.over) buttons.push(b("review-game", "Review", () => act.review(model.id)));
    if (model.tournament !== null) {
      buttons.push(b("to-tournament", "Tournament", () => act.tournament(model.tournament),
        model.over && model.you !== null ? "primary" : undefined));
    }
    buttons.push(b("to-lobby", "Lobby", () => act.toLobby()));
    fill(this.actions, offer, buttons);
  }

  renderMoves() {
    const model = this.model;
    const shown = model.shownPly;
    const items = [];
    for (let i = 0; i < model.moves.length; i += 2) {
      const move = (ply) => h("button", { type: "button", class: "move",
        "aria-current": ply === shown ? "step" : undefined,
        "aria-label": `move ${ply}, ${SIDES[(ply - 1) % 2].toUpperCase()} ${model.notation(model.moves[ply - 1])}`,
        onclick: () => this.stepTo(ply) }, model.notation(model.moves[ply - 1]));
      items.push(h("li", {}, move(i + 1), i + 1 < model.moves.length ? move(i + 2) : null));
    }
    fill(this.moveList, items);
    const current = this.moveList.querySelector("[aria-current]");
    if (current && !model.reviewing) this.moveList.scrollTop = this.moveList.scrollHeight;
    else if (current) current.scrollIntoView({ block: "nearest" });
    this.nav.querySelector("#nav-first").disabled = shown === 0;
    this.nav.querySelector("#nav-back").disabled = shown === 0;
    this.nav.querySelector("#nav-forward").disabled = !model.reviewing;
    this.nav.querySelector("#nav-live").disabled = !model.reviewing;
  }

  renderChat() {
    const model = this.model;
    // Two chats (docs/protocol.md): a seated player is in the players', a spectator in the
    // spectators'; neither sees the other's. Say which, and that it is off if the host says so.
    // A moderator watching is sent both, so each line says which chat it is in.
    const seated = model.you !== null;
    const both = !seated && isModerator(this.app.me);
    const open = seated || model.spectatorChat;
    this.chatTitle.textContent = seated ? "Players' chat" : both ? "Both chats" : "Spectators' chat";
    this.chatNote.textContent = seated ? "Only you two read it." :
      both ? "You moderate: you read the players' chat too; you write in the spectators'." :
      open ? "Only spectators read it; the players do not." : "Spectators' chat is off on this server.";
    this.chatInput.disabled = !open;
    const channel = (c) => both ? h("span", { class: "channel" }, c.side ? "players" : "spectators") : null;
    const lines = model.chat.map((c) => h("li", { "data-line": c.line,
      "data-channel": c.side ? "players" : "spectators" }, channel(c),
      h("span", { class: `who ${c.side || "spectator"}` }, c.name), ": ",
      h("span", { class: "text" }, c.text), this.act.chatTools(c, model.id)));
    const stick = this.chatLog.scrollTop + this.chatLog.clientHeight >= this.chatLog.scrollHeight - 4;
    fill(this.chatLog, lines);
    if (stick) this.chatLog.scrollTop = this.chatLog.scrollHeight;
  }
}
