// The web client: one player's session, the lobby and the games, wired to the page.
// State lives in `app` (never in the DOM); every message from the server updates it and the
// view that shows it re-renders.

import { AccountView, accountRefusal, mountLogin } from "./account.js";
import { AnalysisView } from "./analysis.js";
import { $, h, refill } from "./dom.js";
import { CHANGED, GAP, GameModel } from "./game.js";
import { GameView } from "./gameview.js";
import { LobbyView } from "./lobby.js";
import { chatTools, isModerator, ModerationView } from "./moderation.js";
import { PlayerView } from "./player.js";
import { formatClockSpec, parseClock, UNVERSIONED, VERSIONED } from "./protocol.js";
import { ReviewView } from "./review.js";
import { PuzzleView } from "./puzzles.js";
import { TournamentList, TournamentView } from "./tournaments.js";
import { Link, savedName, savedToken, serverUrl } from "./socket.js";

const app = {
  me: null, // the welcome message
  lobby: { seeks: new Map(), games: new Map(), online: 0, players: [] },
  leaderboard: [],
  mySeek: null,
  queued: null,
  privateRoom: null,
  challenges: new Map(), // id -> a challenge to this player, not yet answered
  outgoing: new Map(), // id -> a challenge this player sent, not yet answered
  after: null, // what to open once a name is chosen (askName)
  games: new Map(), // id -> GameModel
  current: null, // the game on screen
  pendingMove: null, // the id of a move request not yet answered
  requests: new Map(), // id -> what was asked, for errors
  screen: "connect",
  reports: [], // the moderators' queue, as last asked for
  onAck: new Map(), // request id -> what to do when it is acknowledged (not when refused)
  tournaments: new Map(), // id -> TournamentInfo: the list, as last asked for (`tournaments`)
  tournamentStates: new Map(), // id -> the last `tournament` of those followed (tournament_sub)
  creating: null, // the id of a tournament_create not yet answered: its page opens with the reply
};

const link = new Link(serverUrl(), onLinkEvent);
let toastTimer = null;

// -- actions -------------------------------------------------------------------------------

function send(t, fields = {}) {
  const id = link.send(t, fields);
  if (id === null) say("Not connected: wait a moment and try again.");
  else app.requests.set(id, t);
  return id;
}

function say(text) {
  const toast = $("#toast");
  toast.textContent = text;
  toast.classList.add("shown");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => toast.classList.remove("shown"), 4000);
}

// The clock chosen for a person's game, or with `ai` the computer's.
function clockOf(choice, ai = false) {
  try {
    return parseClock(ai ? choice.aiClock : choice.clock);
  } catch (error) {
    say(error.message);
    throw error;
  }
}

const act = {
  say,
  send,
  player: (name) => { playerView.open(name); show("player"); },
  challengeName: (name) => act.challenge(name, lobbyView.choice()),
  // tournaments (tournaments.js)
  tournament: (id) => {
    if (!app.tournamentStates.has(id) || !followed.has(id)) send("tournament_sub", subscription(id));
    followed.add(id);
    tournamentView.open(id);
    show("tournament");
  },
  // Another page of the standings: the server sends that one from now on.
  tournamentPage: (id, page) => {
    tournamentPages.set(id, page);
    send("tournament_sub", subscription(id));
  },
  tournamentName: (id) => app.tournamentStates.get(id)?.info.name || app.tournaments.get(id)?.name || "Tournament",
  tournamentJoin: (id) => {
    const ref = send("tournament_join", { tournament: id });
    if (ref !== null) app.onAck.set(ref, () => say("You are in: your games open by themselves."));
  },
  tournamentLeave: (id) => {
    const ref = send("tournament_leave", { tournament: id });
    if (ref !== null) app.onAck.set(ref, () => say("You left the tournament: your score stays."));
  },
  canCreateTournaments: () => isModerator(app.me),
  createTournament: (fields) => { app.creating = send("tournament_create", fields); },
  switchPlayer: () => { // tokens stay kept per name: the first screen asks which to play
    localStorage.removeItem("qubic.name");
    location.reload();
  },
  playAI: (c) => send("play_ai", { level: c.level, variant: c.variant, colour: c.colour, clock: clockOf(c, true) }),
  quick: (c) => {
    if (send("quick", { variant: c.variant, clock: clockOf(c) }) !== null) {
      app.queued = `${c.variant} ${c.clock}`;
    }
  },
  cancelQuick: () => { send("cancel_quick"); app.queued = null; render(); },
  seek: (c) => send("seek", { variant: c.variant, clock: clockOf(c), rated: c.rated, colour: c.colour }),
  cancelSeek: () => {
    if (app.mySeek) send("cancel_seek", { seek: app.mySeek });
    app.mySeek = null;
    render();
  },
  acceptSeek: (id) => send("accept_seek", { seek: id }),
  challenge: (name, c) => send("challenge", { name, variant: c.variant, clock: clockOf(c), rated: c.rated, colour: c.colour }),
  answerChallenge: (id, accept) => {
    send(accept ? "challenge_accept" : "challenge_decline", { challenge: id });
    app.challenges.delete(id);
    render();
  },
  cancelChallenge: (id) => {
    send("challenge_cancel", { challenge: id });
    app.outgoing.delete(id);
    render();
  },
  privateCreate: (c) => send("private_create", { variant: c.variant, clock: clockOf(c), rated: c.rated, colour: c.colour }),
  privateCancel: () => { send("private_cancel"); app.privateRoom = null; render(); },
  privateJoin: (code) => {
    if (!/^[A-Za-z0-9_-]{4,32}$/.test(code)) say("A room code is 4-32 letters, digits, _ or -.");
    else send("private_join", { code });
  },
  watch: (id) => {
    const model = app.games.get(id);
    send("watch", model ? { game: id, since: model.version } : { game: id });
    if (model) act.open(id); // known here: caught up at once, shown now
    else app.opening = id;
  },
  open: (id) => { app.current = id; show("game"); },
  move: (cell) => {
    const model = app.games.get(app.current);
    app.pendingMove = send("move", { game: model.id, cell, ply: model.ply });
    gameView.render();
  },
  game: (t) => send(t, { game: app.current }),
  chat: (text) => send("chat", { game: app.current, text }) !== null,
  toLobby: () => {
    const model = app.games.get(app.current);
    if (model && (model.you === null || model.over)) {
      send("unwatch", { game: model.id });
      app.games.delete(model.id);
    }
    app.current = null;
    show("lobby");
  },
  // reports and moderation (moderation.js; docs/admin.md)
  chatTools: (line, game) => chatTools(line, game, app.me, act),
  report: (name, reason, game) => {
    const id = send("report", { name, reason, game });
    if (id === null) return;
    say(`Reporting ${name}…`);  // said done on the ack: a report may be refused
    app.onAck.set(id, () => say(`${name} is reported to the moderators.`));
  },
  removeChat: (game, line) => send("remove_chat", { game, line }),
  moderate: (t, name, fields = {}) => {
    if (send(t, { name, ...fields }) !== null) say(`${t}: ${name} (it takes a moment).`);
  },
  reports: () => send("reports"),
  resolveReport: (report) => {
    send("resolve_report", { report });
    app.reports = app.reports.filter((r) => r.id !== report);
    render();
  },
  review: (id) => { location.hash = `review=${id}`; }, // any page may link #review=ID too
  analyse: (variant, cells) => {
    analysisView.load(variant, cells);
    show("analysis");
  },
  leave: () => {
    history.replaceState(null, "", location.pathname);
    if (app.me) act.toLobby();
    else show("connect");
  },
  copy: (text) => {
    navigator.clipboard?.writeText(text).then(() => say("Link copied."), () => say("Copy the link by hand."));
  },
};

// -- the link --------------------------------------------------------------------------------

function onLinkEvent(event) {
  const net = $("#net");
  switch (event.type) {
    case "connecting":
      net.textContent = event.attempt > 1 ? `Reconnecting (try ${event.attempt})…` : "Connecting…";
      net.className = "connecting";
      break;
    case "dropped":
      net.textContent = `Connection lost: retrying in ${Math.ceil(event.retryIn / 1000)} s`;
      net.className = "down";
      app.pendingMove = null;
      break;
    case "refused": // no session any more (logged out elsewhere, a name taken): nobody shown
      net.textContent = "Not connected";
      net.className = "down";
      app.me = null;
      $("#who").replaceChildren();
      $("#connect-error").textContent = refusal(event);
      if (event.code === "name_taken") openLogin();
      show("connect");
      break;
    case "connected":
      connected(event.welcome, event.reconnected);
      break;
    case "message":
      received(event.message);
      break;
  }
}

// The host's word to every player: a banner under the header until it is dismissed (a
// restart's counts down), and a toast.
function announce(message) {
  const banner = $("#announce");
  const until = message.restart_in ? Date.now() + message.restart_in * 1000 : null;
  const text = $("#announce-text");
  const show = () => {
    const left = until === null ? null : Math.max(0, Math.ceil((until - Date.now()) / 1000));
    text.textContent = left === null ? message.text : `${message.text} (${left} s)`;
    if (left !== null && left > 0) setTimeout(show, 1000);
  };
  show();
  banner.hidden = false;
  say(message.text);
}

// A refused hello in words for a person (the server's own text is for programs and logs).
function refusal(event) {
  const name = link.name ? `“${link.name}”` : "That name";
  const words = accountRefusal(event.code);
  if (words) return words;
  switch (event.code) {
    case "bad_name": return nameProblem(link.name || "") || `${name} cannot be used: choose another.`;
    case "name_taken": return `${name} is taken. Choose another name, play from the device that has it, or log in with its password (opened above).`;
    case "bad_token": return "This device's key for that name is no longer valid: choose a name to play.";
    case "too_many_players": return "Too many new players from your address just now: try again later.";
    case "too_many_connections": return "Too many connections from your address: close a tab and try again.";
    default: return sentence(event.message);
  }
}

// Why `name` cannot be a player's name, or null if it can.
function nameProblem(name) {
  if (name.length === 0) return "Type a name to play.";
  if (name.length > 24) return `A name has at most 24 characters; this one has ${name.length}.`;
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return "A name is letters, digits, _ and - only (no spaces).";
  return null;
}

// A message as a sentence: a capital first and a full stop at the end.
function sentence(text) {
  const trimmed = String(text || "").trim();
  if (!trimmed) return "";
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?…:]$/.test(capital) ? capital : `${capital}.`;
}

// The connect screen's login, opened, its password field focused (the name is kept).
function openLogin() {
  $("#login").open = true;
  $("#login-password").focus();
}

// Nobody yet (a shared link opened first): the connect screen asks the name, saying why;
// once welcomed, the player goes on to `then`.
function askName(why, then = null) {
  app.after = then;
  show("connect");
  $("#connect-error").textContent = why;
  $("#name").focus();
}

function showWho() {
  $("#who").replaceChildren(h("span", { class: "name" }, app.me.name), ` · ${app.me.rating}`);
}

function connected(welcome, reconnected) {
  app.me = welcome;
  if (reconnected) { // a challenge does not outlive its sender's or receiver's connection
    app.challenges.clear();
    app.outgoing.clear();
  }
  const net = $("#net");
  net.textContent = "Online";
  net.className = "up";
  showWho();
  send("lobby_sub");
  if (reconnected) send("tournaments"); // else on showing the lobby
  for (const id of followed) send("tournament_sub", subscription(id));
  fetchLeaderboard();
  // Catch up on the games open here, then open the unfinished ones the server lists.
  for (const model of app.games.values()) model.asked = send("watch", model.reconnected());
  for (const id of welcome.games) if (!app.games.has(id)) send("watch", { game: id });
  if (!reconnected && app.screen !== "review" && app.screen !== "analysis") route(welcome);
  if (isModerator(welcome)) send("reports");
  const after = app.after;
  app.after = null;
  if (app.screen === "connect" && after) after();
  else if (app.screen === "connect") show("lobby");
}

// What the address asks for: a private room's link (#join=CODE) or a game (#game=ID), when
// the session opens and whenever the address changes (a link opened in this tab).
function route(welcome, changed = false) {
  const hash = new URLSearchParams(location.hash.slice(1));
  const code = hash.get("join");
  const player = hash.get("player");
  const tournament = hash.get("tournament");
  const game = hash.get("game") || (changed || player || tournament ? null : welcome.games[0]);
  if (changed && game && game === app.current && app.screen === "game") return;
  if (code) {
    history.replaceState(null, "", location.pathname);
    act.privateJoin(code);
  } else if (tournament) {
    if (!(app.screen === "tournament" && tournamentView.id === tournament)) act.tournament(tournament);
  } else if (player) {
    if (!(app.screen === "player" && playerView.name === player)) act.player(player);
  } else if (game) {
    app.opening = game;
    if (changed && app.games.has(game)) act.open(game);
    else if (changed || !welcome.games.includes(game)) send("watch", { game });
  }
}

function received(message) {
  const now = performance.now();
  if (message.ref !== undefined && message.ref !== null) {
    if (message.ref === app.pendingMove) app.pendingMove = null;
    app.requests.delete(message.ref);
    const done = app.onAck.get(message.ref);
    app.onAck.delete(message.ref);
    if (message.t === "ack") {
      caughtUp(message.ref);
      if (done) done();
    }
  }
  switch (message.t) {
    case "lobby":
      app.lobby.seeks = new Map(message.seeks.map((s) => [s.id, s]));
      app.lobby.games = new Map(message.games.map((g) => [g.id, g]));
      app.lobby.online = message.online;
      app.lobby.players = message.players;
      break;
    case "lobby_delta":
      for (const id of message.seeks_removed) {
        app.lobby.seeks.delete(id);
        if (id === app.mySeek) app.mySeek = null;
      }
      for (const s of message.seeks_added) app.lobby.seeks.set(s.id, s);
      for (const id of message.games_removed) app.lobby.games.delete(id);
      for (const g of message.games_added) app.lobby.games.set(g.id, g);
      if (message.online !== null) app.lobby.online = message.online;
      if (message.players !== null) app.lobby.players = message.players;
      break;
    case "seeking":
      app.mySeek = message.seek.id;
      break;
    case "queued":
      break;
    case "private":
      app.privateRoom = message;
      break;
    case "announce":
      announce(message);
      break;
    case "challenge_sent":
      app.outgoing.set(message.challenge.id, message.challenge);
      say(`Challenge sent to ${message.challenge.to}: the game starts if they accept.`);
      break;
    case "challenge": { // answered where the player is: the bar under the header (renderChallenges)
      const c = message.challenge;
      app.challenges.set(c.id, c);
      callBack(`Challenge from ${c.by}`);
      break;
    }
    case "challenge_gone": {
      const gone = app.challenges.get(message.challenge);
      const mine = app.outgoing.get(message.challenge);
      app.challenges.delete(message.challenge);
      app.outgoing.delete(message.challenge);
      if (gone) {
        say(message.reason === "offline" ? `${gone.by} left: their challenge is gone.`
          : `${gone.by} withdrew their challenge.`);
      } else if (mine) {
        say(message.reason === "declined" ? `${mine.to} declined your challenge.`
          : `${mine.to} left: your challenge is withdrawn.`);
      }
      break;
    }
    case "game":
      gameState(message, now);
      return;
    case "player_games":
      playerView.received(message);
      return;
    case "tournaments":
      app.tournaments = new Map(message.tournaments.map((t) => [t.id, t]));
      break;
    case "tournament":
      tournamentState(message);
      break;
    case "password_set":
    case "devices":
      accountView.received(message);
      return;
    case "puzzle":
    case "puzzle_result":
    case "puzzle_history":
      puzzleView.received(message);
      return;
    case "error":
      failed(message);
      break;
    case "reports":
      app.reports = message.reports;
      break;
    default:
      if (VERSIONED.has(message.t) || UNVERSIONED.has(message.t)) {
        gameEvent(message, now);
        return;
      }
      return;
  }
  render();
}

// A tournament's state (a reply to tournament_sub or tournament_create, or an update): kept,
// its line in the list brought up to date, and its page opened for the one who created it.
function tournamentState(state) {
  app.tournamentStates.set(state.info.id, state);
  app.tournaments.set(state.info.id, state.info);
  followed.add(state.info.id);
  if (app.creating !== null && state.ref === app.creating) {
    app.creating = null;
    act.tournament(state.info.id);
  }
}

// The tournaments whose updates this tab has asked for (tournament_sub), asked again after a
// reconnection; one left that this player is not in is given up (tournament_unsub).
const followed = new Set();
const tournamentPages = new Map(); // id -> the page of the standings asked for, if not one's own

// A tournament_sub's fields: the page asked for, else none (the server's: one's own line's).
function subscription(id) {
  const page = tournamentPages.get(id);
  return page === undefined ? { tournament: id } : { tournament: id, page };
}

function unfollow(id) {
  if (id === null || !followed.has(id) || tournamentView.joined(app.tournamentStates.get(id))) return;
  followed.delete(id);
  tournamentPages.delete(id);
  app.tournamentStates.delete(id);
  send("tournament_unsub", { tournament: id });
}

function gameState(state, now) {
  const known = app.games.get(state.id);
  const model = new GameModel(state, now);
  if (known) model.viewPly = known.viewPly !== null && known.viewPly <= model.ply ? known.viewPly : null;
  app.games.set(state.id, model);
  // A game this player starts (or a rematch) takes the screen, as does one asked for.
  const starting = state.you !== null && state.status === "playing" && !known;
  // a game this tab did not just ask for: a seek accepted, a pairing, a friend in the room
  if (starting && (state.ref === null || state.ref === undefined) && !model.againstComputer) {
    callBack("Game started");
  }
  if (starting || app.opening === state.id || app.current === null) {
    if (starting) {
      const names = new Set(model.seats.map((s) => s.name.toLowerCase()));
      for (const [id, c] of app.outgoing) if (names.has(c.to.toLowerCase())) app.outgoing.delete(id);
      for (const [id, c] of app.challenges) if (names.has(c.by.toLowerCase())) app.challenges.delete(id);
      app.mySeek = null;
      app.queued = null;
      app.privateRoom = null;
    }
    app.opening = null;
    app.current = state.id;
    show("game");
  }
  render();
}

function gameEvent(event, now) {
  const model = app.games.get(event.game);
  if (!model) return;
  const result = model.apply(event, now);
  if (result === GAP) resync(model);
  if (result === CHANGED && event.t === "move" && model.you !== null && event.side !== model.you) {
    callBack("Your move");
  }
  if (result === CHANGED && event.t === "rematched" && model.you === null && model.id === app.current) {
    act.watch(event.rematch); // a spectator follows the players to their rematch
  }
  if (result === CHANGED && event.t === "offer" && model.you !== null && event.by !== model.you) {
    const them = model.seat(event.by).name;
    if (event.kind === "draw_declined") say(`${them} declined your draw offer.`);
    else if (event.kind === "draw") say(`${them} offers a draw.`);
    else if (event.kind === "rematch") say(`${them} offers a rematch.`);
  }
  if (event.t === "end") fetchLeaderboard();
  if (result === CHANGED && event.t === "end" && event.rating_change) {
    if (model.you !== null) refreshRating(); // the header shows the new rating as the server rounds it
    ratingsAfter(model);
  }
  if (result === CHANGED && model.id === app.current) gameView.render();
  if (result === CHANGED && event.t === "end" && model.you !== null) lobbyView.render();
}

// The versioning rule with a bound (game.js): one watch at a time for a game, and after two
// catch-ups that leave a gap open the full game; one server event sends at most one frame.
function resync(model) {
  const fields = model.resync();
  if (fields) model.asked = send("watch", fields);
}

// An ack: if it ends a game's catch-up that left the gap open, ask again (resync()'s rule).
function caughtUp(ref) {
  for (const model of app.games.values()) {
    if (model.asked !== ref) continue;
    const fields = model.caughtUp(ref);
    if (fields) model.asked = send("watch", fields);
    return;
  }
}

function failed(error) {
  say(accountRefusal(error.code) || sentence(error.message));
  if (app.screen === "puzzles") puzzleView.failed();
  if (error.ref !== undefined && error.ref !== null) {
    for (const model of app.games.values()) model.refused(error.ref);
  }
  if (error.code === "stale_move" && app.current) {
    const model = app.games.get(app.current);
    if (model) resync(model);
  }
  if (error.code === "not_queued") app.queued = null;
  if (error.code === "no_such_game" && app.opening) app.opening = null;
  if (error.code === "kicked" || error.code === "banned") { // the server closes: stay away
    link.close();
    $("#connect-error").textContent = sentence(error.message);
    show("connect");
  }
}

// The player's rating from the server (as /api/players and the leaderboard round it): adding
// a rounded change to a rounded rating can be one off.
async function refreshRating() {
  try {
    const response = await fetch(`/api/players/${encodeURIComponent(app.me.name)}`);
    if (!response.ok) return;
    app.me.rating = (await response.json()).rating;
    showWho();
  } catch {
    // the header keeps the last one
  }
}

// Both players' ratings after a rated game, for their cards.
async function ratingsAfter(model) {
  const after = {};
  for (const side of ["x", "o"]) {
    const seat = model.seat(side);
    if (seat.ai !== null) continue;
    try {
      const response = await fetch(`/api/players/${encodeURIComponent(seat.name)}`);
      if (response.ok) after[side] = (await response.json()).rating;
    } catch {
      // the card keeps the rating before the game
    }
  }
  model.ratingsAfter = after;
  if (model.id === app.current) gameView.render();
}

async function fetchLeaderboard() {
  try {
    const response = await fetch("/api/leaderboard?limit=10");
    if (!response.ok) return;
    const data = await response.json();
    app.leaderboard = (data.players || []).map((p) => ({ name: String(p.name), rating: p.rating, bot: p.bot === true }));
    lobbyView.render();
  } catch {
    // the lobby shows the last one
  }
}

// -- screens ---------------------------------------------------------------------------------

let lobbyView;
let gameView;
let moderationView;
let playerView;
let reviewView;
let analysisView;
let accountView;
let puzzleView;
let tournamentList;
let tournamentView;

let shown = null; // the screen (and game) last shown: a new one opens at the top of the page

function show(screen) {
  if (app.screen === "tournament" && screen !== "tournament") unfollow(tournamentView.id);
  if (screen === "lobby" && app.screen !== "lobby" && link.connected) send("tournaments");
  if (app.screen === "account" && screen !== "account") accountView.left();
  else if (screen === "account" && app.screen !== "account") accountView.opened();
  app.screen = screen;
  const now = screen === "game" ? `game ${app.current}` : screen;
  if (now !== shown) window.scrollTo(0, 0);
  shown = now;
  for (const id of ["connect", "lobby", "game", "rules", "player", "tournament", "review", "analysis", "account", "puzzles"]) $(`#${id}`).hidden = id !== screen;
  const model = app.games.get(app.current);
  if (screen === "game" && model) history.replaceState(null, "", `${location.pathname}#game=${model.id}`);
  else if (screen === "player") history.replaceState(null, "", `${location.pathname}#player=${encodeURIComponent(playerView.name)}`);
  else if (screen === "tournament") history.replaceState(null, "", `${location.pathname}#tournament=${encodeURIComponent(tournamentView.id)}`);
  // a link is kept through the name asked for first (the connect screen)
  else if (screen !== "connect" && /^#(game|player|tournament)=/.test(location.hash)) history.replaceState(null, "", location.pathname);
  // the review's and the analysis board's address is theirs only: left with them
  else if (screen !== "review" && screen !== "analysis" && /^#(review|analysis)=/.test(location.hash)) {
    history.replaceState(null, "", location.pathname);
  }
  document.body.dataset.screen = screen;
  render();
}

// The challenges to answer and those waiting for an answer: a bar under the header, on every
// screen, so that a player answers where they are. Built again only when they change
// (`refill`: every message renders, and a bar built anew would drop a press and the focus).
function renderChallenges() {
  const bar = $("#challenge-bar");
  const shown = JSON.stringify([[...app.challenges.values()], [...app.outgoing.values()]]);
  refill(bar, shown, challengeRows);
  bar.hidden = bar.childElementCount === 0;
}

function challengeRows() {
  const rows = [];
  for (const c of app.challenges.values()) {
    rows.push(h("li", { dataset: { challenge: c.id } },
      h("span", { class: "what" }, h("span", { class: "name" }, c.by),
        ` challenges you · ${c.variant} · ${formatClockSpec(c.clock)} · ${c.rated ? "rated" : "casual"}`,
        c.colour === "random" ? "" : ` · you play ${c.colour === "x" ? "O" : "X"}`),
      h("span", { class: "answer" },
        h("button", { type: "button", class: "accept primary", onclick: () => act.answerChallenge(c.id, true) }, "Accept"),
        h("button", { type: "button", class: "decline", onclick: () => act.answerChallenge(c.id, false) }, "Decline"))));
  }
  for (const c of app.outgoing.values()) {
    rows.push(h("li", { dataset: { outgoing: c.id } },
      h("span", { class: "what" }, "Waiting for ", h("span", { class: "name" }, c.to),
        ` to answer your challenge (${c.variant} · ${formatClockSpec(c.clock)})…`),
      h("span", { class: "answer" },
        h("button", { type: "button", class: "cancel", onclick: () => act.cancelChallenge(c.id) }, "Cancel"))));
  }
  return rows;
}

function render() {
  renderChallenges();
  if (app.screen === "lobby") { lobbyView.render(); tournamentList.render(); }
  if (app.screen === "tournament") tournamentView.render();
  if (app.screen === "game") gameView.render();
  if (app.screen === "account") accountView.render();
  moderationView.render();
  if (app.screen === "puzzles") puzzleView.render();
}

function keys(event) {
  if (app.screen === "review") return reviewView.key(event);
  if (app.screen === "analysis") return analysisView.key(event);
  if (app.screen !== "game" || event.target.closest("input, textarea, select")) return;
  const moves = { ArrowLeft: () => gameView.step(-1), ArrowRight: () => gameView.step(1),
    Home: () => gameView.stepTo(0), End: () => gameView.stepTo(Infinity),
    v: () => gameView.setMode(gameView.mode === "levels" ? "cube" : "levels") };
  if (event.target.closest(".cell, canvas") && event.key.startsWith("Arrow")) return;
  const fn = moves[event.key];
  if (fn) {
    event.preventDefault();
    fn();
  } else if (/^[1-9a-i]$/i.test(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey) {
    gameView.cellInput.focus(); // typing a cell anywhere starts the move box
  }
}

// -- calling the player back ------------------------------------------------------------------
// When the opponent moves, a game starts that this tab did not just ask for, or a challenge
// comes: the tab's title counts them while the page is hidden or the window has lost the focus
// ("(1) Your move — Qubic"), and a short sound plays if the player turned it on (off at first:
// browsers refuse to play sound before a click on the page, and the switch is that click).

const attention = {
  away: typeof document.hasFocus === "function" && !document.hasFocus(),
  unseen: 0,
  sound: localStorage.getItem("qubic.sound") === "on",
  audio: null,
  played: 0, // sounds played, for the tests
};

function callBack(what) {
  if (attention.sound) beep();
  if (!document.hidden && !attention.away) return;
  attention.unseen += 1;
  document.title = `(${attention.unseen}) ${what} — Qubic`;
}

function backAgain() {
  attention.away = false;
  attention.unseen = 0;
  document.title = "Qubic";
}

function beep() {
  try {
    attention.audio = attention.audio || new AudioContext();
    const audio = attention.audio;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.12, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.2);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.2);
    attention.played += 1;
  } catch {
    // no sound here (no Web Audio): the title still says it
  }
}

function soundSwitch() {
  const box = $("#sound");
  box.checked = attention.sound;
  box.addEventListener("change", () => {
    attention.sound = box.checked;
    localStorage.setItem("qubic.sound", attention.sound ? "on" : "off");
    if (attention.sound) beep(); // this click lets the page play sound from now on
  });
  window.addEventListener("blur", () => { attention.away = true; });
  window.addEventListener("focus", backAgain);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) backAgain(); });
}

const THEMES = ["system", "light", "dark"];

// The colour theme: the system's, or one chosen with the header's switch (kept here).
function applyTheme(theme) {
  if (theme === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  $("#theme").replaceChildren(h("span", { class: "long" }, "Theme: "), theme);
}

function themeSwitch() {
  let theme = localStorage.getItem("qubic.theme");
  if (!THEMES.includes(theme)) theme = "system";
  applyTheme(theme);
  $("#theme").addEventListener("click", () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    localStorage.setItem("qubic.theme", theme);
    applyTheme(theme);
  });
}

// The rules: a screen of their own, and back to where the player was.
function rulesScreen() {
  let back = "connect";
  $("#rules-link").addEventListener("click", (e) => {
    e.preventDefault();
    if (app.screen !== "rules") back = app.screen;
    show("rules");
  });
  $("#rules-back").addEventListener("click", () => show(back));
}

// A review (#review=GAMEID) or the analysis board (#analysis=1a1+2b2[&variant=3x3x3]) asked
// for by the address: shown at once, with or without a session; false for anything else.
function study() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has("review")) {
    if (reviewView.gameId !== hash.get("review") || app.screen !== "review") reviewView.load(hash.get("review"));
    show("review");
    return true;
  }
  if (hash.has("analysis")) {
    const cells = analysisView.parse(hash.get("analysis") || "", hash.get("variant") || "4x4x4");
    if (app.screen !== "analysis" || analysisView.link() !== location.hash) {
      analysisView.load(hash.get("variant") || "4x4x4", cells || []);
    }
    show("analysis");
    return true;
  }
  return false;
}

function start() {
  themeSwitch();
  rulesScreen();
  $("#announce-close").addEventListener("click", () => { $("#announce").hidden = true; });
  lobbyView = new LobbyView($("#lobby"), app, act);
  tournamentList = new TournamentList(lobbyView.tournaments, app, act);
  tournamentView = new TournamentView($("#tournament"), app, act);
  gameView = new GameView($("#game"), app, act);
  moderationView = new ModerationView($("#moderation"), app, act);
  playerView = new PlayerView($("#player"), app, act);
  reviewView = new ReviewView($("#review"), act);
  analysisView = new AnalysisView($("#analysis"), act);
  puzzleView = new PuzzleView($("#puzzles"), { send, say });
  $("#puzzles-link").addEventListener("click", (e) => {
    e.preventDefault();
    const open = () => { show("puzzles"); puzzleView.opened(); };
    if (!app.me) askName("Say your name first: puzzles keep your puzzle rating.", open);
    else open();
  });
  accountView = new AccountView($("#account"), app, act);
  mountLogin($("#connect"), nameProblem, (t, fields) => link.startWith(t, fields));
  $("#account-link").addEventListener("click", (e) => {
    e.preventDefault();
    if (app.me) show("account");
    else { // no name yet: the first screen, its login opened
      askName("Choose a name to play, or log in to the one your password protects.", () => show("account"));
      openLogin();
    }
  });
  soundSwitch(); // its switch is in the lobby
  setInterval(() => { if (app.screen === "game") gameView.tick(); }, 100);
  setInterval(() => { if (app.screen === "tournament") tournamentView.tick(); }, 1000);
  // the list's starts and player counts: asked again while the lobby is shown
  setInterval(() => { if (app.screen === "lobby" && link.connected) send("tournaments"); }, 30000);
  document.addEventListener("keydown", keys);
  $("#home").addEventListener("click", (e) => {
    e.preventDefault();
    history.replaceState(null, "", location.pathname); // #analysis=…, #review=… are left
    if (app.me) act.toLobby();
    else askName("");
  });
  $("#connect-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("#name").value.trim();
    const problem = nameProblem(name);
    $("#connect-error").textContent = problem || "";
    if (problem) return;
    link.start(name); // with the token kept for this name, if this device has played it
  });
  window.addEventListener("hashchange", () => {
    if (!study()) if (app.me && link.connected) route(app.me, true);
  });
  window.addEventListener("online", () => link.retryNow());
  window.qubic = { app, link, attention }; // for the tests and the curious
  const studying = study(); // a review or the analysis board needs no session
  if (savedToken()) {
    link.start(savedName());
  } else {
    $("#net").textContent = ""; // nothing has been tried yet: nothing to report
    if (!studying) {
      show("connect");
      $("#name").value = savedName() || "";
      $("#name").focus();
    }
  }
}

start();
