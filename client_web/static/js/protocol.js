// The wire protocol (docs/protocol.md) as this client speaks it: the client messages it may
// send with their fields, and the fields it reads from each server message. Pure: no DOM, no
// socket. tests/client_web checks both tables against the document's examples and the server.

export const PROTOCOL = 1;

// Client -> server: every field a message may carry ("id" is allowed on all of them).
export const CLIENT_FIELDS = {
  hello: ["name", "token"],
  lobby_sub: [],
  lobby_unsub: [],
  seek: ["variant", "clock", "rated", "colour"],
  cancel_seek: ["seek"],
  accept_seek: ["seek"],
  quick: ["variant", "clock"],
  cancel_quick: [],
  private_create: ["variant", "clock", "rated", "colour"],
  private_join: ["code"],
  private_cancel: [],
  challenge: ["name", "variant", "clock", "rated", "colour"],
  challenge_accept: ["challenge"],
  challenge_decline: ["challenge"],
  challenge_cancel: ["challenge"],
  play_ai: ["level", "variant", "colour", "clock"],
  watch: ["game", "since"],
  unwatch: ["game"],
  move: ["game", "cell", "ply"],
  resign: ["game"],
  draw_offer: ["game"],
  draw_accept: ["game"],
  draw_decline: ["game"],
  abort: ["game"],
  rematch: ["game"],
  claim: ["game"],
  chat: ["game", "text"],
  hint: ["game"],
  takeback: ["game"],
  player_games: ["name", "before", "limit"],
  review: ["game"],
  ping: [],
  set_password: ["password", "current"],
  login: ["name", "password", "device"],
  recover: ["name", "recovery_code", "password", "device"],
  sessions: [],
  revoke: ["device", "others"],
  report: ["name", "reason", "game"],
  reports: [],
  resolve_report: ["report", "reason"],
  remove_chat: ["game", "line", "reason"],
  mute: ["name", "minutes", "reason"],
  unmute: ["name", "reason"],
  kick: ["name", "reason"],
  ban: ["name", "reason", "minutes"],
  unban: ["name", "reason"],
  puzzle_next: [],
  puzzle_daily: [],
  puzzle_streak: ["new"],
  puzzle_attempt: ["puzzle", "moves", "mode"],
  puzzle_history: ["limit"],
  tournaments: [],
  tournament_sub: ["tournament", "page"],
  tournament_unsub: ["tournament"],
  tournament_join: ["tournament"],
  tournament_leave: ["tournament"],
  tournament_create: ["name", "kind", "starts_at", "clock", "minutes", "rounds", "variant", "rated",
    "computer_levels", "round_interval", "round_times"],
};

// Server -> client: the fields this client reads; a message lacking one is dropped.
export const SERVER_FIELDS = {
  welcome: ["name", "token", "rating", "games", "protocol"],
  lobby: ["seeks", "games", "online", "players"],
  lobby_delta: ["seeks_added", "seeks_removed", "games_added", "games_removed", "online",
    "players"],
  seeking: ["seek"],
  queued: ["variant", "clock"],
  private: ["code", "variant", "clock"],
  challenge_sent: ["challenge"],
  announce: ["text"],
  challenge: ["challenge"],
  challenge_gone: ["challenge", "reason"],
  game: ["id", "variant", "clock", "rated", "seats", "moves", "clocks", "status", "version",
    "you", "draw_offer", "rematch", "end", "spectators", "chat"],
  move: ["game", "ply", "cell", "notation", "side", "clocks", "version"],
  end: ["game", "version", "result", "reason", "winner", "line", "clocks", "rating_change"],
  offer: ["game", "kind", "by", "version"],
  presence: ["game", "version", "side", "online", "claim_in"],
  watching: ["game", "count"],
  chat: ["game", "name", "side", "text", "line"],
  takeback: ["game", "ply", "by", "clocks", "version"],
  hint: ["game", "ply", "cell", "notation"],
  pong: [],
  ai_thinking: ["game", "ply"],
  ack: [],
  error: ["code", "message"],
  engine: ["game", "state"],
  password_set: ["recovery_codes", "revoked"],
  devices: ["devices", "revoked"],
  player_games: ["player", "games", "next", "ratings"],
  review: ["review"],
  chat_removed: ["game", "line"],
  reports: ["reports"],
  rematched: ["game", "rematch", "version"],
  puzzle: ["puzzle", "mode", "rating"],
  puzzle_result: ["puzzle", "verdict", "reply", "solution", "rating", "rating_change"],
  puzzle_history: ["attempts", "rating", "best_streak"],
  tournaments: ["tournaments"],
  tournament: ["info", "standings", "games"],
};

// The game events that carry a version and are applied in order.
export const VERSIONED = new Set(["move", "end", "offer", "presence", "takeback", "rematched"]);
// The game events applied whatever the version: the chats (each reaches part of the room) and
// the spectators' count (the newest holds).
export const UNVERSIONED = new Set(["chat", "chat_removed", "ai_thinking", "engine", "watching"]);

export const VARIANTS = ["4x4x4", "3x3x3", "4x4"];
export const LEVELS = [1, 2, 3, 4, 5, 6, 7, 8];

export class ProtocolError extends Error {}

// A client message of type `t`: refuses unknown types and fields, drops undefined ones.
export function request(t, fields = {}) {
  const allowed = CLIENT_FIELDS[t];
  if (!allowed) throw new ProtocolError(`no client message ${t}`);
  const message = { t };
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (key !== "id" && !allowed.includes(key)) {
      throw new ProtocolError(`${t} has no field ${key}`);
    }
    message[key] = value;
  }
  return message;
}

// A server frame as an object, or null for anything this client does not understand (a
// message type from a newer server, or one missing a field it reads).
export function parseServer(text) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return null;
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) return null;
  const needed = SERVER_FIELDS[message.t];
  if (!needed) return null;
  for (const key of needed) if (!(key in message)) return null;
  return message;
}

// A clock spec from "5+3" (minutes + increment seconds); "" or "untimed" is null.
export function parseClock(text) {
  const s = String(text).trim().toLowerCase();
  if (s === "" || s === "-" || s === "untimed" || s === "none") return null;
  const m = /^(\d+(?:\.\d+)?)(?:\+(\d+))?$/.exec(s);
  if (!m) throw new ProtocolError(`${text} is not a clock: write minutes+seconds like 5+3`);
  const initial = Math.round(parseFloat(m[1]) * 60);
  const increment = m[2] ? parseInt(m[2], 10) : 0;
  if (initial > 10800 || increment > 180 || (initial === 0 && increment === 0)) {
    throw new ProtocolError(`${text} is out of bounds (at most 180+180, not 0+0)`);
  }
  return { initial, increment };
}

export function formatClockSpec(spec) {
  if (!spec) return "untimed";
  const minutes = spec.initial / 60;
  const shown = minutes >= 1 || spec.initial === 0 ? `${+minutes.toFixed(2)}` : `${spec.initial}s`;
  return `${shown}+${spec.increment}`;
}

export function formatClock(ms) {
  ms = Math.max(0, ms);
  const seconds = Math.floor(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const two = (v) => String(v).padStart(2, "0");
  if (h) return `${h}:${two(m)}:${two(s)}`;
  if (m === 0 && s < 10) return `0:${two(s)}.${Math.floor((ms % 1000) / 100)}`;
  return `${m}:${two(s)}`;
}
