// The lobby: a new game (the computer, quick pairing, a seek, a private room), open seeks,
// live games to watch, your unfinished games, the tournaments (tournaments.js fills their
// panel), the leaderboard and who is online.

import { fill, h, refill, select } from "./dom.js";
import { botMark, nameLink } from "./player.js";
import { formatClockSpec, LEVELS, VARIANTS } from "./protocol.js";

export const CLOCKS = ["untimed", "1+1", "3+2", "5+3", "10+5", "30+0"];
// The clock a game against a person starts with: quick pairing meets those who ask the same.
export const PEOPLE_CLOCK = "untimed";
const COLOUR_CHOICES = [["random", "Random"], ["x", "X (moves first)"], ["o", "O"]];

export class LobbyView {
  // `app` holds the state; `act` the actions (play_ai, quick, seek, ...).
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.build();
  }

  build() {
    const act = this.act;
    const choice = () => this.choice();
    // Two clocks: the computer's game and a game against a person are chosen apart, so quick
    // pairing never takes the clock of the last computer game (two players pressing it with
    // the defaults meet).
    this.form = h("form", { class: "new-game", onsubmit: (e) => e.preventDefault() },
      h("div", { class: "fields" },
        select("variant", "Board", VARIANTS.map((v) => [v, v]), "4x4x4"),
        select("colour", "Your colour", COLOUR_CHOICES, "random")),
      h("fieldset", { class: "against ai" }, h("legend", {}, "Against the computer"),
        h("div", { class: "fields" },
          select("level", "Level", LEVELS.map((l) => [l, `Level ${l}`]), 3),
          select("ai_clock", "Clock", CLOCKS.map((c) => [c, c === "untimed" ? "Untimed" : c]),
            "untimed")),
        h("div", { class: "buttons" },
          h("button", { type: "button", class: "primary", id: "play-ai",
            onclick: () => act.playAI(choice()) }, "Play the computer"))),
      h("fieldset", { class: "against people" }, h("legend", {}, "Against a person"),
        h("div", { class: "fields" },
          select("clock", "Clock", CLOCKS.map((c) => [c, c === "untimed" ? "Untimed" : c]),
            PEOPLE_CLOCK),
          h("label", { class: "field check" }, h("input", { type: "checkbox", name: "rated" }),
            "Rated (seeks, rooms, challenges)")),
        h("div", { class: "buttons" },
          h("button", { type: "button", id: "quick", onclick: () => act.quick(choice()) },
            "Quick pairing"),
          h("button", { type: "button", id: "seek", onclick: () => act.seek(choice()) },
            "Post a seek"),
          h("button", { type: "button", id: "private-create",
            onclick: () => act.privateCreate(choice()) }, "Private room")),
        h("p", { class: "note" }, "Quick pairing: rated, meets the same board and clock.")));
    this.waiting = h("div", { class: "waiting", "aria-live": "polite" });
    this.codeInput = h("input", { name: "code", required: true, maxlength: 32,
      placeholder: "room code", autocapitalize: "off", spellcheck: "false" });
    const join = h("form", { class: "join", autocomplete: "off", onsubmit: (e) => {
      e.preventDefault();
      act.privateJoin(this.codeInput.value.trim());
    } }, h("label", { class: "field" }, "Join a friend's room", this.codeInput),
    h("button", { type: "submit" }, "Join"));
    this.seeks = h("div", { class: "list" });
    this.live = h("div", { class: "list" });
    this.mine = h("div", { class: "list" });
    this.leaders = h("ol", { class: "leaders" });
    this.noLeaders = h("p", { class: "empty", id: "no-leaders" }, "No rated games yet.");
    this.online = h("p", { class: "online" });
    this.tournaments = h("div", { class: "panel tournaments", id: "tournaments" }); // tournaments.js
    this.players = h("ul", { class: "players" });
    fill(this.root,
      h("div", { class: "panel play" }, h("h2", {}, "New game"), this.form, this.waiting, join),
      h("div", { class: "panel mine" }, h("h2", {}, "Your games"), this.mine,
        h("button", { type: "button", id: "my-games", onclick: () => act.player(this.app.me.name) },
          "All my games")),
      this.tournaments,
      h("div", { class: "panel seeks" }, h("h2", {}, "Open seeks"), this.seeks),
      h("div", { class: "panel" }, h("h2", {}, "Live games"), this.live),
      h("div", { class: "panel" }, h("h2", {}, "Players online"), this.online,
        this.players),
      h("div", { class: "panel" }, h("h2", {}, "Leaderboard"), this.noLeaders, this.leaders,
        h("label", { class: "check sound" }, h("input", { type: "checkbox", id: "sound" }),
          "A sound when the opponent moves, a game starts or a challenge comes")));
  }

  choice() {
    const f = this.form.elements;
    return {
      variant: f.variant.value,
      clock: f.clock.value, // a person's game: quick pairing, seeks, rooms, challenges
      aiClock: f.ai_clock.value, // the computer's
      colour: f.colour.value,
      level: parseInt(f.level.value, 10),
      rated: f.rated.checked,
    };
  }

  // What this player waits for (a quick pairing, a seek, a private room), each with its Cancel.
  waits() {
    const app = this.app;
    const act = this.act;
    const waits = [];
    if (app.queued) {
      waits.push(h("p", {}, `Looking for an opponent (${app.queued})… `,
        h("button", { type: "button", onclick: () => act.cancelQuick() }, "Cancel")));
    }
    if (app.mySeek) {
      waits.push(h("p", {}, "Your seek is open; the game starts when someone accepts. ",
        h("button", { type: "button", onclick: () => act.cancelSeek() }, "Cancel")));
    }
    if (app.privateRoom) {
      const link = `${location.origin}/#join=${app.privateRoom.code}`;
      // The link shown whole (it wraps), its buttons on a row of their own.
      waits.push(h("div", { class: "room" },
        h("p", {}, "Private room ", h("code", { id: "room-code" }, app.privateRoom.code),
          ` (${app.privateRoom.variant}, ${formatClockSpec(app.privateRoom.clock)}). `,
          "Send your friend this link:"),
        h("p", { class: "room-link" }, h("a", { id: "room-link", href: link,
          onclick: (e) => { e.preventDefault(); act.copy(link); } }, link)),
        h("p", { class: "room-buttons" },
          h("button", { type: "button", id: "room-copy", onclick: () => act.copy(link) }, "Copy the link"),
          h("button", { type: "button", id: "private-cancel", onclick: () => act.privateCancel() },
            "Cancel"))));
    }
    return waits;
  }

  render() {
    const app = this.app;
    const act = this.act;
    // What this player waits for.
    refill(this.waiting, JSON.stringify([app.queued, app.mySeek, app.privateRoom]),
      () => this.waits());

    const seeks = [...app.lobby.seeks.values()];
    refill(this.seeks, JSON.stringify([seeks, app.mySeek]), () => seeks.length === 0 ? h("p", { class: "empty" }, "No open seeks.") :
      h("table", {}, h("thead", {}, h("tr", {}, ["Player", "Rating", "Board", "Clock", "", ""]
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, seeks.map((s) => h("tr", { dataset: { seek: s.id } },
        h("td", { class: "name", title: s.name }, nameLink(s.name, act), botMark(s.bot)),
        h("td", {}, String(s.rating)),
        h("td", {}, s.variant),
        h("td", {}, formatClockSpec(s.clock)),
        h("td", {}, [s.rated ? "rated" : "casual", s.colour === "random" ? "" : ` · plays ${s.colour.toUpperCase()}`].join("")),
        h("td", {}, s.id === app.mySeek
          ? h("button", { type: "button", onclick: () => act.cancelSeek() }, "Cancel")
          : h("button", { type: "button", class: "accept",
            onclick: () => act.acceptSeek(s.id) }, "Accept")))))));

    const games = [...app.lobby.games.values()];
    refill(this.live, JSON.stringify(games), () => games.length === 0 ? h("p", { class: "empty" }, "No games being played.") :
      h("ul", {}, games.map((g) => h("li", { dataset: { game: g.id } },
        nameLink(g.x, act, g.x.startsWith("Computer (") ? 0 : null), botMark(g.x_bot), " vs ",
        nameLink(g.o, act, g.o.startsWith("Computer (") ? 0 : null), botMark(g.o_bot),
        ` · ${g.variant} · ${formatClockSpec(g.clock)} · move ${g.ply} `,
        h("button", { type: "button", onclick: () => act.watch(g.id) }, "Watch")))));

    const mine = [...app.games.values()].filter((m) => m.you !== null && !m.over);
    refill(this.mine, JSON.stringify(mine.map((m) => [m.id, m.seat("x").name, m.seat("o").name,
      m.variant, m.ply])), () => mine.length === 0 ? h("p", { class: "empty" }, "None unfinished.") :
      h("ul", {}, mine.map((m) => h("li", {},
        h("span", { class: "name" }, m.seat("x").name), " vs ",
        h("span", { class: "name" }, m.seat("o").name),
        ` · ${m.variant} · move ${m.ply} `,
        h("button", { type: "button", onclick: () => act.open(m.id) }, "Resume")))));

    this.online.textContent = `${app.lobby.online} player${app.lobby.online === 1 ? "" : "s"} online`;
    const me = app.me ? app.me.name.toLowerCase() : null;
    refill(this.players, JSON.stringify([app.lobby.players, me]), () => app.lobby.players.map((p) => h("li", { dataset: { player: p.name } },
      nameLink(p.name, act), botMark(p.bot), p.rating === null ? "" : ` ${p.rating} `,
      p.name.toLowerCase() === me ? "" : h("button", { type: "button", class: "challenge",
        title: "Challenge on the terms chosen under New game",
        onclick: () => act.challenge(p.name, this.choice()) }, "Challenge"))));
    refill(this.leaders, JSON.stringify(app.leaderboard), () => app.leaderboard.map((p) => h("li", {}, nameLink(p.name, act), botMark(p.bot),
      ` ${p.rating}`)));
    this.leaders.hidden = app.leaderboard.length === 0; // a sentence, not a list's "1."
    this.noLeaders.hidden = app.leaderboard.length > 0;
  }
}
