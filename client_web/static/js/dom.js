// Building the page. Text from the network (names, chat) only ever becomes text nodes or
// attribute values: nothing in this client parses HTML from a string, and the page's CSP
// (require-trusted-types-for 'script') makes any such assignment throw.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child)); // a string becomes a text node
  }
}

// Replace the children of `el`.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// `fill(el, build())`, only when `key` (a string of what the children show) differs from the
// last refill's. Every message renders the lobby: a list built anew each time would drop a
// press begun on one of its buttons or links (the element pressed is gone before it is let
// go, so no click) and the keyboard's focus on it.
const shownKeys = new WeakMap(); // element -> the key of what refill put in it

export function refill(el, key, build) {
  if (shownKeys.get(el) === key) return el;
  shownKeys.set(el, key);
  return fill(el, build());
}

export const $ = (selector, root = document) => root.querySelector(selector);

export function option(value, label, selected) {
  return h("option", { value, selected: selected ? true : undefined }, label);
}

export function select(name, label, options, selected) {
  return h("label", { class: "field" }, label,
    h("select", { name }, options.map(([v, l]) => option(v, l, String(v) === String(selected)))));
}
