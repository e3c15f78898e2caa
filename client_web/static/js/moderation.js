// Moderation in the web client (docs/admin.md). Every player may report another from one of
// their chat lines (the line itself is the report's reason). Moderators and admins (the
// welcome's `roles`) also get, on each line, its removal and a mute of its speaker, and under
// the lobby a panel: the open reports with what to do about each, and a form to mute, kick or
// ban a player by name. The server refuses all of it to anyone else (`not_moderator`).

import { fill, h } from "./dom.js";

export function isModerator(me) {
  return Boolean(me) && (me.roles || []).some((role) => role === "moderator" || role === "admin");
}

// What a report made from a chat line says: the line, quoted, within the protocol's 300.
export function reportReason(line) {
  const quoted = `said in the chat: "${line.text}"`;
  return quoted.length <= 300 ? quoted : `${quoted.slice(0, 298)}…"`;
}

// The buttons after one chat line of `game`, for the player `me`.
export function chatTools(line, game, me, act) {
  if (!me || line.name === me.name) return [];
  const tool = (kind, label, text, onclick) => h("button", { type: "button",
    class: `chat-tool ${kind}`, title: label, "aria-label": label, onclick }, text);
  const tools = [tool("report", `Report ${line.name} to the moderators`, "⚑",
    () => act.report(line.name, reportReason(line), game))];
  if (isModerator(me)) {
    tools.push(
      tool("remove", "Remove this line for everyone", "✕", () => act.removeChat(game, line.line)),
      tool("mute", `Mute ${line.name} for an hour`, "mute",
        () => act.moderate("mute", line.name, { minutes: 60, reason: reportReason(line) })));
  }
  return tools;
}

// The moderators' panel under the lobby: the reports' queue and a form to act on a name.
export class ModerationView {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.name = h("input", { name: "target", maxlength: 24, autocomplete: "off",
      placeholder: "name", "aria-label": "Player's name" });
    this.reason = h("input", { name: "reason", maxlength: 300, autocomplete: "off",
      placeholder: "reason (a ban needs one)", "aria-label": "Reason" });
    this.minutes = h("input", { name: "minutes", type: "number", min: 1, placeholder: "minutes",
      "aria-label": "For how many minutes (empty: until lifted)" });
    const button = (t, label) => h("button", { type: "button", class: `mod-${t}`,
      onclick: () => this.fromForm(t) }, label);
    this.queue = h("tbody");
    fill(root,
      h("h2", {}, "Moderation"),
      h("form", { class: "moderate", onsubmit: (e) => e.preventDefault() },
        this.name, this.reason, this.minutes,
        button("mute", "Mute"), button("unmute", "Unmute"), button("kick", "Kick"),
        button("ban", "Ban"), button("unban", "Unban")),
      h("h3", {}, "Reports ",
        h("button", { type: "button", class: "mod-refresh", onclick: () => act.reports() },
          "Refresh")),
      h("table", { class: "reports" },
        h("thead", {}, h("tr", {}, ["When", "By", "About", "Game", "Reason", ""]
          .map((title) => h("th", {}, title)))),
        this.queue));
  }

  fromForm(t) {
    const name = this.name.value.trim();
    if (!name) {
      this.act.say("Type the player's name first.");
      return;
    }
    const minutes = parseInt(this.minutes.value, 10);
    const fields = { reason: this.reason.value.trim() };
    if ((t === "mute" || t === "ban") && minutes > 0) fields.minutes = minutes;
    this.act.moderate(t, name, fields);
  }

  render() {
    const shown = isModerator(this.app.me) && this.app.screen === "lobby";
    this.root.hidden = !shown;
    if (!shown) return;
    const act = this.act;
    fill(this.queue, (this.app.reports || []).map((r) => h("tr", { "data-report": r.id },
      h("td", {}, new Date(r.at * 1000).toLocaleString()),
      h("td", {}, r.by), h("td", { class: "about" }, r.name),
      h("td", {}, r.game ? h("a", { href: `#game=${r.game}` }, "open") : ""),
      h("td", { class: "reason" }, r.reason),
      h("td", {},
        h("button", { type: "button", class: "mod-mute",
          onclick: () => act.moderate("mute", r.name, { minutes: 60, reason: r.reason }) }, "Mute 1 h"),
        h("button", { type: "button", class: "mod-kick",
          onclick: () => act.moderate("kick", r.name, { reason: r.reason }) }, "Kick"),
        h("button", { type: "button", class: "mod-ban",
          onclick: () => act.moderate("ban", r.name, { reason: r.reason }) }, "Ban"),
        h("button", { type: "button", class: "mod-resolve",
          onclick: () => act.resolveReport(r.id) }, "Done")))));
  }
}
