// The websocket session, kept up across drops: connect, hello (with the token kept in the
// browser's storage for each name played here, so the same player comes back and no token is
// ever thrown away by playing under another name), read, send, and reconnect with
// exponential backoff. Like lichess's StrongSocket it also pings to find a dead link.
// Catching up on games is the app's part (watch{since} on "connected").

import { parseServer, request } from "./protocol.js";

const TOKEN_KEY = "qubic.token"; // before 0.2.0: the one token kept (read once, then moved)
const TOKENS_KEY = "qubic.tokens"; // {folded name: {name, token}}
const NAME_KEY = "qubic.name"; // the name last played here
const PING_EVERY = 20000;
const PONG_WITHIN = 10000;

export class Backoff {
  constructor(first = 500, most = 10000, jitter = 0.2) {
    Object.assign(this, { first, most, jitter });
  }

  delay(attempt) {
    const base = Math.min(this.most, this.first * 2 ** Math.max(0, attempt - 1));
    return base * (1 - this.jitter * Math.random());
  }
}

const fold = (name) => name.toLowerCase();

function tokens() {
  let kept = {};
  try {
    kept = JSON.parse(localStorage.getItem(TOKENS_KEY) || "{}") || {};
  } catch {
    kept = {};
  }
  const old = localStorage.getItem(TOKEN_KEY);
  const oldName = localStorage.getItem(NAME_KEY);
  if (old && oldName) { // the single token of an older client: keep it under its name
    kept[fold(oldName)] = { name: oldName, token: old };
    localStorage.setItem(TOKENS_KEY, JSON.stringify(kept));
    localStorage.removeItem(TOKEN_KEY);
  }
  return kept;
}

export const savedName = () => localStorage.getItem(NAME_KEY);
// The token kept for `name` (default: the name last played here), or null.
export const savedToken = (name = savedName()) => (name ? tokens()[fold(name)]?.token ?? null : null);

export function keepToken(name, token) {
  const kept = tokens();
  kept[fold(name)] = { name, token };
  localStorage.setItem(TOKENS_KEY, JSON.stringify(kept));
  localStorage.setItem(NAME_KEY, name);
}

// Forget the token of `name` only: the server refused it (bad_token, token_revoked).
export function forgetToken(name) {
  const kept = tokens();
  delete kept[fold(name)];
  localStorage.setItem(TOKENS_KEY, JSON.stringify(kept));
}

// The websocket URL of the server that served this page.
export function serverUrl(loc = window.location) {
  return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}/ws`;
}

export class Link {
  // `onEvent` hears {type: "connecting" | "connected" | "message" | "dropped" | "refused"}.
  constructor(url, onEvent, backoff = new Backoff()) {
    this.url = url;
    this.onEvent = onEvent;
    this.backoff = backoff;
    this.ws = null;
    this.welcomed = false;
    this.everWelcomed = false;
    this.failures = 0;
    this.nextId = 0;
    this.name = null;
    this.closed = false;
    this.timers = {};
    this.opening = null; // a login or recover to open the next session with, instead of hello
  }

  get connected() { return this.ws !== null && this.welcomed; }

  // Open the session with a password (`login`) or a recovery code (`recover`): the welcome's
  // new token is kept for the name as any other, and reconnections use it.
  startWith(t, fields) {
    this.opening = { t, fields };
    this.start(fields.name);
  }

  // Open the session as `name` (a new player) or with the saved token.
  start(name = null) {
    this.name = name;
    this.closed = false;
    this.connect();
  }

  connect() {
    clearTimeout(this.timers.retry);
    this.onEvent({ type: "connecting", attempt: this.failures + 1 });
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.welcomed = false;
    ws.onopen = () => {
      if (this.opening) {
        ws.send(JSON.stringify(request(this.opening.t, { ...this.opening.fields, id: "hello" })));
        return;
      }
      const token = this.name ? savedToken(this.name) : savedToken();
      const hello = token ? { token } : { name: this.name };
      ws.send(JSON.stringify(request("hello", { ...hello, id: "hello" })));
    };
    ws.onmessage = (frame) => this.received(ws, frame.data);
    ws.onclose = () => this.lost(ws);
    ws.onerror = () => {}; // a close follows
  }

  received(ws, data) {
    if (ws !== this.ws) return;
    const message = parseServer(data);
    if (message === null) return; // a message from a newer server: ignore it
    if (!this.welcomed) {
      if (message.t === "welcome") {
        this.opening = null;
        keepToken(message.name, message.token);
        this.name = message.name;
        this.welcomed = true;
        const reconnected = this.everWelcomed;
        this.everWelcomed = true;
        this.failures = 0;
        this.schedulePing();
        this.onEvent({ type: "connected", welcome: message, reconnected });
      } else if (message.t === "error" && message.ref === "hello") {
        // A token the server refuses opens nothing any more (logged out, or unknown): only
        // that name's is forgotten.
        const dead = message.code === "bad_token" || message.code === "token_revoked";
        if (dead && this.name && !this.opening) forgetToken(this.name);
        this.opening = null;
        this.closed = true;
        ws.close();
        this.onEvent({ type: "refused", code: message.code, message: message.message });
      }
      return;
    }
    if (message.t === "pong") clearTimeout(this.timers.pong);
    this.onEvent({ type: "message", message });
  }

  lost(ws) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.welcomed = false;
    clearTimeout(this.timers.ping);
    clearTimeout(this.timers.pong);
    if (this.closed) return;
    this.failures += 1;
    const wait = this.backoff.delay(this.failures);
    this.onEvent({ type: "dropped", retryIn: wait, attempt: this.failures });
    this.timers.retry = setTimeout(() => this.connect(), wait);
  }

  schedulePing() {
    clearTimeout(this.timers.ping);
    this.timers.ping = setTimeout(() => {
      if (!this.connected) return;
      this.send("ping");
      this.timers.pong = setTimeout(() => this.drop(), PONG_WITHIN);
      this.schedulePing();
    }, PING_EVERY);
  }

  // Send a client message; returns its id, or null while not connected.
  send(t, fields = {}) {
    if (!this.connected) return null;
    this.nextId += 1;
    const id = this.nextId;
    this.ws.send(JSON.stringify(request(t, { ...fields, id })));
    return id;
  }

  // Cut the connection as a network failure would (the link then reconnects).
  drop() {
    if (this.ws) this.ws.close();
  }

  // Retry now instead of waiting out the backoff.
  retryNow() {
    if (this.ws === null && !this.closed) this.connect();
  }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
  }
}
