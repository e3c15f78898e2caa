// The lobby: a new game (the computer, quick pairing, a seek, a private room), open seeks,
// live games to watch, your unfinished games, the leaderboard and who is online.

import { fill, h, select } from "./dom.js";
import { nameLink } from "./player.js";
import { formatClockSpec, LEVELS, VARIANTS } from "./protocol.js";

export const CLOCKS = ["untimed", "1+1", "3+2", "5+3", "10+5", "30+0"];
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
    this.form = h("form", { class: "new-game", onsubmit: (e) => e.preventDefault() },
      h("div", { class: "fields" },
        select("variant", "Board", VARIANTS.map((v) => [v, v]), "4x4x4"),
        select("clock", "Clock", CLOCKS.map((c) => [c, c === "untimed" ? "Untimed" : c]),
          "untimed"),
        select("colour", "Your colour", COLOUR_CHOICES, "random"),
        select("level", "Computer level", LEVELS.map((l) => [l, `Level ${l}`]), 3),
        h("label", { class: "field check" }, h("input", { type: "checkbox", name: "rated" }),
          "Rated (seeks and private rooms)")),
      h("div", { class: "buttons" },
        h("button", { type: "button", class: "primary", id: "play-ai",
          onclick: () => act.playAI(choice()) }, "Play the computer"),
        h("button", { type: "button", id: "quick", onclick: () => act.quick(choice()) },
          "Quick pairing"),
        h("button", { type: "button", id: "seek", onclick: () => act.seek(choice()) },
          "Post a seek"),
        h("button", { type: "button", id: "private-create",
          onclick: () => act.privateCreate(choice()) }, "Private room")));
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
    this.online = h("p", { class: "online" });
    this.players = h("ul", { class: "players" });
    this.challenges = h("ul", { class: "challenges" });
    fill(this.root,
      h("div", { class: "panel play" }, h("h2", {}, "New game"), this.form, this.waiting, join),
      h("div", { class: "panel mine" }, h("h2", {}, "Your games"), this.mine,
        h("button", { type: "button", id: "my-games", onclick: () => act.player(this.app.me.name) },
          "All my games")),
      h("div", { class: "panel seeks" }, h("h2", {}, "Open seeks"), this.seeks),
      h("div", { class: "panel" }, h("h2", {}, "Live games"), this.live),
      h("div", { class: "panel" }, h("h2", {}, "Players online"), this.challenges, this.online,
        this.players),
      h("div", { class: "panel" }, h("h2", {}, "Leaderboard"), this.leaders,
        h("label", { class: "check sound" }, h("input", { type: "checkbox", id: "sound" }),
          "A sound when the opponent moves, a game starts or a challenge comes")));
  }

  choice() {
    const f = this.form.elements;
    return {
      variant: f.variant.value,
      clock: f.clock.value,
      colour: f.colour.value,
      level: parseInt(f.level.value, 10),
      rated: f.rated.checked,
    };
  }

  render() {
    const app = this.app;
    const act = this.act;
    // What this player waits for.
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
      waits.push(h("div", { class: "room" },
        h("p", {}, "Private room ", h("code", { id: "room-code" }, app.privateRoom.code),
          ` (${app.privateRoom.variant}, ${formatClockSpec(app.privateRoom.clock)}). `,
          "Send your friend this link:"),
        h("p", {}, h("input", { id: "room-link", readonly: true, value: link,
          "aria-label": "Link to the room", onfocus: (e) => e.target.select() }),
        h("button", { type: "button", onclick: () => act.copy(link) }, "Copy"),
        h("button", { type: "button", id: "private-cancel", onclick: () => act.privateCancel() },
          "Cancel"))));
    }
    fill(this.waiting, waits);

    const seeks = [...app.lobby.seeks.values()];
    fill(this.seeks, seeks.length === 0 ? h("p", { class: "empty" }, "No open seeks.") :
      h("table", {}, h("thead", {}, h("tr", {}, ["Player", "Rating", "Board", "Clock", "", ""]
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, seeks.map((s) => h("tr", { dataset: { seek: s.id } },
        h("td", { class: "name", title: s.name }, nameLink(s.name, act)),
        h("td", {}, String(s.rating)),
        h("td", {}, s.variant),
        h("td", {}, formatClockSpec(s.clock)),
        h("td", {}, [s.rated ? "rated" : "casual", s.colour === "random" ? "" : ` · plays ${s.colour.toUpperCase()}`].join("")),
        h("td", {}, s.id === app.mySeek
          ? h("button", { type: "button", onclick: () => act.cancelSeek() }, "Cancel")
          : h("button", { type: "button", class: "accept",
            onclick: () => act.acceptSeek(s.id) }, "Accept")))))));

    const games = [...app.lobby.games.values()];
    fill(this.live, games.length === 0 ? h("p", { class: "empty" }, "No games being played.") :
      h("ul", {}, games.map((g) => h("li", { dataset: { game: g.id } },
        nameLink(g.x, act, g.x.startsWith("Computer (") ? 0 : null), " vs ",
        nameLink(g.o, act, g.o.startsWith("Computer (") ? 0 : null),
        ` · ${g.variant} · ${formatClockSpec(g.clock)} · move ${g.ply} `,
        h("button", { type: "button", onclick: () => act.watch(g.id) }, "Watch")))));

    const mine = [...app.games.values()].filter((m) => m.you !== null && !m.over);
    fill(this.mine, mine.length === 0 ? h("p", { class: "empty" }, "None unfinished.") :
      h("ul", {}, mine.map((m) => h("li", {},
        h("span", { class: "name" }, m.seat("x").name), " vs ",
        h("span", { class: "name" }, m.seat("o").name),
        ` · ${m.variant} · move ${m.ply} `,
        h("button", { type: "button", onclick: () => act.open(m.id) }, "Resume")))));

    this.online.textContent = `${app.lobby.online} player${app.lobby.online === 1 ? "" : "s"} online`;
    fill(this.challenges, [...app.challenges.values()].map((c) => h("li", { dataset: { challenge: c.id } },
      h("span", { class: "name" }, c.by), ` challenges you · ${c.variant} · ${formatClockSpec(c.clock)}`,
      ` · ${c.rated ? "rated" : "casual"} `,
      h("button", { type: "button", class: "accept", onclick: () => act.answerChallenge(c.id, true) },
        "Accept"),
      h("button", { type: "button", class: "decline",
        onclick: () => act.answerChallenge(c.id, false) }, "Decline"))));
    const me = app.me ? app.me.name.toLowerCase() : null;
    fill(this.players, app.lobby.players.map((p) => h("li", { dataset: { player: p.name } },
      nameLink(p.name, act), p.rating === null ? "" : ` ${p.rating} `,
      p.name.toLowerCase() === me ? "" : h("button", { type: "button", class: "challenge",
        title: "Challenge on the terms chosen under New game",
        onclick: () => act.challenge(p.name, this.choice()) }, "Challenge"))));
    fill(this.leaders, app.leaderboard.length === 0 ? h("li", { class: "empty" }, "No rated games yet.") :
      app.leaderboard.map((p) => h("li", {}, nameLink(p.name, act), ` ${p.rating}`)));
  }
}
