/* viz.js: plays the traces of a txc viz page (compiled into txc by
 * viz/embed.sh; the data is the JSON that viz/page.c writes).
 *
 * One clock (ticks) drives every panel: at tick T a panel shows each
 * tensor as a grid (2-D, or 2-D slices of more dimensions side by side,
 * 1-D wrapped), where a cell's colour says whether it was computed (green;
 * orange when computed more than once), stored lately (the thread's
 * colour, fading over `fade` ticks) or loaded lately (blue); the cells of
 * a stage outside its live allocations are grey, and each live allocation
 * is outlined; the lanes of a vector store are boxed together.  Beside
 * it: the loop nest with the lines running at T highlighted, the loop
 * values of each thread, and the numbers of stats.c.  Controls: play,
 * pause, step, step back, speed, fade, a slider; keys: space, arrows.
 * The URL's hash can set the tick (#tick=N, #tick=end), press "step" K
 * times (#steps=K) and play (#play);
 * the element #txc-status says "ok tick=N" after each drawing, or the
 * first error (tests read it).
 */
(function () {
"use strict";

var LOAD = 0, STORE = 1, ALLOC = 2, FREE = 3;
var statusEl = document.getElementById("txc-status");
var failed = false;

function setStatus(s) {
  if (!statusEl) {
    statusEl = document.createElement("div");
    statusEl.id = "txc-status";
    document.body.appendChild(statusEl);
  }
  statusEl.textContent = s;
  statusEl.setAttribute("data-status", s);
}
window.addEventListener("error", function (e) {
  failed = true;
  setStatus("error: " + (e && e.message ? e.message : e));
});

function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/* A thread's colour: hues spread by the golden angle. */
function threadRGB(t) {
  var h = (t * 137.508 + 120) % 360 / 60, c = 0.8 * 0.75, x = c * (1 - Math.abs(h % 2 - 1));
  var m = 0.75 - c, r = 0, g = 0, b = 0;
  if (h < 1) { r = c; g = x; } else if (h < 2) { r = x; g = c; } else if (h < 3) { g = c; b = x; }
  else if (h < 4) { g = x; b = c; } else if (h < 5) { r = x; b = c; } else { r = c; b = x; }
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}
function css(rgb) { return "rgb(" + rgb[0] + "," + rgb[1] + "," + rgb[2] + ")"; }

/* ---- a tensor's grid ---------------------------------------------------- */

function Grid(t) {
  var nd = t.ext.length, n = 1, d;
  for (d = 0; d < nd; d++) n *= t.ext[d];
  this.t = t;
  this.n = n;
  this.slices = 1;
  if (nd === 0) { this.rows = 1; this.cols = 1; }
  else if (nd === 1) { this.cols = Math.max(1, Math.min(t.ext[0], 64)); this.rows = Math.max(1, Math.ceil(t.ext[0] / this.cols)); }
  else {
    this.rows = Math.max(1, t.ext[nd - 2]);
    this.cols = Math.max(1, t.ext[nd - 1]);
    for (d = 0; d < nd - 2; d++) this.slices *= t.ext[d];
  }
  this.sc = Math.max(1, Math.min(this.slices, Math.floor(65 / (this.cols + 1))));
  this.sr = Math.max(1, Math.ceil(this.slices / this.sc));
  this.w = this.sc * (this.cols + 1) - 1;
  this.h = this.sr * (this.rows + 1) - 1;
  this.lastStore = new Int32Array(n);
  this.lastLoad = new Int32Array(n);
  this.count = new Int32Array(n);
  this.thread = new Int32Array(n);
  this.inside = new Uint8Array(n);
  this.reset();
}
Grid.prototype.reset = function () {
  this.lastStore.fill(-1e9);
  this.lastLoad.fill(-1e9);
  this.count.fill(0);
  this.thread.fill(0);
};
/* The cell (x, y) of element e. */
Grid.prototype.xy = function (e) {
  var per = this.rows * this.cols, s = Math.floor(e / per), r = e % per;
  return [(s % this.sc) * (this.cols + 1) + r % this.cols,
          Math.floor(s / this.sc) * (this.rows + 1) + Math.floor(r / this.cols)];
};

/* ---- a panel: one trace --------------------------------------------------- */

function Panel(tr, parent, width) {
  var ev = tr.ev, n = ev.length / 6, i, t = 0, it = 0, self = this;
  this.tr = tr;
  this.n = n;
  this.tick = new Int32Array(n); this.thr = new Int32Array(n); this.lane = new Int32Array(n);
  this.line = new Int32Array(n); this.kind = new Int8Array(n); this.ten = new Int32Array(n);
  this.elem = new Int32Array(n); this.iterAt = new Int32Array(n);
  for (i = 0; i < n; i++) {
    t += ev[6 * i];
    this.tick[i] = t;
    this.thr[i] = ev[6 * i + 1];
    this.lane[i] = ev[6 * i + 2];
    this.line[i] = ev[6 * i + 3];
    this.kind[i] = ev[6 * i + 4] & 3;
    this.ten[i] = ev[6 * i + 4] >> 2;
    this.elem[i] = ev[6 * i + 5];
    this.iterAt[i] = -1;
    if (this.kind[i] === STORE) { this.iterAt[i] = it; it += 1 + tr.iters[it]; }
  }
  this.grids = tr.tensors.map(function (x) { return new Grid(x); });
  var maxw = 1;
  this.grids.forEach(function (g) { maxw = Math.max(maxw, g.w); });
  this.cell = Math.max(2, Math.min(22, Math.floor(width / maxw)));
  this.live = {};
  this.p = 0;
  this.T = -1;

  var box = el("div", "panel");
  var sizes = tr.sizes.map(function (s) { return s[0] + "=" + s[1]; }).join(" ");
  box.appendChild(el("h2", "", tr.kernel + " \u2014 schedule " + tr.schedule));
  this.sub = el("div", "sub", sizes + "; " + tr.ticks + " ticks, " + tr.threads +
    (tr.threads === 1 ? " thread" : " threads"));
  box.appendChild(this.sub);
  if (tr.intrinsicCalls)
    box.appendChild(el("div", "sub", tr.intrinsicCalls + " calls of the intrinsic" + (tr.intrinsic.indexOf(",") >= 0 ? "s" : "") + " '" + tr.intrinsic +
      "' (tensorize), one tick each: a call lights all the elements it loads and stores" +
      (tr.intrinsicUndrawn ? "; " + tr.intrinsicUndrawn + " target calls are not drawn" : "")));
  var row = el("div", "row"), left = el("div", "tensors"), right = el("div", "nest");
  this.canvases = this.grids.map(function (g) {
    var w = el("div", "tensor"), c = el("canvas");
    var x = g.t, shape = x.elem + "[" + x.ext.join(", ") + "]";
    if (x.lo.some(function (v) { return v !== 0; })) shape += " from [" + x.lo.join(", ") + "]";
    w.appendChild(el("div", "label", x.name + " (" + x.role + ") " + shape));
    c.width = g.w * self.cell;
    c.height = g.h * self.cell;
    w.appendChild(c);
    left.appendChild(w);
    g.off = el("canvas");
    g.off.width = g.w;
    g.off.height = g.h;
    return c;
  });
  var leg = el("div", "legend");
  [["computed", "rgb(200,232,200)"], ["recomputed", "rgb(246,200,150)"], ["stored now", css(threadRGB(0))],
   ["loaded", "rgb(80,120,235)"], ["not allocated", "rgb(200,200,200)"]].forEach(function (k) {
    var i2 = el("i");
    i2.style.background = k[1];
    leg.appendChild(i2);
    leg.appendChild(document.createTextNode(k[0]));
  });
  left.appendChild(leg);
  this.lineEls = [];
  var pre = el("pre", "loops");
  tr.loops.forEach(function (l, k) {
    var s = el("span", "", l);
    pre.appendChild(s);
    self.lineEls[k + 1] = s;
  });
  this.iters = el("div", "iters", "");
  right.appendChild(this.iters);
  right.appendChild(pre);
  right.appendChild(this.statsTable());
  row.appendChild(left);
  row.appendChild(right);
  box.appendChild(row);
  parent.appendChild(box);
  this.cur = [];
}

Panel.prototype.statsTable = function () {
  var tab = el("table", "stats"), tr = this.tr;
  var head = el("tr");
  ["tensor", "computed", "minimum", "recompute", "updates", "loads/store", "reads", "peak live B", "allocs"].forEach(function (h) {
    head.appendChild(el("th", "", h));
  });
  tab.appendChild(head);
  tr.tensors.forEach(function (x) {
    var r = el("tr"), st = x.stores + x.updates;
    var cells = [x.name + " (" + x.role + ")",
      st ? String(x.stores) : "-", st ? String(x.distinct) : "-",
      st && x.distinct ? "x" + (x.stores / x.distinct).toFixed(2) : "-",
      x.updates ? String(x.updates) : "-",
      st ? (x.loadsBy / st).toFixed(2) : "-",
      x.loadsOf ? x.loadsOf + " of " + x.distinctLoaded : "-",
      x.allocs ? String(x.peak) : String(x.ext.reduce(function (a, b) { return a * b; }, 1) * x.bytes),
      x.allocs ? String(x.allocs) : "-"];
    cells.forEach(function (c) { r.appendChild(el("td", "", c)); });
    tab.appendChild(r);
  });
  tr.inlined.forEach(function (name) {
    var r = el("tr");
    r.appendChild(el("td", "", name + " (inlined)"));
    var td = el("td", "", "computed inside each use: see its consumers' loads/store");
    td.colSpan = 8;
    td.style.textAlign = "left";
    r.appendChild(td);
    tab.appendChild(r);
  });
  return tab;
};

Panel.prototype.apply = function (i) {
  var g = this.grids[this.ten[i]], e = this.elem[i];
  switch (this.kind[i]) {
  case STORE: g.lastStore[e] = this.tick[i]; g.count[e]++; g.thread[e] = this.thr[i]; break;
  case LOAD: g.lastLoad[e] = this.tick[i]; break;
  case ALLOC: this.live[e] = this.ten[i]; break;
  case FREE: delete this.live[e]; break;
  }
};

/* Events up to tick T applied (from the start when going back). */
Panel.prototype.seek = function (T) {
  if (T < this.T) {
    this.grids.forEach(function (g) { g.reset(); });
    this.live = {};
    this.p = 0;
  }
  while (this.p < this.n && this.tick[this.p] <= T) this.apply(this.p++);
  this.T = T;
  /* the events of tick T */
  var k = this.p;
  while (k > 0 && this.tick[k - 1] === T) k--;
  this.cur = [k, this.p];
};

/* The region of allocation a of grid g, as cells: one rectangle per slice. */
Panel.prototype.allocRects = function (g, a) {
  var r = this.tr.allocs[a], x = g.t, nd = x.ext.length, out = [];
  if (nd < 2) return out;
  var lead = [], d, total = 1;
  for (d = 0; d < nd - 2; d++) { lead.push([r[d] - x.lo[d], r[nd + d]]); total *= r[nd + d]; }
  if (total > 256) total = 256;
  for (var s = 0; s < total; s++) {
    var idx = 0, rem = s;
    for (d = nd - 3; d >= 0; d--) {
      var c = lead[d][0] + rem % lead[d][1];
      rem = Math.floor(rem / lead[d][1]);
      lead[d].cur = c;
    }
    for (d = 0; d < nd - 2; d++) idx = idx * x.ext[d] + lead[d].cur;
    var e = (idx * g.rows + (r[nd - 2] - x.lo[nd - 2])) * g.cols + (r[nd - 1] - x.lo[nd - 1]);
    var p = g.xy(e);
    out.push([p[0], p[1], r[2 * nd - 1], r[2 * nd - 2]]);
  }
  return out;
};

Panel.prototype.draw = function (T, fade) {
  var self = this;
  this.seek(Math.min(T, Math.max(0, this.tr.ticks - 1)));
  var done = T >= this.tr.ticks;
  this.grids.forEach(function (g, gi) { self.drawGrid(g, self.canvases[gi], self.T, fade, done); });
  /* the nest's current lines and loop values, per thread */
  var c, i, cur = {}, byThread = {};
  this.lineEls.forEach(function (s) { if (s) s.className = ""; });
  for (i = this.cur[0]; i < this.cur[1] && !done; i++) {
    var ln = this.line[i];
    if (this.lineEls[ln]) {
      this.lineEls[ln].className = "cur";
      cur[ln] = true;
    }
    if (this.kind[i] !== STORE || this.iterAt[i] < 0) continue;
    var at = this.iterAt[i], cnt = this.tr.iters[at], names = this.tr.lineLoops[ln] || [];
    var b = byThread[this.thr[i]] || (byThread[this.thr[i]] = {});
    for (c = 0; c < cnt; c++) {
      var v = this.tr.iters[at + 1 + c], nm = names[c] || "?";
      if (!b[nm]) b[nm] = [v, v, c]; else { b[nm][0] = Math.min(b[nm][0], v); b[nm][1] = Math.max(b[nm][1], v); }
    }
  }
  var lines = [], ths = Object.keys(byThread);
  ths.slice(0, 6).forEach(function (th) {
    var b = byThread[th], ks = Object.keys(b).sort(function (p, q) { return b[p][2] - b[q][2]; });
    lines.push((self.tr.threads > 1 ? "thread " + th + ": " : "") + ks.map(function (k2) {
      return k2 + "=" + (b[k2][0] === b[k2][1] ? b[k2][0] : b[k2][0] + ".." + b[k2][1]);
    }).join(" "));
  });
  if (ths.length > 6) lines.push("... " + (ths.length - 6) + " more threads");
  this.iters.textContent = done ? "done at tick " + this.tr.ticks : lines.join("\n");
  this.sub.className = done ? "sub done" : "sub";
};

Panel.prototype.drawGrid = function (g, canvas, T, fade, done) {
  var ctx = canvas.getContext("2d"), off = g.off.getContext("2d");
  var img = off.createImageData(g.w, g.h), px = img.data, n = g.n, e, k;
  var isStage = g.t.role === "stage", live = false;
  for (k in this.live) if (this.live[k] === this.grids.indexOf(g)) live = true;
  g.inside.fill(isStage ? 0 : 1);
  if (isStage) this.markLive(g);
  for (k = 0; k < px.length; k += 4) { px[k] = px[k + 1] = px[k + 2] = 255; px[k + 3] = 255; }
  for (e = 0; e < n; e++) {
    var r, gg, b, h;
    if (g.count[e] === 0) { r = gg = b = g.t.role === "input" ? 232 : 246; }
    else if (g.count[e] === 1) { r = 200; gg = 232; b = 200; }
    else { var m = Math.min(1, (g.count[e] - 1) / 3); r = 246; gg = Math.round(205 - 60 * m); b = Math.round(160 - 80 * m); }
    if (isStage && !g.inside[e]) { r = Math.round(r * 0.8); gg = Math.round(gg * 0.8); b = Math.round(b * 0.8); }
    if (!done) {
      var dl = T - g.lastLoad[e];
      if (dl >= 0 && dl < fade) {
        h = 1 - dl / fade;
        r += (80 - r) * h; gg += (120 - gg) * h; b += (235 - b) * h;
      }
      var ds = T - g.lastStore[e];
      if (ds >= 0 && ds < fade) {
        var c = threadRGB(g.thread[e]);
        h = ds === 0 ? 1 : 0.75 * (1 - ds / fade);
        r += (c[0] - r) * h; gg += (c[1] - gg) * h; b += (c[2] - b) * h;
      }
    }
    var p = g.xy(e), o = (p[1] * g.w + p[0]) * 4;
    px[o] = r; px[o + 1] = gg; px[o + 2] = b;
  }
  off.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(g.off, 0, 0, g.w * this.cell, g.h * this.cell);
  var cs = this.cell, self = this, gi = this.grids.indexOf(g);
  if (cs >= 6) {   /* grid lines */
    ctx.strokeStyle = "rgba(0,0,0,0.08)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (k = 1; k < g.w; k++) { ctx.moveTo(k * cs + 0.5, 0); ctx.lineTo(k * cs + 0.5, g.h * cs); }
    for (k = 1; k < g.h; k++) { ctx.moveTo(0, k * cs + 0.5); ctx.lineTo(g.w * cs, k * cs + 0.5); }
    ctx.stroke();
  }
  /* live allocations */
  ctx.strokeStyle = "rgb(200,40,40)";
  ctx.lineWidth = 2;
  if (isStage && live && !done)
    Object.keys(this.live).forEach(function (a) {
      if (self.live[a] !== gi) return;
      self.allocRects(g, +a).forEach(function (q) { ctx.strokeRect(q[0] * cs + 1, q[1] * cs + 1, q[2] * cs - 2, q[3] * cs - 2); });
    });
  /* vector lanes stored at T: one box per thread and line */
  if (done) return;
  var groups = {};
  for (var i = this.cur[0]; i < this.cur[1]; i++) {
    if (this.ten[i] !== gi || this.kind[i] !== STORE || this.lane[i] < 0) continue;
    var key = this.thr[i] + ":" + this.line[i], q = g.xy(this.elem[i]);
    var bx = groups[key] || (groups[key] = [q[0], q[1], q[0], q[1], this.thr[i]]);
    bx[0] = Math.min(bx[0], q[0]); bx[1] = Math.min(bx[1], q[1]);
    bx[2] = Math.max(bx[2], q[0]); bx[3] = Math.max(bx[3], q[1]);
  }
  ctx.lineWidth = 2;
  Object.keys(groups).forEach(function (key2) {
    var x = groups[key2];
    ctx.strokeStyle = "rgb(20,20,20)";
    ctx.strokeRect(x[0] * cs, x[1] * cs, (x[2] - x[0] + 1) * cs, (x[3] - x[1] + 1) * cs);
  });
};

/* Marks the cells of g inside its live allocations. */
Panel.prototype.markLive = function (g) {
  var self = this, gi = this.grids.indexOf(g), x = g.t, nd = x.ext.length;
  Object.keys(this.live).forEach(function (a) {
    if (self.live[a] !== gi) return;
    var r = self.tr.allocs[+a], cnt = 1, d, s;
    for (d = 0; d < nd; d++) cnt *= r[nd + d];
    for (s = 0; s < cnt; s++) {
      var rem = s, e = 0, mul = 1;
      for (d = nd - 1; d >= 0; d--) {
        e += (r[d] - x.lo[d] + rem % r[nd + d]) * mul;
        rem = Math.floor(rem / r[nd + d]);
        mul *= x.ext[d];
      }
      if (e >= 0 && e < g.n) g.inside[e] = 1;
    }
  });
};

/* ---- the page ---------------------------------------------------------------- */

var data = JSON.parse(document.getElementById("txc-data").textContent);
var controls = el("div", "");
controls.id = "controls";
document.body.appendChild(controls);
var main = el("div", "");
main.id = "panels";
document.body.appendChild(main);
var width = data.traces.length > 1 ? Math.floor(560 / data.traces.length * 1.4) : 640;
var panels = data.traces.map(function (tr) { return new Panel(tr, main, width); });
var maxT = 0;
data.traces.forEach(function (tr) { maxT = Math.max(maxT, tr.ticks); });

function button(id, text, title) {
  var b = el("button", "", text);
  b.id = id;
  b.title = title;
  controls.appendChild(b);
  return b;
}
var play = button("play", "play", "play / pause (space)");
var back = button("back", "\u25c0 step", "one tick back (left arrow)");
var fwd = button("step", "step \u25b6", "one tick on (right arrow)");
var restart = button("restart", "\u23ee start", "back to tick 0");
function select(id, label, values, dflt) {
  var l = el("label", "", label + " "), s = el("select");
  s.id = id;
  values.forEach(function (v) {
    var o = el("option", "", String(v));
    o.value = String(v);
    s.appendChild(o);
  });
  s.value = String(dflt);
  l.appendChild(s);
  controls.appendChild(l);
  return s;
}
var speeds = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
var dspeed = speeds[0];
speeds.forEach(function (v) { if (v <= maxT / 20) dspeed = v; });
var speed = select("speed", "ticks/s", speeds, dspeed);
var fades = [1, 2, 4, 8, 16, 32, 64, 128, 256];
var dfade = 4;
fades.forEach(function (v) { if (v <= maxT / 40) dfade = v; });
var fadeSel = select("fade", "fade", fades, dfade);
var seekBar = el("input");
seekBar.type = "range";
seekBar.id = "seek";
seekBar.min = "0";
seekBar.max = String(maxT);
seekBar.value = "0";
controls.appendChild(seekBar);
var clock = el("span", "", "");
clock.id = "clock";
controls.appendChild(clock);

var T = 0, playing = false, last = 0, acc = 0;

function draw() {
  var fade = +fadeSel.value;
  panels.forEach(function (p) { p.draw(T, fade); });
  seekBar.value = String(T);
  clock.textContent = "tick " + T + " of " + maxT + (T >= maxT ? " (done)" : "");
  if (!failed) setStatus("ok tick=" + T);
}
function go(t) {
  T = Math.max(0, Math.min(maxT, Math.round(t)));
  draw();
}
function frame(now) {
  if (!playing) return;
  if (last) acc += (now - last) / 1000 * +speed.value;
  last = now;
  if (acc >= 1) {
    var k = Math.floor(acc);
    acc -= k;
    go(T + k);
    if (T >= maxT) { toggle(false); return; }
  }
  window.requestAnimationFrame(frame);
}
function toggle(on) {
  playing = on;
  play.textContent = on ? "pause" : "play";
  last = 0;
  acc = 0;
  if (on) {
    if (T >= maxT) go(0);
    window.requestAnimationFrame(frame);
  }
}
play.addEventListener("click", function () { toggle(!playing); });
fwd.addEventListener("click", function () { toggle(false); go(T + 1); });
back.addEventListener("click", function () { toggle(false); go(T - 1); });
restart.addEventListener("click", function () { toggle(false); go(0); });
seekBar.addEventListener("input", function () { toggle(false); go(+seekBar.value); });
fadeSel.addEventListener("change", draw);
document.addEventListener("keydown", function (e) {
  if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
  if (e.key === " ") { toggle(!playing); e.preventDefault(); }
  else if (e.key === "ArrowRight") { toggle(false); go(T + 1); }
  else if (e.key === "ArrowLeft") { toggle(false); go(T - 1); }
});

var hash = String(window.location.hash || "");
var m = /tick=(\d+|end)/.exec(hash);
go(m ? (m[1] === "end" ? maxT : +m[1]) : 0);
/* #steps=K: press "step" K times, as a test in a headless browser does */
var ms = /steps=(\d+)/.exec(hash);
for (var k = 0; ms && k < +ms[1]; k++) fwd.click();
if (/play/.test(hash)) toggle(true);
window.txcViz = { go: go, ticks: maxT, panels: panels };
})();
