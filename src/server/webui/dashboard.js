// kvscope web UI: the dashboard. Polls GET /v1/stats and plots rates over each interval (tokens/s,
// time to first token, prefix-cache hit rate) and gauges (KV blocks), with the requests by reasoning
// mode and the answers' confidence histogram as bars.
'use strict';

const WINDOW_S = 120;
const dash = { samples: [], prev: null, timer: null, plots: {}, t0: performance.now() };

function card(id, label) {
  const c = KV.el('div', 'card');
  const v = KV.el('div', 'v', '–');
  v.id = 'card-' + id;
  c.append(v, KV.el('div', 'k', label));
  document.getElementById('cards').appendChild(c);
}

function plot(id, title) {
  const p = KV.plotBox(title);
  p.canvas.id = 'plot-' + id;
  document.getElementById('grid').appendChild(p.box);
  dash.plots[id] = p.canvas;
}

function setCard(id, text) { document.getElementById('card-' + id).textContent = text; }

// Interval rates from two consecutive snapshots.
function sample(prev, cur, dt) {
  const d = (f) => f(cur) - f(prev);
  const s = { t: (performance.now() - dash.t0) / 1000 };
  s.tps = d((x) => x.tokens.generated) / dt;
  s.prompt_tps = d((x) => x.tokens.prompt) / dt;
  const n = d((x) => x.ttft_seconds.count);
  s.ttft_ms = n > 0 ? 1000 * d((x) => x.ttft_seconds.sum) / n : null;
  const q = d((x) => (x.prefix_cache ? x.prefix_cache.queries : 0));
  s.hit_interval = q > 0 ? d((x) => x.prefix_cache.hits) / q : null;
  s.hit_total = cur.prefix_cache ? cur.prefix_cache.hit_rate : null;
  s.used = cur.kv ? cur.kv.blocks_used : null;
  s.cached = cur.kv ? cur.kv.blocks_cached : null;
  s.running = cur.requests.running;
  s.waiting = cur.requests.waiting;
  return s;
}

function series(key) { return dash.samples.map((s) => [s.t, s[key]]); }

function draw(cur) {
  const last = dash.samples[dash.samples.length - 1];
  const span = last ? Math.min(WINDOW_S, last.t) : 0;
  const tAxis = { xFormat: (x) => KV.fmt(x, span < 8 ? 1 : 0) + 's' };
  const xr = last ? { xMin: Math.max(0, last.t - WINDOW_S), xMax: last.t } : {};
  KV.lineChart(dash.plots.tps, [{ name: 'generated', points: series('tps') }, { name: 'prompt', points: series('prompt_tps') }],
    Object.assign({}, tAxis, xr));
  KV.lineChart(dash.plots.ttft, [{ name: 'mean TTFT (ms)', points: series('ttft_ms'), dots: true }],
    Object.assign({ empty: 'no first token in the window yet' }, tAxis, xr));
  // Scaled to what is in use (a pool of thousands of blocks would flatten it); the total is in the title.
  if (cur.kv) document.getElementById('plot-kv').previousSibling.textContent = 'KV cache blocks (pool: ' + cur.kv.blocks_total + ')';
  KV.lineChart(dash.plots.kv, [{ name: 'used', points: series('used') }, { name: 'cached (free, reusable)', points: series('cached') }],
    Object.assign({}, tAxis, xr));
  KV.lineChart(dash.plots.hit, [{ name: 'this interval', points: series('hit_interval'), dots: true }, { name: 'since start', points: series('hit_total') }],
    Object.assign({ yMin: 0, yMax: 1 }, tAxis, xr));
  KV.lineChart(dash.plots.queue, [{ name: 'running', points: series('running') }, { name: 'waiting', points: series('waiting') }],
    Object.assign({}, tAxis, xr));
  const modes = ['none', 'fast', 'mixed', 'slow'];
  for (const k of Object.keys(cur.requests_by_mode || {})) if (!modes.includes(k)) modes.push(k);
  KV.barChart(dash.plots.modes, modes, modes.map((k) => (cur.requests_by_mode || {})[k] || 0),
    { colors: ['#94a3b8', '#15803d', '#d97706', '#b91c1c', '#2563eb'], empty: 'no finished requests yet' });
  const h = cur.answer_confidence;
  const labels = h.le.map((b, i) => (i === 0 ? 0 : h.le[i - 1]).toFixed(1) + '–' + b.toFixed(1));
  KV.barChart(dash.plots.conf, labels, h.counts.slice(0, h.le.length), { empty: 'no answer confidence yet' });
}

async function poll() {
  try {
    const cur = await KV.getJSON('/v1/stats');
    const now = performance.now();
    if (dash.prev) {
      const dt = Math.max(0.05, (now - dash.prev.at) / 1000);
      dash.samples.push(sample(dash.prev.stats, cur, dt));
      const t = dash.samples[dash.samples.length - 1].t;
      while (dash.samples.length && dash.samples[0].t < t - WINDOW_S) dash.samples.shift();
    }
    dash.prev = { stats: cur, at: now };
    const last = dash.samples[dash.samples.length - 1];
    setCard('model', cur.model_loaded ? 'ready' : 'loading');
    setCard('tps', last ? KV.fmt(last.tps) : '–');
    setCard('requests', String(cur.requests.total));
    // A tenant's key sees its own counters: the queue and the KV pool are the server's, left out.
    setCard('inflight', cur.requests.in_flight == null ? '–' : String(cur.requests.in_flight));
    setCard('ttft', cur.ttft_seconds.count ? KV.fmt(1000 * cur.ttft_seconds.sum / cur.ttft_seconds.count) + ' ms' : '–');
    setCard('kv', cur.kv ? cur.kv.blocks_used + ' / ' + cur.kv.blocks_total : '–');
    setCard('hit', cur.prefix_cache ? KV.fmt(100 * cur.prefix_cache.hit_rate, 1) + ' %' : '–');
    const ac = cur.answer_confidence;
    setCard('conf', ac.count ? KV.fmt(ac.sum / ac.count, 3) : '–');
    draw(cur);
    document.getElementById('dash-status').textContent = 'Updated ' + new Date().toLocaleTimeString() + '.' +
      (cur.scope === 'tenant' ? ' Showing this API key\'s requests only.' : '');
    document.getElementById('dash-status').className = '';
  } catch (e) {
    document.getElementById('dash-status').textContent = 'Cannot read /v1/stats: ' + (e.message || e);
    document.getElementById('dash-status').className = 'error';
  }
}

function schedule() {
  if (dash.timer) clearInterval(dash.timer);
  dash.timer = setInterval(poll, parseInt(document.getElementById('period').value, 10));
}

document.addEventListener('DOMContentLoaded', () => {
  card('model', 'model');
  card('tps', 'generated tokens/s');
  card('requests', 'requests (total)');
  card('inflight', 'in flight');
  card('ttft', 'mean TTFT since start');
  card('kv', 'KV blocks used / total');
  card('hit', 'prefix-cache hit rate');
  card('conf', 'mean answer confidence');
  plot('tps', 'Tokens per second');
  plot('ttft', 'Time to first token (mean over the interval, ms)');
  plot('kv', 'KV cache blocks');
  plot('hit', 'Prefix-cache hit rate');
  plot('queue', 'Requests running / waiting');
  plot('modes', 'Finished requests by reasoning mode');
  plot('conf', 'Answer confidence histogram');
  document.getElementById('period').addEventListener('change', schedule);
  KV.showModel();
  poll();
  schedule();
});
