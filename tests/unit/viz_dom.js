// viz_dom.js: runs a txc viz page's script under Node with a small fake DOM
// and a software canvas, drives it through its controls and checks that it
// draws, without a browser (tests/unit/viz_node.sh; tests/unit/viz_browser.sh
// does the same in headless Chromium where one is installed).
//
//   node viz_dom.js PAGE.html [SHOT.png]
//
// Checks: the script runs without an exception and reports "ok tick=0";
// "step" advances the clock and changes the pixels; "step" back returns to
// the very pixels of the earlier tick; the slider seeks; the last tick
// differs from the first; the play button starts and stops playing.
// SHOT.png: the canvases at the middle tick, stacked (a screenshot
// without text).  With VIZ_DOM_HASH=#tick=3&steps=2 (say) in the environment, it
// loads the page with that hash and checks only that the status is
// VIZ_DOM_EXPECT (ok tick=5).  Prints one line per check; exits 1 on a failure.
"use strict";
const fs = require("fs");
const vm = require("vm");
const zlib = require("zlib");

const page = fs.readFileSync(process.argv[2], "utf8");
const shot = process.argv[3];
let failures = 0;
function check(ok, what) {
  console.log((ok ? "ok: " : "FAIL: ") + what);
  if (!ok) failures++;
}

// ---- the page's parts: self-contained, nothing fetched
const json = /<script type="application\/json" id="txc-data">([\s\S]*?)<\/script>/.exec(page);
const scripts = page.match(/<script>([\s\S]*?)<\/script>/g) || [];
check(json && scripts.length === 1, "one data element and one script");
check(!/\b(src|href)\s*=/i.test(page) && !/https?:\/\//.test(page.replace(/http:\/\/www\.w3\.org\/2000\/svg/g, "")),
  "no src=, href= or URL: nothing is fetched");
const code = scripts[0].replace(/^<script>/, "").replace(/<\/script>$/, "");

// ---- a software canvas (enough of CanvasRenderingContext2D for viz.js)
function parseColour(s) {
  let m = /rgba?\(([^)]*)\)/.exec(s || "");
  if (m) {
    const v = m[1].split(",").map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  }
  m = /#([0-9a-f]{6})/i.exec(s || "");
  if (m) { const n = parseInt(m[1], 16); return [n >> 16, (n >> 8) & 255, n & 255, 1]; }
  return [0, 0, 0, 1];
}
class Ctx {
  constructor(c) { this.c = c; this.fillStyle = "#000"; this.strokeStyle = "#000"; this.lineWidth = 1; this.path = []; }
  buf() {
    const c = this.c;
    if (!c.px || c.px.w !== c.width || c.px.h !== c.height) {
      c.px = new Uint8ClampedArray(Math.max(1, c.width * c.height * 4));
      c.px.w = c.width; c.px.h = c.height;
    }
    return c.px;
  }
  put(x, y, col) {
    const c = this.c, px = this.buf();
    x = Math.floor(x); y = Math.floor(y);
    if (x < 0 || y < 0 || x >= c.width || y >= c.height) return;
    const o = (y * c.width + x) * 4, a = col[3];
    for (let k = 0; k < 3; k++) px[o + k] = px[o + k] * (1 - a) + col[k] * a;
    px[o + 3] = 255;
  }
  fillRect(x, y, w, h) {
    const col = parseColour(this.fillStyle);
    for (let j = Math.max(0, y); j < y + h; j++) for (let i = Math.max(0, x); i < x + w; i++) this.put(i, j, col);
  }
  clearRect() { this.buf().fill(0); }
  strokeRect(x, y, w, h) {
    const col = parseColour(this.strokeStyle), lw = Math.max(1, Math.round(this.lineWidth));
    for (let t = 0; t < lw; t++) {
      for (let i = x; i <= x + w; i++) { this.put(i, y + t, col); this.put(i, y + h - t, col); }
      for (let j = y; j <= y + h; j++) { this.put(x + t, j, col); this.put(x + w - t, j, col); }
    }
  }
  beginPath() { this.path = []; }
  moveTo(x, y) { this.path.push([x, y, true]); }
  lineTo(x, y) { this.path.push([x, y, false]); }
  stroke() {
    const col = parseColour(this.strokeStyle);
    for (let k = 1; k < this.path.length; k++) {
      const a = this.path[k - 1], b = this.path[k];
      if (b[2]) continue;
      const n = Math.max(Math.abs(b[0] - a[0]), Math.abs(b[1] - a[1]), 1);
      for (let s = 0; s <= n; s++) this.put(a[0] + (b[0] - a[0]) * s / n, a[1] + (b[1] - a[1]) * s / n, col);
    }
  }
  createImageData(w, h) { return { width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }; }
  putImageData(img, x, y) {
    const px = this.buf(), c = this.c;
    for (let j = 0; j < img.height; j++)
      for (let i = 0; i < img.width; i++) {
        if (x + i >= c.width || y + j >= c.height) continue;
        const o = ((y + j) * c.width + x + i) * 4, s = (j * img.width + i) * 4;
        for (let k = 0; k < 4; k++) px[o + k] = img.data[s + k];
      }
  }
  drawImage(src, dx, dy, dw, dh) {
    const sp = new Ctx(src).buf(), px = this.buf(), c = this.c;
    for (let j = 0; j < dh; j++)
      for (let i = 0; i < dw; i++) {
        const X = dx + i, Y = dy + j;
        if (X < 0 || Y < 0 || X >= c.width || Y >= c.height) continue;
        const sx = Math.floor(i * src.width / dw), sy = Math.floor(j * src.height / dh);
        const o = (Y * c.width + X) * 4, s = (sy * src.width + sx) * 4;
        for (let k = 0; k < 4; k++) px[o + k] = sp[s + k];
      }
  }
}

// ---- a fake DOM
const byId = {};
class Node {
  constructor(tag) {
    this.tagName = tag.toUpperCase(); this.children = []; this.style = {}; this.listeners = {};
    this.attrs = {}; this._id = ""; this.className = ""; this._text = ""; this.value = "";
    this.width = 300; this.height = 150;
  }
  set id(v) { this._id = v; byId[v] = this; }
  get id() { return this._id; }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); }
  appendChild(c) {
    this.children.push(c);
    if (this.tagName === "SELECT" && this.children.length === 1) this.value = c.value;
    return c;
  }
  setAttribute(k, v) { this.attrs[k] = String(v); if (k === "id") this.id = v; }
  addEventListener(ev, fn) { (this.listeners[ev] = this.listeners[ev] || []).push(fn); }
  click() { this.fire("click"); }
  fire(ev, e) { (this.listeners[ev] || []).forEach((f) => f(e || { target: this, preventDefault() {} })); }
  getContext() { return this.ctx || (this.ctx = new Ctx(this)); }
  all(out) { out.push(this); this.children.forEach((c) => c.all && c.all(out)); return out; }
}
const body = new Node("body");
const document = {
  body,
  createElement: (t) => new Node(t),
  createTextNode: (t) => ({ textContent: t }),
  getElementById: (id) => byId[id] || null,
  listeners: {},
  addEventListener(ev, fn) { (this.listeners[ev] = this.listeners[ev] || []).push(fn); },
};
const dataEl = new Node("script");
dataEl.textContent = json ? json[1] : "{}";
dataEl.id = "txc-data";
let rafs = [];
const errors = [];
const window = {
  location: { hash: process.env.VIZ_DOM_HASH || "" },
  addEventListener(ev, fn) { if (ev === "error") window.onerr = fn; },
  requestAnimationFrame(fn) { rafs.push(fn); },
};
const ctx = vm.createContext({ window, document, console, JSON, Math, Object, String, Number,
  Int32Array, Int8Array, Uint8Array, Uint8ClampedArray, Float64Array });
try {
  vm.runInContext(code, ctx, { filename: "viz.js" });
} catch (e) {
  errors.push(e.stack || String(e));
}
check(errors.length === 0, "the script runs" + (errors.length ? ": " + errors[0] : ""));
if (errors.length) process.exit(1);

const status = () => (byId["txc-status"] ? byId["txc-status"].textContent : "");
if (process.env.VIZ_DOM_HASH) {
  // only the state the hash asks for: VIZ_DOM_EXPECT is the status it must give
  check(status() === process.env.VIZ_DOM_EXPECT, "#" + process.env.VIZ_DOM_HASH.replace(/^#/, "") +
    " gives '" + status() + "'");
  process.exit(failures ? 1 : 0);
}
const canvases = () => body.all([]).filter((n) => n.tagName === "CANVAS" && n.px);
function pixels() {
  const h = require("crypto").createHash("sha1");
  canvases().forEach((c) => h.update(c.px));
  return h.digest("hex");
}
function click(id) { byId[id].fire("click"); }

check(status() === "ok tick=0", "drawn at tick 0 (status '" + status() + "')");
check(canvases().length === ctx.window.txcViz.panels.reduce((n, p) => n + p.grids.length, 0),
  "a canvas per tensor per panel");
const maxT = ctx.window.txcViz.ticks;
const p0 = pixels();
click("step");
check(status() === "ok tick=1", "step goes to tick 1 (" + status() + ")");
const p1 = pixels();
check(p1 !== p0 || maxT === 0, "tick 1 looks different from tick 0");
click("step");
const p2 = pixels();
check(p2 !== p1 || maxT <= 1, "tick 2 looks different from tick 1");
click("back");
check(maxT < 3 || (status() === "ok tick=1" && pixels() === p1), "step back draws tick 1 again, the same");
const seek = byId.seek;
seek.value = String(Math.floor(maxT / 2));
seek.fire("input");
check(status() === "ok tick=" + Math.floor(maxT / 2), "the slider seeks to the middle tick");
const pmid = pixels();
if (shot) {
  // the canvases stacked, 8 px apart, on white
  const cs = canvases(), W = Math.max(...cs.map((c) => c.width)), H = cs.reduce((s, c) => s + c.height + 8, 0);
  const raw = Buffer.alloc((W * 3 + 1) * H, 255);
  let y0 = 0;
  for (const c of cs) {
    for (let j = 0; j < c.height; j++) {
      raw[(y0 + j) * (W * 3 + 1)] = 0;
      for (let i = 0; i < c.width; i++) {
        const o = (j * c.width + i) * 4, d = (y0 + j) * (W * 3 + 1) + 1 + i * 3;
        const a = c.px[o + 3] / 255;
        for (let k = 0; k < 3; k++) raw[d + k] = Math.round(c.px[o + k] * a + 255 * (1 - a));
      }
    }
    for (let j = c.height; j < c.height + 8; j++) raw[(y0 + j) * (W * 3 + 1)] = 0;
    y0 += c.height + 8;
  }
  const crcTable = [];
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crcTable[n] = c >>> 0;
  }
  const crc = (b) => { let c = 0xffffffff; for (const x of b) c = crcTable[(c ^ x) & 255] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4), td = Buffer.concat([Buffer.from(type), data]), c = Buffer.alloc(4);
    len.writeUInt32BE(data.length); c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(W, 0); ihdr.writeUInt32BE(H, 4); ihdr[8] = 8; ihdr[9] = 2;
  fs.writeFileSync(shot, Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]));
}
seek.value = String(maxT);
seek.fire("input");
check(status() === "ok tick=" + maxT && pixels() !== p0 && pixels() !== pmid, "the last tick differs from the first and the middle");
click("restart");
check(status() === "ok tick=0" && pixels() === p0, "start goes back to tick 0, drawn as before");
click("play");
check(byId.play.textContent === "pause" && rafs.length > 0, "play asks for animation frames");
// two frames a second apart at the chosen speed advance the clock
const f = rafs.shift();
f(1000);
const g = rafs.shift();
if (g) g(2000);
check(/ok tick=[1-9]/.test(status()), "playing advances the clock (" + status() + ")");
click("play");
check(byId.play.textContent === "play" || maxT < 3, "pause stops it");
process.exit(failures ? 1 : 0);
