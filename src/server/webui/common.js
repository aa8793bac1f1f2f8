// kvscope web UI, shared by the chat and the dashboard: the API key, requests to this server, an SSE
// reader and a small canvas plotter (line and bar charts). Nothing here fetches from elsewhere.
'use strict';

const KV = (() => {
  const KEY = 'kvscope_key';

  // The cookie holds the key as hex of its UTF-8 bytes (the server decodes it; see http_server.cpp).
  function hex(k) { return Array.from(new TextEncoder().encode(k), (b) => b.toString(16).padStart(2, '0')).join(''); }

  function getKey() { return localStorage.getItem(KEY) || ''; }
  // Kept in localStorage for the page's own requests (sent as a bearer header) and in a cookie for
  // the page loads the browser makes itself (the server accepts the cookie only for the UI's files).
  function setKey(k) {
    if (k) {
      localStorage.setItem(KEY, k);
      document.cookie = KEY + '=' + hex(k) + '; path=/; SameSite=Strict';
    } else {
      localStorage.removeItem(KEY);
      document.cookie = KEY + '=; path=/; max-age=0; SameSite=Strict';
    }
  }

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const k = getKey();
    if (k) h['Authorization'] = 'Bearer ' + k;
    return h;
  }

  class ApiError extends Error {
    constructor(status, body) {
      const e = body && body.error ? body.error : {};
      super(e.message || ('HTTP ' + status));
      this.status = status;
      this.param = e.param || null;
      this.code = e.code || null;
    }
  }

  async function failure(res) {
    let body = null;
    try { body = await res.json(); } catch (_) { /* not JSON */ }
    if (res.status === 401) askKey();
    return new ApiError(res.status, body);
  }

  async function getJSON(path) {
    const res = await fetch(path, { headers: headers(), cache: 'no-store' });
    if (!res.ok) throw await failure(res);
    return res.json();
  }

  // POSTs a streaming request and calls onEvent(obj) for each SSE data event until [DONE].
  async function postStream(path, body, onEvent, signal) {
    const res = await fetch(path, {
      method: 'POST', headers: headers({ 'Content-Type': 'application/json' }), body: JSON.stringify(body), signal,
    });
    if (!res.ok) throw await failure(res);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        for (const line of ev.split('\n')) {
          if (!line.startsWith('data: ')) continue;  // comments are heartbeats
          const data = line.slice(6);
          if (data === '[DONE]') return;
          onEvent(JSON.parse(data));
        }
      }
    }
  }

  // A key field shown when the server answers 401 (or when the user asks for it).
  function askKey() {
    let box = document.getElementById('keybox');
    if (!box) {
      box = document.createElement('div');
      box.id = 'keybox';
      box.className = 'panel';
      box.innerHTML = '<div class="row"><label for="keyinput">API key (sent as a bearer token; kept in this browser)</label>' +
        '<input id="keyinput" type="password" autocomplete="off">' +
        '<button class="primary" id="keysave">Save</button><button class="secondary" id="keyclear">Forget</button></div>';
      const main = document.querySelector('main');
      main.insertBefore(box, main.firstChild);
      box.querySelector('#keysave').addEventListener('click', () => { setKey(box.querySelector('#keyinput').value.trim()); location.reload(); });
      box.querySelector('#keyclear').addEventListener('click', () => { setKey(''); location.reload(); });
    }
    box.classList.remove('hidden');
    box.querySelector('#keyinput').value = getKey();
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (digits !== undefined) return v.toFixed(digits);
    if (a >= 1000) return v.toFixed(0);
    if (a >= 100) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(2);
  }

  // ---- plots ---------------------------------------------------------------------------------
  // Each chart draws into a <canvas> scaled for the screen's pixel ratio and records what it drew
  // in data-points (and data-draws, counted up per draw with data) so tests and people can check it.
  const COLORS = ['#2563eb', '#d97706', '#15803d', '#9333ea', '#dc2626', '#0891b2'];

  function setup(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 300, h = canvas.clientHeight || 150;
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      canvas.width = Math.round(w * ratio);
      canvas.height = Math.round(h * ratio);
    }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = '11px system-ui, sans-serif';
    return { g, w, h };
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function mark(canvas, points) {
    canvas.dataset.points = String(points);
    if (points > 0) canvas.dataset.draws = String((+canvas.dataset.draws || 0) + 1);
  }

  function frame(g, w, h, x0, x1, y0, y1, opt) {
    const L = 44, R = 10, T = 8, B = 22;
    g.strokeStyle = '#d9dde4';
    g.fillStyle = '#667085';
    g.lineWidth = 1;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; ++i) {
      const y = T + (h - T - B) * (1 - i / 4);
      g.beginPath(); g.moveTo(L, y); g.lineTo(w - R, y); g.stroke();
      g.fillText(fmt(y0 + (y1 - y0) * i / 4), L - 4, y);
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    if (opt.xTicks !== false) {
      for (let i = 0; i <= 4; ++i) {
        const x = L + (w - L - R) * i / 4;
        g.textAlign = i === 4 ? 'right' : 'center';  // the last label stays inside the canvas
        g.fillText(opt.xFormat ? opt.xFormat(x0 + (x1 - x0) * i / 4) : fmt(x0 + (x1 - x0) * i / 4, 0), x, h - B + 5);
      }
    }
    return {
      X: (x) => L + (w - L - R) * (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)),
      Y: (y) => T + (h - T - B) * (1 - (y1 === y0 ? 0.5 : (Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0))),
      L, R, T, B,
    };
  }

  // series: [{name, color, points: [[x, y], ...]}]; opt: {yMin, yMax, xMin, xMax, markers: [{x, label}], empty}
  function lineChart(canvas, series, opt) {
    opt = opt || {};
    const { g, w, h } = setup(canvas);
    let n = 0, xs = [], ys = [];
    for (const s of series) for (const [x, y] of s.points) if (y !== null && isFinite(y)) { xs.push(x); ys.push(y); ++n; }
    if (n === 0) {
      g.fillStyle = '#98a2b3'; g.textAlign = 'center'; g.textBaseline = 'middle';
      g.fillText(opt.empty || 'no data yet', w / 2, h / 2);
      mark(canvas, 0);
      return;
    }
    const x0 = opt.xMin !== undefined ? opt.xMin : Math.min(...xs);
    const x1 = opt.xMax !== undefined ? opt.xMax : Math.max(...xs);
    const y0 = opt.yMin !== undefined ? opt.yMin : Math.min(0, ...ys);
    const y1 = opt.yMax !== undefined ? opt.yMax : niceMax(Math.max(...ys));
    const f = frame(g, w, h, x0, x1, y0, y1, opt);
    for (const m of opt.markers || []) {
      g.strokeStyle = '#dc2626'; g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(f.X(m.x), f.T); g.lineTo(f.X(m.x), h - f.B); g.stroke();
      g.setLineDash([]);
      g.fillStyle = '#dc2626'; g.textAlign = 'left'; g.textBaseline = 'top';
      g.fillText(m.label, f.X(m.x) + 3, f.T);
    }
    series.forEach((s, i) => {
      const c = s.color || COLORS[i % COLORS.length];
      g.strokeStyle = c; g.fillStyle = c; g.lineWidth = 2;
      g.beginPath();
      let pen = false;
      for (const [x, y] of s.points) {
        if (y === null || !isFinite(y)) { pen = false; continue; }
        if (pen) g.lineTo(f.X(x), f.Y(y)); else g.moveTo(f.X(x), f.Y(y));
        pen = true;
      }
      g.stroke();
      if (s.points.length <= 2 || s.dots)
        for (const [x, y] of s.points) if (y !== null && isFinite(y)) { g.beginPath(); g.arc(f.X(x), f.Y(y), 2.5, 0, 7); g.fill(); }
    });
    if (series.length > 1 || opt.legend) {
      let lx = f.L + 6;
      g.textAlign = 'left'; g.textBaseline = 'top';
      series.forEach((s, i) => {
        g.fillStyle = s.color || COLORS[i % COLORS.length];
        g.fillRect(lx, f.T + 2, 10, 3);
        g.fillStyle = '#374151';
        g.fillText(s.name, lx + 13, f.T - 2);
        lx += 20 + g.measureText(s.name).width;
      });
    }
    mark(canvas, n);
  }

  // labels: [...], values: [...]
  function barChart(canvas, labels, values, opt) {
    opt = opt || {};
    const { g, w, h } = setup(canvas);
    const total = values.reduce((a, b) => a + b, 0);
    if (!labels.length || total === 0) {
      g.fillStyle = '#98a2b3'; g.textAlign = 'center'; g.textBaseline = 'middle';
      g.fillText(opt.empty || 'no data yet', w / 2, h / 2);
      mark(canvas, 0);
      return;
    }
    const f = frame(g, w, h, 0, labels.length, 0, niceMax(1.12 * Math.max(...values)), { xTicks: false });  // room for the labels
    const bw = (w - f.L - f.R) / labels.length;
    labels.forEach((lab, i) => {
      const x = f.L + bw * i, y = f.Y(values[i]);
      g.fillStyle = opt.colors ? opt.colors[i % opt.colors.length] : COLORS[0];
      g.fillRect(x + bw * 0.12, y, bw * 0.76, h - f.B - y);
      g.fillStyle = '#374151'; g.textAlign = 'center'; g.textBaseline = 'top';
      g.fillText(lab, x + bw / 2, h - f.B + 5);
      if (values[i] > 0) { g.textBaseline = 'bottom'; g.fillText(String(values[i]), x + bw / 2, y - 1); }
    });
    mark(canvas, values.filter((v) => v > 0).length);
  }

  function plotBox(title) {
    const box = el('div', 'plot');
    box.appendChild(el('h3', null, title));
    const c = el('canvas');
    box.appendChild(c);
    return { box, canvas: c };
  }

  async function showModel() {
    try {
      const m = await getJSON('/v1/models');
      const d = m.data && m.data[0];
      const span = document.getElementById('model');
      if (d && span) span.textContent = d.id + (d.kvscope && d.kvscope.n_ctx ? ' · ctx ' + d.kvscope.n_ctx : '');
      return d;
    } catch (e) {
      return null;
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    const b = document.getElementById('keybtn');
    if (b) b.addEventListener('click', askKey);
  });

  return { getKey, setKey, getJSON, postStream, askKey, ApiError, el, fmt, lineChart, barChart, plotBox, showModel };
})();
