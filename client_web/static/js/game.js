// One game as this client knows it: the server's `game` state plus its versioned events,
// applied in order, its chat lines whatever the version (each `line` once), and the review
// cursor. On a gap, resync() gives the one request that brings it up to date: a catch-up
// (watch{since}), or after CATCH_UPS catch-ups in a row that left the gap open, the full game
// (docs/protocol.md, "Versions and catch-up"). Pure: no DOM, no socket; `now` is passed in
// (milliseconds, performance.now()).

import { geometryOf, threats, winningLine } from "./geometry.js";

export const SIDES = ["x", "o"];
export const CHANGED = "changed";
export const IGNORED = "ignored";
export const GAP = "gap";
export const CATCH_UPS = 2; // catch-ups in a row that leave a gap before the full game
const CHAT_KEPT = 200;

export const other = (side) => (side === "x" ? "o" : "x");

export const REASONS = {
  line: "a line is complete",
  full: "the board is full",
  dead: "no line can be completed",
  resign: "resignation",
  time: "time ran out",
  agreement: "draw agreed",
  abort: "the game was aborted",
  claim: "the opponent left",
};

export class GameModel {
  constructor(state, now) {
    this.id = state.id;
    this.variant = state.variant;
    this.geometry = geometryOf(state.variant);
    this.clock = state.clock;
    this.rated = state.rated;
    this.seats = state.seats.map((s) => ({ ...s }));
    this.moves = [...state.moves];
    this.version = state.version;
    this.you = state.you;
    this.clocks = state.clocks;
    this.clocksAt = now;
    this.drawOffer = state.draw_offer;
    this.drawDeclined = null;
    this.rematch = new Set(state.rematch);
    this.rematchGame = state.rematch_game ?? null; // the rematch's id, once it has started
    this.tournament = state.tournament ?? null; // the tournament the game belongs to
    this.end = state.end;
    this.spectators = state.spectators;
    this.chat = [...state.chat];
    this.spectatorChat = state.spectator_chat !== false; // the host lets spectators chat
    this.thinking = null;
    this.engine = null;
    this.claimAt = {};
    this.viewPly = null;
    this.asked = null; // the id of the watch resync() asked for, until its answer
    this.ahead = 0; // the highest version heard that could not be applied (a gap)
    this.failed = 0; // catch-ups in a row whose answer left a gap open
  }

  get ply() { return this.moves.length; }
  get over() { return this.end !== null && this.end !== undefined; }
  get turn() { return SIDES[this.ply % 2]; }
  get myTurn() { return this.you !== null && !this.over && this.turn === this.you; }
  get againstComputer() { return this.seats.some((s) => s.ai !== null); }
  seat(side) { return this.seats[SIDES.indexOf(side)]; }

  // Apply one event of this game received at `now`.
  apply(event, now) {
    if (event.game !== this.id) return IGNORED;
    if (event.t === "ai_thinking") {
      this.thinking = event.ply === this.ply && !this.over ? event : null;
      return CHANGED;
    }
    if (event.t === "engine") {
      this.engine = event;
      return CHANGED;
    }
    if (event.t === "chat") { // unversioned: each line once, in its place
      if (this.chat.some((line) => line.line === event.line)) return IGNORED;
      this.chat.push(event);
      this.chat.sort((a, b) => a.line - b.line);
      if (this.chat.length > CHAT_KEPT) this.chat.shift();
      return CHANGED;
    }
    if (event.t === "watching") { // unversioned: the newest count of spectators holds
      if (event.count === this.spectators) return IGNORED;
      this.spectators = event.count;
      return CHANGED;
    }
    if (event.t === "chat_removed") { // a moderator took the line out
      const kept = this.chat.filter((line) => line.line !== event.line);
      if (kept.length === this.chat.length) return IGNORED;
      this.chat = kept;
      return CHANGED;
    }
    if (event.t === "presence" && event.version <= this.version) {
      this.presence(event, now); // a catch-up's current presence carries no new version
      return CHANGED;
    }
    if (event.version <= this.version) return IGNORED;
    if (event.version > this.version + 1) return this.gap(event.version);
    switch (event.t) {
      case "move":
        if (event.ply !== this.ply + 1) return this.gap(event.version);
        this.moves.push(event.cell);
        this.drawOffer = null;
        this.drawDeclined = null;
        this.thinking = null;
        this.setClocks(event.clocks, now);
        break;
      case "end":
        this.end = event;
        this.drawOffer = null;
        this.thinking = null;
        this.setClocks(event.clocks, now);
        break;
      case "offer":
        if (event.kind === "draw") this.drawOffer = event.by;
        else if (event.kind === "draw_declined") {
          this.drawOffer = null;
          this.drawDeclined = event.by; // who declined: the offerer is told (until the next move)
        }
        else this.rematch.add(event.by);
        break;
      case "presence":
        this.presence(event, now);
        break;
      case "takeback":
        this.moves.length = Math.min(this.moves.length, event.ply);
        if (this.viewPly !== null && this.viewPly >= this.ply) this.viewPly = null;
        this.thinking = null;
        this.setClocks(event.clocks, now);
        break;
      case "rematched":
        this.rematchGame = event.rematch;
        break;
      default:
        return IGNORED;
    }
    this.version = event.version;
    return CHANGED;
  }

  gap(version) {
    this.ahead = Math.max(this.ahead, version);
    return GAP;
  }

  // -- catching up: one request at a time, and a bound --------------------------------------

  // The fields of the watch to send now (the caller keeps its id in `asked`), or null while
  // one is on its way.
  resync() {
    if (this.asked !== null) return null;
    this.asked = true; // on its way; the caller puts the request's id here
    return this.failed >= CATCH_UPS ? { game: this.id } : { game: this.id, since: this.version };
  }

  // The ack of the watch `ref` came (its catch-up is complete): if the gap is still open,
  // the fields of the next watch (resync()'s), else null.
  caughtUp(ref) {
    if (this.asked === null || ref !== this.asked) return null;
    this.asked = null;
    if (this.version >= this.ahead) {
      this.failed = 0;
      return null;
    }
    this.failed += 1;
    return this.resync();
  }

  // The watch `ref` was refused: nothing is sent for it; the next gap asks again.
  refused(ref) {
    if (this.asked === null || ref !== this.asked) return;
    this.asked = null;
    this.failed += 1;
  }

  // A new link: what was on its way is lost. The fields of the watch that catches up.
  reconnected() {
    this.asked = null;
    return this.resync();
  }

  presence(event, now) {
    const seat = this.seat(event.side);
    seat.online = event.online;
    if (event.online || event.claim_in === null) delete this.claimAt[event.side];
    else this.claimAt[event.side] = now + event.claim_in * 1000;
  }

  setClocks(clocks, now) {
    if (clocks) {
      this.clocks = clocks;
      this.clocksAt = now;
    }
  }

  // Milliseconds left on `side`'s clock at `now`, counting down locally; null if untimed.
  timeLeft(side, now) {
    if (!this.clocks) return null;
    let left = this.clocks[side];
    if (this.clocks.running === side && !this.over) left -= now - this.clocksAt;
    return Math.max(0, left);
  }

  // Milliseconds until a win may be claimed against `side` (who is gone), or null.
  claimIn(side, now) {
    const at = this.claimAt[side];
    return at === undefined ? null : Math.max(0, at - now);
  }

  canClaim(now) {
    if (this.you === null || this.over) return false;
    const wait = this.claimIn(other(this.you), now);
    return wait !== null && wait <= 0;
  }

  // -- what is shown: the live position, or an earlier one while stepping back ------------

  get shownPly() { return this.viewPly === null ? this.ply : this.viewPly; }
  get reviewing() { return this.viewPly !== null; }

  show(ply) {
    ply = Math.max(0, Math.min(this.ply, ply));
    this.viewPly = ply === this.ply ? null : ply;
  }

  step(delta) { this.show(this.shownPly + delta); }

  // The occupants of every cell ("x", "o" or null) after `ply` moves.
  cells(ply = this.shownPly) {
    const cells = new Array(this.geometry.size).fill(null);
    this.moves.slice(0, ply).forEach((cell, i) => { cells[cell] = SIDES[i % 2]; });
    return cells;
  }

  lastMove() {
    const ply = this.shownPly;
    return ply ? this.moves[ply - 1] : null;
  }

  winningLine(cells = this.cells()) {
    if (!this.reviewing && this.end && this.end.line) return this.end.line;
    return winningLine(this.geometry, cells);
  }

  threats(cells = this.cells()) {
    return { x: threats(this.geometry, cells, "x"), o: threats(this.geometry, cells, "o") };
  }

  notation(cell) { return this.geometry.format(cell); }

  // One line saying how the game ended: winner, reason and, when rated, the rating change.
  describeEnd() {
    const end = this.end;
    if (!end) return "";
    let head;
    if (end.result === "*") head = "Aborted";
    else if (end.winner === null) head = "Draw";
    else if (this.you === null) head = `${end.winner.toUpperCase()} (${this.seat(end.winner).name}) wins`;
    else head = end.winner === this.you ? "You win" : "You lose";
    let text = `${head} ${end.result} · ${REASONS[end.reason] || end.reason}`;
    if (end.line && end.line.length) { // named, not only coloured: for every eye and screen
      text += ` (${this.notation(end.line[0])}-${this.notation(end.line[end.line.length - 1])})`;
    }
    const change = end.rating_change;
    if (change) {
      const sign = (v) => (v >= 0 ? `+${v}` : `${v}`);
      text += this.you !== null
        ? ` · rating ${sign(change[this.you])}`
        : ` · rating X ${sign(change.x)}, O ${sign(change.o)}`;
    }
    return text;
  }
}
