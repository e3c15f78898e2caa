// What tests/client_web/test_web_phone.py measures in the page: an object of functions,
// evaluated by name (`(arg) => (MEASURE).targets(arg)`).
({
  // Every target a finger presses inside `root` (buttons, links, fields, a checkbox's label,
  // the board's cells) that is shown, with its box.
  targets(root) {
    const what = "button, a[href], select, input:not([type=checkbox]):not([type=hidden]),"
      + " label:has(> input[type=checkbox])";
    return [...document.querySelectorAll(root)].flatMap((r) => [...r.querySelectorAll(what)])
      .filter((e) => {
        const b = e.getBoundingClientRect();
        return b.width > 0 && b.height > 0 && getComputedStyle(e).visibility !== "hidden";
      })
      .map((e) => {
        const b = e.getBoundingClientRect();
        return { what: e.id || e.className || e.tagName, text: e.textContent.trim().slice(0, 20),
          width: b.width, height: b.height };
      });
  },

  // WCAG's contrast of every shown text under `roots` against what is behind it: the first
  // ancestor with a background colour, blended over those under it when translucent, the
  // text's opacity counted. Disabled controls are exempt (WCAG 1.4.3). Those under 4.5:1.
  contrast(roots) {
    const parse = (c) => {
      const m = c.match(/[\d.]+/g).map(Number);
      const scale = c.startsWith("color(") ? 255 : 1; // color(srgb 0.1 0.2 0.3 / 0.5)
      return [m[0] * scale, m[1] * scale, m[2] * scale, m.length > 3 ? m[3] : 1];
    };
    const over = (top, under) => [0, 1, 2]
      .map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
    const lum = (c) => {
      const [r, g, b] = c.slice(0, 3).map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const behind = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c[3] > 0) layers.push(c);
        if (c[3] >= 1) break;
      }
      let bg = [255, 255, 255, 1];
      for (const c of layers.reverse()) bg = over(c, bg);
      return bg;
    };
    const opacity = (el) => {
      let o = 1;
      for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
      return o;
    };
    const low = [];
    for (const root of roots) {
      for (const el of document.querySelectorAll(`${root}, ${root} *`)) {
        const text = [...el.childNodes].filter((n) => n.nodeType === 3)
          .map((n) => n.textContent).join("").trim();
        if (!text || el.closest("[hidden], button:disabled") || el.disabled) continue;
        const b = el.getBoundingClientRect();
        const s = getComputedStyle(el);
        if (b.width === 0 || b.height === 0 || s.visibility === "hidden") continue;
        const bg = behind(el);
        const fg = parse(s.color);
        fg[3] *= opacity(el);
        const [hi, lo] = [lum(over(fg, bg)), lum(bg)].sort((x, y) => y - x);
        const ratio = (hi + 0.05) / (lo + 0.05);
        if (ratio < 4.5) {
          low.push({ text: text.slice(0, 30), ratio: Math.round(ratio * 100) / 100,
            color: s.color, background: bg.map(Math.round).join(",") });
        }
      }
    }
    return low;
  },
})
