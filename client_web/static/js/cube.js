// The board as a cube turning in 3-D, drawn on a canvas with a perspective projection.
// Drag (mouse or touch) or the arrow keys turn it; a click or tap on a cell plays it.

const COLOURS = { x: "#d9480f", o: "#1c7ed6" };
const WIN = "#f5b700"; // the winning line's colour, as .cell.win's
const TAU = Math.PI * 2;

export class CubeView {
  constructor(canvas, { onPick, onHover }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.onPick = onPick;
    this.onHover = onHover;
    this.yaw = -0.55;
    this.pitch = 0.42;
    this.view = null;
    this.points = [];
    this.drag = null;
    canvas.addEventListener("pointerdown", (e) => this.down(e));
    canvas.addEventListener("pointermove", (e) => this.move(e));
    canvas.addEventListener("pointerup", (e) => this.up(e));
    canvas.addEventListener("pointercancel", () => { this.drag = null; });
    canvas.addEventListener("pointerleave", () => { if (!this.drag) this.onHover(null); });
    canvas.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  update(view) {
    this.view = view;
    this.draw();
  }

  turn(dyaw, dpitch) {
    this.yaw = (this.yaw + dyaw) % TAU;
    this.pitch = Math.max(-1.45, Math.min(1.45, this.pitch + dpitch));
    this.draw();
  }

  key(event) {
    const turns = { ArrowLeft: [-0.15, 0], ArrowRight: [0.15, 0], ArrowUp: [0, -0.12],
      ArrowDown: [0, 0.12] };
    const t = turns[event.key];
    if (!t) return;
    event.preventDefault();
    event.stopPropagation();
    this.turn(...t);
  }

  local(event) {
    const r = this.canvas.getBoundingClientRect();
    return [event.clientX - r.left, event.clientY - r.top];
  }

  down(event) {
    this.canvas.setPointerCapture(event.pointerId);
    const [x, y] = this.local(event);
    this.drag = { x, y, moved: false };
  }

  move(event) {
    const [x, y] = this.local(event);
    if (!this.drag) {
      this.onHover(this.hit(x, y));
      return;
    }
    const dx = x - this.drag.x;
    const dy = y - this.drag.y;
    if (!this.drag.moved && Math.hypot(dx, dy) < 5) return;
    this.drag.moved = true;
    this.drag.x = x;
    this.drag.y = y;
    this.turn(dx * 0.01, dy * 0.01);
  }

  up(event) {
    const drag = this.drag;
    this.drag = null;
    if (!drag || drag.moved) return;
    const cell = this.hit(...this.local(event));
    if (cell !== null) this.onPick(cell);
  }

  // The cell drawn under (x, y), front-most first, or null.
  hit(x, y) {
    let best = null;
    for (const p of this.points) {
      if (Math.hypot(p.sx - x, p.sy - y) <= Math.max(9, p.r * 1.25)) {
        if (best === null || p.depth < best.depth) best = p;
      }
    }
    return best === null ? null : best.cell;
  }

  // Screen points of every cell for the current size and angle.
  project(g, width, height) {
    const n = g.n;
    const mid = (n - 1) / 2;
    const rise = g.d === 3 ? 1.35 : 0; // levels further apart than cells, to read them
    const cy = Math.cos(this.yaw);
    const sy = Math.sin(this.yaw);
    const cp = Math.cos(this.pitch);
    const sp = Math.sin(this.pitch);
    const span = Math.max(n - 1, (g.levels - 1) * rise) + 1;
    const scale = Math.min(width, height) / (span * 1.45);
    const distance = span * 3.2;
    const at = (x, y, z) => {
      const wx = x - mid;
      const wy = (z - (g.levels - 1) / 2) * rise; // up
      const wz = y - mid;
      const rx = wx * cy - wz * sy;
      const rz = wx * sy + wz * cy;
      const ry = wy * cp - rz * sp;
      const depth = wy * sp + rz * cp;
      const f = distance / (distance + depth);
      return { sx: width / 2 + rx * scale * f, sy: height / 2 - ry * scale * f, depth, f };
    };
    const points = [];
    for (let cell = 0; cell < g.size; cell++) {
      const p = at(...g.coords(cell));
      points.push({ ...p, cell, r: scale * 0.26 * p.f });
    }
    return { points, at, scale };
  }

  draw() {
    const view = this.view;
    const canvas = this.canvas;
    if (!view || !canvas.isConnected) return;
    const dpr = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) return;
    if (canvas.width !== Math.round(width * dpr)) canvas.width = Math.round(width * dpr);
    if (canvas.height !== Math.round(height * dpr)) canvas.height = Math.round(height * dpr);
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const g = view.geometry;
    const { points, at } = this.project(g, width, height);
    this.points = points;
    const style = getComputedStyle(canvas);
    const ink = style.getPropertyValue("--ink").trim() || "#333";
    const faint = style.getPropertyValue("--faint").trim() || "#ccc";

    // Each level's square, faint, for orientation.
    ctx.lineWidth = 1;
    ctx.strokeStyle = faint;
    const lo = -0.5;
    const hi = g.n - 0.5;
    for (let z = 0; z < g.levels; z++) {
      ctx.beginPath();
      [[lo, lo], [hi, lo], [hi, hi], [lo, hi], [lo, lo]].forEach(([x, y], i) => {
        const p = at(x, y, z);
        if (i) ctx.lineTo(p.sx, p.sy); else ctx.moveTo(p.sx, p.sy);
      });
      ctx.stroke();
    }
    // The winning line, or the lines through the hovered cell, as strokes.
    const stroke = (cells, colour, widthPx) => {
      ctx.strokeStyle = colour;
      ctx.lineWidth = widthPx;
      ctx.beginPath();
      const a = points[cells[0]];
      const b = points[cells[cells.length - 1]];
      ctx.moveTo(a.sx, a.sy);
      ctx.lineTo(b.sx, b.sy);
      ctx.stroke();
    };
    for (const line of view.hoverLines || []) stroke(line, faint, 3);
    // Each level's name beside its square, for the player to read the cube by.
    if (g.levels > 1) {
      ctx.fillStyle = style.getPropertyValue("--muted").trim() || "#666";
      ctx.font = "12px system-ui, sans-serif";
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      for (let z = 0; z < g.levels; z++) {
        const p = at(lo - 0.35, lo, z);
        const label = `Level ${z + 1}`;
        const x = Math.max(p.sx, ctx.measureText(label).width + 4); // never cut by the edge
        ctx.fillText(label, x, p.sy);
      }
    }

    const order = [...points].sort((a, b) => b.depth - a.depth); // far to near
    for (const p of order) {
      const side = view.cells[p.cell];
      const r = p.r;
      ctx.globalAlpha = Math.max(0.45, Math.min(1, p.f * 1.1));
      if (side === null) {
        let fill = faint;
        if (view.threats.x.has(p.cell)) fill = COLOURS.x;
        else if (view.threats.o.has(p.cell)) fill = COLOURS.o;
        const threat = fill !== faint;
        ctx.fillStyle = fill;
        ctx.beginPath();
        ctx.arc(p.sx, p.sy, threat ? r * 0.55 : r * 0.28, 0, TAU);
        ctx.fill();
        if (view.hover.has(p.cell)) {
          ctx.strokeStyle = ink;
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.arc(p.sx, p.sy, r * 0.7, 0, TAU);
          ctx.stroke();
        }
      } else if (side === "x") {
        ctx.fillStyle = COLOURS.x;
        ctx.beginPath();
        ctx.arc(p.sx, p.sy, r, 0, TAU);
        ctx.fill();
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = Math.max(1.5, r * 0.22);
        const k = r * 0.45;
        ctx.beginPath();
        ctx.moveTo(p.sx - k, p.sy - k);
        ctx.lineTo(p.sx + k, p.sy + k);
        ctx.moveTo(p.sx + k, p.sy - k);
        ctx.lineTo(p.sx - k, p.sy + k);
        ctx.stroke();
      } else {
        ctx.strokeStyle = COLOURS.o;
        ctx.lineWidth = Math.max(2, r * 0.38);
        ctx.beginPath();
        ctx.arc(p.sx, p.sy, r * 0.78, 0, TAU);
        ctx.stroke();
      }
      if (p.cell === view.last) {
        ctx.strokeStyle = ink;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.arc(p.sx, p.sy, r * 1.25, 0, TAU);
        ctx.stroke();
      }
    }
    ctx.globalAlpha = 1;
    // The winning line over the pieces (under them it was hidden by the marks it joins), and
    // a ring round each of its cells.
    if (view.line) {
      ctx.globalAlpha = 0.85;
      stroke(view.line, WIN, 6);
      ctx.globalAlpha = 1;
      ctx.strokeStyle = WIN;
      ctx.lineWidth = 3;
      for (const cell of view.line) {
        const p = points[cell];
        ctx.beginPath();
        ctx.arc(p.sx, p.sy, p.r * 1.35, 0, TAU);
        ctx.stroke();
      }
    }
  }
}
