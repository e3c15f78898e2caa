// A player's page, from the server (`player_games`, docs/protocol.md): their record, their
// rating's history drawn from their last rated games, and their games newest first, each
// opened to replay (or to watch, or to go back to, while it is on). "Older games" asks for the
// next page. Names shown anywhere in the client become links to this page (`nameLink`).

import { fill, h } from "./dom.js";

const PAGE = 20;

// More buttons beside a game's Replay (a hook: the game review pushes its own here): each is
// (game, act) => an element, or null for a game it has nothing for.
export const GAME_ACTIONS = [];

// A player's name that opens their page; the computer's seats stay plain text.
export function nameLink(name, act, ai = null) {
  if (ai !== null && ai !== undefined) return h("span", { class: "name" }, name);
  return h("a", { class: "name player-link", href: `#player=${encodeURIComponent(name)}`,
    dataset: { player: name },
    onclick: (e) => { e.preventDefault(); act.player(name); } }, name);
}

// " BOT" after the name of an account a program plays (the `bot` role), else nothing: a
// space and the badge (read "robo BOT", not "roboBOT").
export function botMark(bot) {
  return bot ? [" ", h("span", { class: "bot-mark", title: "A bot: a program plays this account" }, "BOT")] : null;
}

// The game from its player's side.
function outcome(game) {
  if (game.status === "playing") return "on";
  if (game.result === "*") return "aborted";
  if (game.result === "1/2-1/2") return "draw";
  return (game.result === "1-0") === (game.side === "x") ? "won" : "lost";
}

const DATE = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });

// The rating's history as a line: one point a rated game, oldest on the left.
function ratingChart(points) {
  if (points.length === 0) return h("p", { class: "empty" }, "No rated games yet.");
  const ratings = points.map((p) => p.rating);
  const low = Math.min(...ratings) - 10;
  const high = Math.max(...ratings) + 10;
  const width = 300;
  const height = 80;
  const x = (i) => (points.length === 1 ? width / 2 : (i * width) / (points.length - 1));
  const y = (r) => height - ((r - low) * height) / (high - low);
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `-4 -4 ${width + 8} ${height + 8}`);
  svg.setAttribute("class", "rating-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Rating after each of the last ${points.length} rated games: ` +
    `from ${ratings[0]} to ${ratings[ratings.length - 1]}`);
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", ratings.map((r, i) => `${x(i)},${y(r)}`).join(" "));
  svg.append(line);
  ratings.forEach((r, i) => {
    const dot = document.createElementNS(NS, "circle");
    dot.setAttribute("cx", x(i));
    dot.setAttribute("cy", y(r));
    dot.setAttribute("r", 3);
    const title = document.createElementNS(NS, "title");
    title.textContent = `${r} · ${DATE.format(new Date(points[i].at * 1000))}`;
    dot.append(title);
    svg.append(dot);
  });
  return h("figure", { class: "ratings" }, svg,
    h("figcaption", {}, `Rating after each rated game: ${ratings[0]} → ${ratings[ratings.length - 1]}` +
      ` (from ${Math.min(...ratings)} to ${Math.max(...ratings)})`));
}

export class PlayerView {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.name = null;
    this.page = null; // the first page: the record and the ratings
    this.games = [];
    this.next = null;
  }

  // Open `name`'s page: ask the server for its first page.
  open(name) {
    this.name = name;
    this.page = null;
    this.games = [];
    this.next = null;
    this.act.send("player_games", { name, limit: PAGE });
    this.render();
  }

  // A reply to `player_games`: the first page, or an older one for the player shown.
  received(message) {
    if (this.name === null || message.player.name.toLowerCase() !== this.name.toLowerCase()) return;
    if (this.page === null) this.page = message;
    this.name = message.player.name;
    const known = new Set(this.games.map((g) => g.id));
    this.games.push(...message.games.filter((g) => !known.has(g.id)));
    this.next = message.next;
    this.render();
  }

  more() {
    if (this.next === null) return;
    this.act.send("player_games", { name: this.name, before: this.next, limit: PAGE });
    this.next = null;
  }

  render() {
    const act = this.act;
    const back = h("button", { type: "button", class: "back", onclick: () => act.toLobby() },
      "Back to the lobby");
    if (this.page === null) {
      fill(this.root, h("div", { class: "panel" }, h("h2", {}, this.name || ""),
        h("p", { class: "empty" }, "Loading…"), back));
      return;
    }
    const p = this.page.player;
    const mine = this.app.me && this.app.me.name.toLowerCase() === p.name.toLowerCase();
    const record = h("dl", { class: "record" },
      [["Rating", `${p.rating} ±${p.rd}`], ["Games", `${p.games} (${p.rated_games} rated)`],
        ["Won", p.wins], ["Lost", p.losses], ["Drawn", p.draws],
        ["Playing since", DATE.format(new Date(p.created * 1000))]]
        .map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, String(value)))));
    const rows = this.games.map((g) => {
      const opponent = g.side === "x" ? g.o : g.x;
      const opponentAi = g.side === "x" ? g.o_ai : g.x_ai;
      const opponentBot = g.side === "x" ? g.o_bot : g.x_bot; // absent: not a bot
      const result = outcome(g);
      const change = g.rating_change === null ? "" :
        h("span", { class: g.rating_change > 0 ? "up" : "down" },
          g.rating_change > 0 ? `+${g.rating_change}` : String(g.rating_change));
      const label = result === "on" ? (mine ? "Resume" : "Watch") : "Replay";
      return h("tr", { dataset: { game: g.id } },
        h("td", { class: `outcome ${result}` }, result),
        h("td", {}, nameLink(opponent, act, opponentAi), botMark(opponentBot)),
        h("td", {}, `${g.variant} as ${g.side.toUpperCase()}${g.rated ? " · rated" : ""}`),
        h("td", { class: "num" }, String(g.moves.length)),
        h("td", { class: "num" }, change),
        h("td", {}, DATE.format(new Date(g.created * 1000))),
        h("td", { class: "open-cell" }, h("button", { type: "button", class: "open",
          onclick: () => act.watch(g.id) }, label), GAME_ACTIONS.map((make) => make(g, act))));
    });
    const games = this.games.length === 0 ? h("p", { class: "empty" }, "No games yet.") :
      h("div", { class: "table-scroll" }, h("table", { class: "games" },
        h("thead", {}, h("tr", {}, ["", "Opponent", "Board", "Moves", "Rating", "Started", ""]
          .map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows)));
    fill(this.root,
      h("div", { class: "panel profile" },
        h("h2", {}, mine ? `${p.name} (you)` : p.name, botMark(p.bot)), record,
        ratingChart(this.page.ratings),
        h("div", { class: "buttons" }, mine ? null : h("button", { type: "button", id: "player-challenge",
          title: "Challenge on the terms chosen under New game in the lobby",
          onclick: () => act.challengeName(p.name) }, "Challenge"), back)),
      h("div", { class: "panel history" }, h("h2", {}, mine ? "My games" : "Games"), games,
        this.next === null ? null : h("button", { type: "button", id: "older",
          onclick: () => this.more() }, "Older games")));
  }
}
