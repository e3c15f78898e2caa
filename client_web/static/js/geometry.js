// Boards n^d: cells, the winning lines, which lines pass through each cell, and notation.
// A cell index is x + n*y + n*n*z; it is written <level><column letter><row> ("1a1"), and 2-D
// boards drop the level ("a1"). The same rules as engine/rules/geometry.py, for drawing only: the
// server is the judge of every move.

const SHAPES = { "4x4x4": [4, 3], "3x3x3": [3, 3], "4x4": [4, 2] };
const cache = new Map();

export class Geometry {
  constructor(n, d) {
    this.n = n;
    this.d = d;
    this.size = n ** d;
    this.levels = d === 3 ? n : 1;
    this.lines = makeLines(n, d);
    this.linesThrough = Array.from({ length: this.size }, () => []);
    this.lines.forEach((line, i) => line.forEach((cell) => this.linesThrough[cell].push(i)));
  }

  coords(cell) {
    const n = this.n;
    return [cell % n, Math.floor(cell / n) % n, Math.floor(cell / (n * n))];
  }

  cell(x, y, z = 0) {
    return x + this.n * y + this.n * this.n * z;
  }

  format(cell) {
    const [x, y, z] = this.coords(cell);
    const square = String.fromCharCode(97 + x) + (y + 1);
    return this.d === 3 ? `${z + 1}${square}` : square;
  }

  // The index of a typed cell ("2b3", case-insensitive), or null.
  parse(text) {
    const m = /^\s*([1-9])?([a-i])([1-9])\s*$/i.exec(text);
    if (!m || (this.d === 3) !== (m[1] !== undefined)) return null;
    const x = m[2].toLowerCase().charCodeAt(0) - 97;
    const y = parseInt(m[3], 10) - 1;
    const z = this.d === 3 ? parseInt(m[1], 10) - 1 : 0;
    if (x >= this.n || y >= this.n || z >= this.levels) return null;
    return this.cell(x, y, z);
  }
}

export function geometryOf(variant) {
  if (!cache.has(variant)) {
    const shape = SHAPES[variant];
    if (!shape) throw new Error(`unknown variant ${variant}`);
    cache.set(variant, new Geometry(...shape));
  }
  return cache.get(variant);
}

function makeLines(n, d) {
  const dirs = [];
  const each = (k, prefix) => {
    if (k === d) {
      const first = prefix.find((v) => v !== 0);
      if (first === 1) dirs.push(prefix);
      return;
    }
    for (const v of [-1, 0, 1]) each(k + 1, [...prefix, v]);
  };
  each(0, []);
  const lines = [];
  const total = n ** d;
  for (const dir of dirs) {
    for (let start = 0; start < total; start++) {
      const p = [];
      let c = start;
      for (let k = 0; k < d; k++) { p.push(c % n); c = Math.floor(c / n); }
      const cells = [];
      for (let i = 0; i < n; i++) {
        const q = p.map((v, k) => v + i * dir[k]);
        if (q.some((v) => v < 0 || v >= n)) break;
        cells.push(q.reduce((acc, v, k) => acc + v * n ** k, 0));
      }
      // A line starts where stepping back leaves the board.
      const back = p.map((v, k) => v - dir[k]);
      if (cells.length === n && back.some((v) => v < 0 || v >= n)) lines.push(cells);
    }
  }
  return lines;
}

// The empty cells where `side` (an array of occupants: "x", "o" or null) completes a line.
export function threats(geometry, cells, side) {
  const found = new Set();
  for (const line of geometry.lines) {
    let mine = 0;
    let gap = null;
    let blocked = false;
    for (const c of line) {
      if (cells[c] === side) mine++;
      else if (cells[c] === null) gap = c;
      else blocked = true;
    }
    if (!blocked && mine === geometry.n - 1 && gap !== null) found.add(gap);
  }
  return found;
}

// The completed line in a position, or null.
export function winningLine(geometry, cells) {
  for (const line of geometry.lines) {
    const first = cells[line[0]];
    if (first !== null && line.every((c) => cells[c] === first)) return line;
  }
  return null;
}
