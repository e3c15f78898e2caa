// Tournaments (docs/protocol.md, "Tournaments"): the list in the lobby (name, kind, status,
// start, clock, players), a tournament's page with its live standings (a page of 10 lines as
// the server sends it, the one holding this player's line unless another was asked for, with
// buttons for the pages above and below, and this player's own line always) and its players'
// games, join and leave, and for moderators a small form that creates one. A paired player's next game comes
// as any game does (a `game` with `tournament` set) and takes the screen (main.js).

import { fill, h, select } from "./dom.js";
import { botMark, nameLink } from "./player.js";
import { formatClockSpec, VARIANTS } from "./protocol.js";

export const TOURNAMENT_CLOCKS = ["1+0", "1+1", "3+0", "3+2", "5+3", "10+5"];
const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const STATUS = { created: "starts", started: "playing", finished: "finished" };

// A tournament's clock, "3+2", whether the server sends it as text or as a clock spec.
export function tournamentClock(clock) {
  if (clock === null || clock === undefined) return "untimed";
  return typeof clock === "string" ? clock : formatClockSpec(clock);
}

// How long until `at` (Unix seconds) from `now` (ms), in words: "in 4 min", "in 1 h 05".
export function until(at, now = Date.now()) {
  const seconds = Math.max(0, Math.round(at - now / 1000));
  if (seconds < 60) return seconds <= 1 ? "now" : `in ${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  return `in ${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")}`;
}

// Where a tournament stands, in a few words: when it starts, its round and when the next
// is due, when it ends.
export function stage(info, now = Date.now()) {
  const kind = info.kind === "swiss" ? "Swiss" : "Arena";
  if (info.status === "finished") return `${kind} · finished`;
  if (info.status === "created") {
    return `${kind} · starts ${until(info.starts_at, now)} (${TIME.format(new Date(info.starts_at * 1000))})`;
  }
  if (info.kind === "swiss") {
    const round = `${kind} · round ${info.round ?? 1} of ${info.rounds}`;
    const next = info.next_round_at;  // the next round's time at the latest (null: none)
    if (next === null || next === undefined) return round;
    return `${round} · next ${until(next, now)} (${TIME.format(new Date(next * 1000))})`;
  }
  return info.ends_at ? `${kind} · ends ${until(info.ends_at, now)}` : `${kind} · playing`;
}

// One line of terms: board, clock, rated or casual, players.
export function terms(info) {
  const players = `${info.players} player${info.players === 1 ? "" : "s"}`;
  const length = info.kind === "swiss" ? `${info.rounds} rounds` : null;
  return [info.variant, tournamentClock(info.clock), info.rated ? "rated" : "casual", length, players]
    .filter(Boolean).join(" · ");
}

// The tournaments panel of the lobby: the list, and for moderators the form to create one.
export class TournamentList {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.list = h("div", { class: "list tournaments" });
    this.form = this.createForm();
    this.creating = h("details", { class: "create-tournament", id: "create-tournament" },
      h("summary", {}, "Create a tournament"), this.form);
    fill(root, h("h2", {}, "Tournaments"), this.list, this.creating);
  }

  createForm() {
    const number = (name, label, value, min, max) => h("label", { class: "field" }, label,
      h("input", { name, type: "number", min, max, value, required: true, inputmode: "numeric" }));
    this.lengthField = number("duration", "Minutes", 60, 1, 1440);
    const kind = select("kind", "Kind", [["arena", "Arena"], ["swiss", "Swiss"]], "arena");
    kind.querySelector("select").addEventListener("change", (e) => this.kindChanged(e.target.value));
    return h("form", { class: "tournament-form", autocomplete: "off", novalidate: true,
      onsubmit: (e) => { e.preventDefault(); this.submit(); } },
    h("label", { class: "field wide" }, "Name",
      h("input", { name: "name", maxlength: 60, required: true, placeholder: "Evening arena" })),
    h("div", { class: "fields" },
      kind,
      number("start", "Starts in (minutes)", 5, 0, 10080),
      this.lengthField,
      select("clock", "Clock", TOURNAMENT_CLOCKS.map((c) => [c, c]), "3+2"),
      select("variant", "Board", VARIANTS.map((v) => [v, v]), "4x4x4"),
      h("label", { class: "field" }, "Computer players",
        h("input", { name: "levels", placeholder: "levels, e.g. 2 5", maxlength: 40 }))),
    h("label", { class: "field check" }, h("input", { type: "checkbox", name: "rated", checked: true }),
      "Rated"),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "tournament-create" },
      "Create")));
  }

  kindChanged(kind) {
    const swiss = kind === "swiss";
    const label = this.lengthField;
    label.firstChild.textContent = swiss ? "Rounds" : "Minutes";
    const input = label.querySelector("input");
    input.value = swiss ? 5 : 60;
    input.max = swiss ? 30 : 1440;
  }

  // The form as a `tournament_create` request's fields, or null (said why).
  fields() {
    const f = this.form.elements;
    const name = f.name.value.trim();
    const start = Number(f.start.value);
    const length = Number(f.duration.value);
    const levels = f.levels.value.trim() === "" ? [] : f.levels.value.trim().split(/[\s,]+/).map(Number);
    if (!name) return this.refuse("Give the tournament a name.");
    if (!Number.isInteger(start) || start < 0) return this.refuse("Starts in: a number of minutes (0: now).");
    if (!Number.isInteger(length) || length < 1) {
      return this.refuse(f.kind.value === "swiss" ? "Rounds: a whole number, 1 or more." : "Minutes: a whole number, 1 or more.");
    }
    if (levels.some((l) => !Number.isInteger(l) || l < 1 || l > 8)) {
      return this.refuse("Computer players: levels from 1 to 8, separated by spaces.");
    }
    const fields = { name, kind: f.kind.value, starts_at: Math.floor(Date.now() / 1000) + start * 60,
      clock: f.clock.value, variant: f.variant.value, rated: f.rated.checked };
    if (f.kind.value === "swiss") fields.rounds = length;
    else fields.minutes = length;
    if (levels.length) fields.computer_levels = levels;
    return fields;
  }

  refuse(why) {
    this.act.say(why);
    return null;
  }

  submit() {
    const fields = this.fields();
    if (fields) this.act.createTournament(fields);
  }

  render() {
    this.creating.hidden = !this.act.canCreateTournaments();
    const all = [...this.app.tournaments.values()];
    const act = this.act;
    fill(this.list, all.length === 0 ? h("p", { class: "empty" }, "No tournaments today.") :
      h("ul", {}, all.map((t) => h("li", { dataset: { tournament: t.id }, class: t.status },
        h("a", { class: "tournament-link", href: `#tournament=${encodeURIComponent(t.id)}`,
          onclick: (e) => { e.preventDefault(); act.tournament(t.id); } }, t.name),
        h("span", { class: `badge ${t.status}` }, STATUS[t.status] || t.status),
        h("span", { class: "stage" }, stage(t)),
        h("span", { class: "terms" }, terms(t))))));
  }
}

// A score or a Swiss's points with halves as ½: 1.5 is "1½", 0.5 "½".
export function halves(value) {
  const whole = Math.floor(value);
  if (value - whole !== 0.5) return String(value);
  return whole === 0 ? "½" : `${whole}½`;
}

// One game's points in a standings line: an arena's as scored (doubled on fire: 4 a win, 2 a
// draw), a Swiss's in half points (2 a win or a bye, 1 a draw), shown as 1, ½, 0.
function pointCell(p, swiss) {
  const cls = `pt${p === 0 ? " zero" : ""}${!swiss && p > 2 ? " doubled" : ""}`;
  return h("span", { class: cls }, swiss ? halves(p / 2) : String(p));
}

// The result of a game as its row shows it.
function resultText(game) {
  if (game.result === null || game.result === undefined) return "playing";
  return game.result === "1/2-1/2" ? "½–½" : game.result;
}

// A tournament's page: what it is, join or leave, the standings, the games.
export class TournamentView {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.id = null;
  }

  get state() { return this.app.tournamentStates.get(this.id) || null; }

  // Whether this player is in the tournament (and has not withdrawn).
  joined(state = this.state) {
    const mine = this.mine(state);
    return Boolean(mine) && !mine.withdrawn;
  }

  // This player's line: the server's `me`, else the one on the page shown (or null).
  mine(state = this.state) {
    if (!state) return null;
    const me = this.app.me ? this.app.me.name.toLowerCase() : null;
    if (state.me && state.me.name.toLowerCase() === me) return state.me;
    return state.standings.find((s) => s.name.toLowerCase() === me) || null;
  }

  open(id) {
    this.id = id;
    this.render();
  }

  render() {
    const act = this.act;
    const back = h("button", { type: "button", class: "back", id: "tournament-back",
      onclick: () => act.toLobby() }, "Lobby");
    const state = this.state;
    if (state === null) {
      const known = this.app.tournaments.get(this.id);
      fill(this.root, h("div", { class: "panel" }, h("h2", {}, known ? known.name : "Tournament"),
        h("p", { class: "empty" }, "Loading…"), back));
      return;
    }
    const info = state.info;
    const joined = this.joined(state);
    const over = info.status === "finished";
    const me = this.app.me ? this.app.me.name.toLowerCase() : null;
    const mine = state.games.find((g) => g.result === null &&
      (g.x.toLowerCase() === me || g.o.toLowerCase() === me));
    const buttons = [];
    if (mine) {
      buttons.push(h("button", { type: "button", class: "primary", id: "tournament-game",
        onclick: () => act.watch(mine.id) }, "Your game"));
    }
    if (!over && joined) {
      buttons.push(h("button", { type: "button", id: "tournament-leave",
        onclick: () => act.tournamentLeave(info.id) }, info.kind === "swiss" ? "Withdraw" : "Leave"));
    } else if (!over) {
      buttons.push(h("button", { type: "button", class: "primary", id: "tournament-join",
        onclick: () => act.tournamentJoin(info.id) }, "Join"));
    }
    buttons.push(back);
    const note = over ? "Final standings." : joined
      ? (info.kind === "swiss" ? "You are in: your next game opens when its round is paired."
        : "You are in: your next game opens by itself within seconds of the last one's end.")
      : (info.kind === "swiss" ? "Join to be paired from the next round."
        : "Join at any time; leave when you like, your score stays.");
    const swiss = info.kind === "swiss";
    const heads = [["#", "num"], ["Player"], ["Score"], ["Games", "num"], ["Rating", "num"],
      ["Perf.", "num"]].concat(swiss ? [["Buchholz", "num"], ["S-B", "num"]] : []);
    const lines = [...state.standings];
    const own = this.mine(state);
    const below = own && !lines.some((s) => s.name === own.name); // not on this page
    if (below) lines.push(own);
    const page = state.page ?? 1;
    const pages = state.pages ?? 1;
    const pager = pages <= 1 ? null : h("div", { class: "pager buttons" },
      h("button", { type: "button", id: "standings-prev", disabled: page <= 1,
        onclick: () => act.tournamentPage(info.id, page - 1) }, "Above"),
      h("span", { class: "page", id: "standings-page" }, `Page ${page} of ${pages}`),
      h("button", { type: "button", id: "standings-next", disabled: page >= pages,
        onclick: () => act.tournamentPage(info.id, page + 1) }, "Below"));
    const standings = lines.length === 0
      ? h("p", { class: "empty" }, "Nobody has joined yet.")
      : h("div", { class: "table-scroll" }, h("table", { class: "standings" },
        h("thead", {}, h("tr", {}, heads.map(([t, cls]) => h("th", { scope: "col", class: cls }, t)))),
        h("tbody", {}, lines.map((s) => h("tr", {
          dataset: { player: s.name },
          class: [s.name.toLowerCase() === me ? "me" : "", s.withdrawn ? "withdrawn" : "",
            below && s === own ? "own" : ""].join(" ").trim() || null },
        h("td", { class: "num rank" }, String(s.rank)),
        h("td", { class: "player" }, nameLink(s.name, act, s.computer), botMark(s.bot),
          s.fire ? [" ", h("span", { class: "fire", title: "On fire: two wins in a row, each game's points doubled" }, "on fire")] : null,
          s.playing ? [" ", h("span", { class: "playing", title: "Playing a game now" }, "playing")] : null,
          s.withdrawn ? [" ", h("span", { class: "gone" }, swiss ? "withdrew" : "left")] : null),
        h("td", { class: "score" }, h("strong", {}, halves(s.score)),
          h("span", { class: "points", "aria-label": "points of each game" },
            s.points.map((p) => pointCell(p, swiss)))),
        h("td", { class: "num" }, String(s.games)),
        h("td", { class: "num" }, s.rating === null || s.rating === undefined ? "" : String(s.rating)),
        h("td", { class: "num" }, s.performance === null || s.performance === undefined ? "" : String(s.performance)),
        swiss ? h("td", { class: "num" }, s.buchholz === null ? "" : halves(s.buchholz)) : null,
        swiss ? h("td", { class: "num" }, s.sonneborn_berger === null ? "" : String(s.sonneborn_berger)) : null)))));
    // A computer the host entered has a level and no player page: its name is plain text.
    const levels = new Map(state.standings.map((s) => [s.name, s.computer]));
    const games = state.games.length === 0 ? h("p", { class: "empty" }, "No games yet.") :
      h("ul", { class: "tournament-games" }, state.games.map((g) => h("li", {
        dataset: { game: g.id }, class: g.result === null ? "on" : "done" },
      h("span", { class: "match" },
        g.round === null || g.round === undefined ? null : h("span", { class: "round" }, `R${g.round}`),
        nameLink(g.x, act, levels.get(g.x)), " vs ", nameLink(g.o, act, levels.get(g.o))),
      h("span", { class: "score" }, resultText(g)),
      h("button", { type: "button", class: "watch", onclick: () => act.watch(g.id) },
        g.result === null ? "Watch" : "Replay"))));
    fill(this.root,
      h("div", { class: "panel tournament-head" },
        h("h2", { id: "tournament-name" }, info.name),
        h("p", { class: "stage", id: "tournament-stage" }, stage(info)),
        h("p", { class: "terms" }, terms(info)),
        h("p", { class: "note" }, note),
        h("div", { class: "buttons" }, buttons)),
      h("div", { class: "panel standings-panel" }, h("h2", {}, over ? "Final standings" : "Standings"),
        standings, pager),
      h("div", { class: "panel games-panel" }, h("h2", {}, pages > 1 ? "Their games" : "Games"), games));
  }

  // Called each second while shown: the countdown to the start or the end.
  tick() {
    const state = this.state;
    const el = this.root.querySelector("#tournament-stage");
    if (state && el) el.textContent = stage(state.info);
  }
}
