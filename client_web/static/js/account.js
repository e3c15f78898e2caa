// Accounts: "log in on this device" and "lost your password" on the first screen,
// and an account screen: protect this name with a password (its recovery codes shown once),
// my devices (log one out), log out everywhere else. The session and its tokens stay the
// link's (socket.js): a login's new token is kept for its name beside every other one.

import { $, fill, h } from "./dom.js";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

// What is wrong with a new password for `name`, in words, or null (the server's rule).
export function passwordProblem(password, name) {
  if (password.length < PASSWORD_MIN) return `A password has at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `A password has at most ${PASSWORD_MAX} characters.`;
  if (!password.trim()) return "A password cannot be only spaces.";
  if (/\p{C}/u.test(password)) return "A password cannot hold control characters.";
  if (name && password.toLowerCase() === name.toLowerCase()) return "A password cannot be your name.";
  return null;
}

// How this browser names itself in the device list.
export function deviceLabel() {
  const agent = navigator.userAgent;
  const browser = /Firefox\//.test(agent) ? "Firefox" : /Edg\//.test(agent) ? "Edge"
    : /Chrom(e|ium)\//.test(agent) ? "Chromium" : /Safari\//.test(agent) ? "Safari" : "browser";
  const system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS"
    : /Windows/.test(agent) ? "Windows" : /Mac OS/.test(agent) ? "macOS"
      : /Linux/.test(agent) ? "Linux" : "";
  return `web: ${browser}${system ? ` on ${system}` : ""}`.slice(0, 40);
}

// A refused login or recovery in words for a person; null for other codes.
export function accountRefusal(code) {
  switch (code) {
    case "bad_credentials": return "Wrong name or password.";
    case "bad_recovery_code": return "That name and recovery code do not match (each code works once).";
    case "too_many_attempts": return "Too many tries: wait a while before trying again.";
    case "token_revoked": return "This device was logged out of that name: log in with your password.";
    case "bad_password": return "That new password cannot be used: 8 to 128 characters, not your name.";
    default: return null;
  }
}

// The connect screen's "log in on this device" and "lost your password": `start(t, fields)`
// opens the session with `login` or `recover` (the name is the name field's).
export function mountLogin(section, nameProblem, start) {
  const error = $("#connect-error", section);
  const nameOf = () => $("#name", section).value.trim();
  const password = h("input", { id: "login-password", type: "password", autocomplete: "current-password", maxlength: PASSWORD_MAX });
  const code = h("input", { id: "recover-code", autocomplete: "off", spellcheck: "false", placeholder: "abcd-efgh-jkmn-pqrs" });
  const fresh = h("input", { id: "recover-password", type: "password", autocomplete: "new-password" });
  const check = (...problems) => {
    const problem = problems.find((p) => p);
    error.textContent = problem || "";
    return !problem;
  };
  const login = h("form", { id: "login-form", novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    const name = nameOf();
    if (!check(nameProblem(name), password.value ? null : "Type your password.")) return;
    start("login", { name, password: password.value, device: deviceLabel() });
  } },
  h("label", { class: "field" }, "Password", password),
  h("button", { type: "submit", id: "login-button" }, "Log in on this device"));
  const recover = h("form", { id: "recover-form", novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    const name = nameOf();
    if (!check(nameProblem(name), code.value.trim() ? null : "Type one of your recovery codes.",
      passwordProblem(fresh.value, name))) return;
    start("recover", { name, recovery_code: code.value.trim(), password: fresh.value, device: deviceLabel() });
  } },
  h("label", { class: "field" }, "Recovery code", code),
  h("label", { class: "field" }, "New password", fresh),
  h("button", { type: "submit", id: "recover-button" }, "Recover and log in"));
  const details = h("details", { id: "login" },
    h("summary", {}, "Protected your name with a password? Log in on this device"),
    login,
    h("details", { id: "recover" }, h("summary", {}, "Lost your password? Use a recovery code"), recover));
  error.before(details);
}

// The account screen: protect the name, the devices, log out everywhere else.
export class AccountView {
  constructor(root, app, act) {
    Object.assign(this, { root, app, act });
    this.devices = null; // the last `devices` list
    this.codes = null; // recovery codes just given: shown until the screen is left
    this.note = "";
    this.form = null; // the protect form, kept across renders: an answer must not wipe what is being typed
    this.formName = null;
  }

  // The server's answers to this screen's requests.
  received(message) {
    if (message.t === "devices") {
      this.devices = message.devices;
      if (message.revoked) this.note = message.revoked === 1 ? "1 device logged out." : `${message.revoked} devices logged out.`;
    } else if (message.t === "password_set") {
      this.codes = message.recovery_codes;
      this.form = null; // a fresh, empty form
      this.note = `Your name is protected.${message.revoked ? ` ${message.revoked} other device(s) logged out.` : ""}`;
      this.act.send("sessions");
    }
    this.render();
  }

  opened() {
    this.note = "";
    this.act.send("sessions");
    this.render();
  }

  left() {
    this.codes = null; // shown once
    this.form = null; // and no password left typed in a hidden form
  }

  render() {
    const me = this.app.me;
    if (!me) return;
    // Everything around the protect form is drawn anew; the form itself stays in place, so
    // an answer arriving while a password is typed neither wipes it nor takes the focus.
    const form = this.keptForm(me.name);
    for (const child of [...this.root.children]) if (child !== form) child.remove();
    if (form.parentNode !== this.root) this.root.append(form);
    form.before(
      h("h2", {}, "Your account: ", h("span", { class: "name" }, me.name)),
      h("p", { id: "account-note", role: "status" }, this.note));
    form.after(...[
      this.codes ? this.codeList() : null,
      this.deviceList(),
      h("p", {},
        h("button", { type: "button", id: "switch-player", onclick: () => this.act.switchPlayer() }, "Play as another name on this device"),
        " ",
        h("button", { type: "button", id: "account-back", onclick: () => this.act.toLobby() }, "Back"))].filter(Boolean));
  }

  keptForm(name) {
    if (!this.form || this.formName !== name) {
      this.form = this.protectForm(name);
      this.formName = name;
    }
    return this.form;
  }

  protectForm(name) {
    const current = h("input", { id: "password-current", type: "password", autocomplete: "current-password" });
    const fresh = h("input", { id: "password-new", type: "password", autocomplete: "new-password" });
    const again = h("input", { id: "password-again", type: "password", autocomplete: "new-password" });
    const error = h("p", { id: "password-error", class: "error", role: "alert" });
    return h("form", { id: "protect-form", class: "panel", novalidate: true, onsubmit: (e) => {
      e.preventDefault();
      const problem = passwordProblem(fresh.value, name) || (fresh.value === again.value ? null : "The two new passwords differ.");
      error.textContent = problem || "";
      if (problem) return;
      this.act.send("set_password", { password: fresh.value, current: current.value || undefined });
    } },
    h("h3", {}, "Protect this name"),
    h("p", { class: "muted" }, "With a password you can log in on any device as ", h("span", { class: "name" }, name),
      ". Setting or changing it logs out every other device."),
    h("label", { class: "field" }, "Current password (if you have set one)", current),
    h("label", { class: "field" }, "New password (8-128 characters)", fresh),
    h("label", { class: "field" }, "New password again", again),
    h("button", { type: "submit", class: "primary", id: "password-set" }, "Set password"),
    error);
  }

  codeList() {
    return h("section", { id: "recovery-codes", class: "panel" },
      h("h3", {}, "Your recovery codes"),
      h("p", {}, "Write these down now: they are shown only once. Each lets you set a new password once if you lose yours."),
      h("ol", {}, this.codes.map((code) => h("li", {}, h("code", {}, code)))));
  }

  deviceList() {
    const devices = this.devices || [];
    const when = (t) => (t ? new Date(t * 1000).toLocaleString() : "never");
    return h("section", { id: "devices", class: "panel" },
      h("h3", {}, "My devices"),
      this.devices === null ? h("p", {}, "Loading…") : h("ul", {}, devices.map((d) => h("li", { dataset: { device: d.id } },
        h("strong", {}, d.label || "first device"),
        d.current ? " (this device)" : "",
        ` · last used ${when(d.last_seen)}`,
        d.address ? ` from ${d.address}` : "",
        " ",
        d.current ? null : h("button", { type: "button", class: "revoke", onclick: () => this.act.send("revoke", { device: d.id }) }, "Log out")))),
      h("button", { type: "button", id: "logout-others", disabled: devices.length < 2 ? true : undefined,
        onclick: () => this.act.send("revoke", { others: true }) }, "Log out everywhere else"));
  }
}
