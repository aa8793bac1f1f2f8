// kvscope web UI: the chat playground. Streams answers over SSE and shows what the server reports in
// its `kvscope` extension: the reasoning mode chosen and why, the d (difficulty) trace over generated
// tokens, and the answer's confidence (the server's signals when it sends them, else computed here
// from the log-probabilities this page asks for).
'use strict';

const $ = (id) => document.getElementById(id);
const state = { history: [], chatTakesReasoning: true, busy: false, abort: null };
const ANSWER_CUE = 'Answer:';  // the reasoning format's answer cue (ReasoningFormat::answer_cue)

function status(text, isError) {
  const s = $('status');
  s.textContent = text || '';
  s.className = isError ? 'error' : 'note';
}

// The request for one question: chat keeps the conversation; reasoning goes to whichever endpoint
// takes it on this server (chat may not: then /v1/completions, without the history).
function buildRequest(question) {
  const ep = $('endpoint').value, reasoning = $('reasoning').value;
  const common = {
    max_tokens: Math.max(1, parseInt($('max_tokens').value, 10) || 128),
    temperature: Math.max(0, parseFloat($('temperature').value) || 0),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (ep === 'chat' && (!reasoning || state.chatTakesReasoning)) {
    const messages = [];
    const sys = $('system').value.trim();
    if (sys) messages.push({ role: 'system', content: sys });
    for (const m of state.history) messages.push(m);
    messages.push({ role: 'user', content: question });
    const body = Object.assign({ messages, logprobs: true, top_logprobs: 1 }, common);
    if (reasoning) body.reasoning = reasoning;
    return { kind: 'chat', path: '/v1/chat/completions', body, reasoning };
  }
  const body = Object.assign({ prompt: question, logprobs: 1 }, common);
  if (reasoning) body.reasoning = reasoning;
  const note = ep === 'chat' ? "this server takes 'reasoning' on /v1/completions only: sent there, without the chat history" : '';
  return { kind: 'completion', path: '/v1/completions', body, reasoning, note };
}

function newMessage(req) {
  const box = KV.el('div', 'msg assistant');
  const details = KV.el('details', 'reasoning hidden');
  const summary = KV.el('summary', null, 'Reasoning');
  const reasoningText = KV.el('div', 'reasoning-text');
  details.append(summary, reasoningText);
  const answer = KV.el('div', 'answer streaming');
  const meta = KV.el('div', 'meta');
  const why = KV.el('div', 'why hidden');
  const plots = KV.el('div', 'plots');
  const probPlot = KV.plotBox('Token probability over generated tokens (top-1, from logprobs)');
  probPlot.canvas.className = 'prob-plot';
  const dPlot = KV.plotBox('d (difficulty estimate) over generated tokens');
  dPlot.canvas.className = 'd-plot';
  dPlot.box.classList.add('hidden');
  plots.append(probPlot.box, dPlot.box);
  box.append(details, answer, meta, why, plots);
  if (req.note) box.insertBefore(KV.el('div', 'note', req.note), details);
  $('log').appendChild(box);
  return {
    box, details, summary, reasoningText, answer, meta, why, probCanvas: probPlot.canvas, dBox: dPlot.box, dCanvas: dPlot.canvas,
    req, text: '', chunks: 0, reasoningContent: '', probs: [], ext: null, usage: null, finish: null,
    t0: performance.now(), tFirst: null, tLast: null, drawQueued: false, done: false,
  };
}

// Top-1 probabilities of the tokens in one chunk's logprobs (chat or completions shape).
function chunkProbs(lp) {
  const out = [];
  if (!lp) return out;
  if (Array.isArray(lp.content)) {
    for (const t of lp.content) {
      const top = t.top_logprobs && t.top_logprobs.length ? t.top_logprobs[0].logprob : t.logprob;
      out.push(Math.exp(top));
    }
  } else if (Array.isArray(lp.token_logprobs)) {
    lp.token_logprobs.forEach((l, i) => {
      const tops = lp.top_logprobs && lp.top_logprobs[i] ? Object.values(lp.top_logprobs[i]) : [];
      out.push(Math.exp(tops.length ? Math.max(...tops) : l));
    });
  }
  return out;
}

function onEvent(msg, ev) {
  if (ev.kvscope) msg.ext = ev.kvscope;
  if (ev.usage) msg.usage = ev.usage;
  const c = ev.choices && ev.choices[0];
  if (c) {
    let piece = '', r = '';
    if (c.delta) {
      piece = c.delta.content || '';
      // Thinking models (vLLM / llama.cpp convention) stream their reasoning separately.
      r = c.delta.reasoning_content || c.delta.reasoning || '';
      if (r) msg.reasoningContent += r;
    } else if (typeof c.text === 'string') {
      piece = c.text;
    }
    if (piece) msg.text += piece;
    if (piece || r) msg.box.dataset.chunks = String(++msg.chunks);  // SSE events that carried text
    const probs = chunkProbs(c.logprobs);
    for (const p of probs) msg.probs.push(p);
    if ((piece || probs.length) && msg.tFirst === null) msg.tFirst = performance.now();
    if (piece || probs.length) msg.tLast = performance.now();
    if (c.finish_reason) msg.finish = c.finish_reason;
  }
  // Text is drawn as it arrives; the plot at most once a frame.
  renderText(msg);
  if (!msg.drawQueued) {
    msg.drawQueued = true;
    requestAnimationFrame(() => { msg.drawQueued = false; render(msg); });
  }
}

// The reasoning and the answer: a separate reasoning field when the server sends one, else (for a
// reasoning request) the text before the answer cue.
function split(msg) {
  if (msg.reasoningContent) return { reasoning: msg.reasoningContent, answer: msg.text };
  // Thinking models whose think block arrives inline in the content.
  const open = msg.text.indexOf('<think>');
  if (open >= 0) {
    const close = msg.text.indexOf('</think>', open);
    if (close < 0) return { reasoning: msg.text.slice(open + 7), answer: msg.text.slice(0, open) };
    return { reasoning: msg.text.slice(open + 7, close).trim(), answer: (msg.text.slice(0, open) + msg.text.slice(close + 8)).trim() };
  }
  const r = msg.ext && msg.ext.reasoning;
  const reasoned = msg.req.reasoning || r;
  if (!reasoned) return { reasoning: '', answer: msg.text };
  const i = msg.text.lastIndexOf(ANSWER_CUE);
  if (i < 0) return msg.done ? { reasoning: '', answer: msg.text } : { reasoning: msg.text, answer: '' };
  return { reasoning: msg.text.slice(0, i).trim(), answer: msg.text.slice(i + ANSWER_CUE.length).trim() };
}

function confidenceOf(msg) {
  const s = msg.ext && msg.ext.signals;
  // The learned probe's P(correct) is calibrated on the model's own right and wrong answers; the
  // mean top-token probability is near 1 even when the answer is wrong.
  if (s && typeof s.kv_probe === 'number') return { value: s.kv_probe, source: 'server signals (kv_probe: the KV confidence probe, P(correct))' };
  if (s && typeof s.max_prob === 'number') return { value: s.max_prob, source: 'server signals (max_prob)' };
  const r = msg.ext && msg.ext.reasoning;
  if (r && typeof r.answer_confidence === 'number') return { value: r.answer_confidence, source: 'server: reasoning answer confidence' };
  if (msg.probs.length) {
    const mean = msg.probs.reduce((a, b) => a + b, 0) / msg.probs.length;
    return { value: mean, source: 'computed here from logprobs: mean top-1 probability of ' + msg.probs.length + ' tokens' };
  }
  return null;
}

function chip(parent, label, value, cls, title) {
  const c = KV.el('span', 'chip' + (cls ? ' ' + cls : ''));
  c.append(label + ' ');
  c.appendChild(KV.el('b', null, value));
  if (title) c.title = title;
  parent.appendChild(c);
  return c;
}

function renderWhy(msg, r) {
  const why = msg.why;
  why.replaceChildren();
  why.classList.remove('hidden');
  why.appendChild(KV.el('div', null, 'Why this effort:'));
  const ul = KV.el('ul');
  const li = (t) => ul.appendChild(KV.el('li', null, t));
  li('asked for ' + r.requested + '; started in ' + r.initial_mode + (r.source ? ' (decided by: ' + r.source + ')' : ''));
  if (r.reason) li('reason: ' + r.reason);
  if (typeof r.initial_difficulty === 'number')
    li('difficulty d = ' + KV.fmt(r.initial_difficulty, 1) + ' (0-100)' + (typeof r.confidence === 'number' ? ', estimator confidence ' + KV.fmt(r.confidence, 2) : '') +
       (typeof r.estimate_ms === 'number' ? ', estimated in ' + KV.fmt(r.estimate_ms) + ' ms' : ''));
  for (const s of r.switches || [])
    li('after ' + s.generated + ' tokens: ' + s.action + ' ' + s.from + ' → ' + s.to + (s.reason ? ' (' + s.reason + ')' : ''));
  if (r.answered_early) li('answered early (reasoning cut, answer cue added)');
  if (r.attempts > 1) li(r.attempts + ' attempts');
  why.appendChild(ul);
}

function renderText(msg) {
  const { reasoning, answer } = split(msg);
  if (msg.answer.textContent !== answer) msg.answer.textContent = answer;
  msg.answer.classList.toggle('streaming', !msg.done);
  if (reasoning) {
    msg.details.classList.remove('hidden');
    if (msg.reasoningText.textContent !== reasoning) msg.reasoningText.textContent = reasoning;
    msg.summary.textContent = 'Reasoning (' + reasoning.length + ' characters)' + (msg.done ? '' : ' …');
    if (!msg.done && !answer) msg.details.open = true;
  }
}

function render(msg) {
  renderText(msg);
  KV.lineChart(msg.probCanvas, [{ name: 'p(top-1)', points: msg.probs.map((p, i) => [i + 1, p]) }],
    { yMin: 0, yMax: 1, xMin: 1, empty: 'waiting for tokens' });
  if (msg.done) renderFinal(msg);
}

function renderFinal(msg) {
  const m = msg.meta;
  m.replaceChildren();
  const r = msg.ext && msg.ext.reasoning;
  if (r) {
    chip(m, 'effort', r.mode, 'effort', 'the reasoning mode that produced the answer');
    if (r.requested === 'auto') chip(m, 'auto chose', r.initial_mode);
  } else if (msg.req.reasoning) {
    chip(m, 'effort', msg.req.reasoning + ' (not reported)');
  }
  const conf = confidenceOf(msg);
  if (conf) {
    const cls = conf.value >= 0.8 ? 'conf-high' : conf.value >= 0.5 ? 'conf-mid' : 'conf-low';
    const c = chip(m, 'confidence', KV.fmt(conf.value, 3), 'confidence ' + cls, conf.source);
    c.dataset.value = String(conf.value);
    m.appendChild(KV.el('span', 'note confidence-source', '(' + conf.source + ')'));
  }
  const u = msg.usage;
  const n = u ? u.completion_tokens : msg.probs.length;
  chip(m, 'tokens', String(n));
  if (msg.tFirst !== null) chip(m, 'TTFT', KV.fmt(msg.tFirst - msg.t0, 0) + ' ms');
  if (msg.tFirst !== null && msg.tLast > msg.tFirst && n > 1) chip(m, 'speed', KV.fmt((n - 1) / ((msg.tLast - msg.tFirst) / 1000)) + ' tok/s');
  if (msg.ext && msg.ext.prompt_tokens_cached > 0) chip(m, 'prompt cached', msg.ext.prompt_tokens_cached + ' tokens');
  if (msg.finish) chip(m, 'finish', msg.finish);
  if (r) renderWhy(msg, r);
  const trace = r && Array.isArray(r.trace) ? r.trace : [];
  msg.box.dataset.tracePoints = String(trace.length);
  if (trace.length) {
    msg.dBox.classList.remove('hidden');
    const byAttempt = new Map();
    for (const p of trace) {
      if (!byAttempt.has(p.attempt)) byAttempt.set(p.attempt, []);
      byAttempt.get(p.attempt).push([p.generated, p.difficulty]);
    }
    const series = [...byAttempt.entries()].map(([a, pts]) => ({ name: 'attempt ' + a, points: pts, dots: true }));
    const markers = (r.switches || []).map((s) => ({ x: s.generated, label: s.action }));
    KV.lineChart(msg.dCanvas, series, { yMin: 0, yMax: 100, xMin: 0, markers, legend: true });  // d is on the estimator's 0-100 scale
  }
  if (msg.details.open && split(msg).answer) msg.details.open = false;  // collapsed once the answer is there
}

async function send() {
  const question = $('prompt').value.trim();
  if (!question || state.busy) return;
  state.busy = true;
  $('send').disabled = true;
  $('stop').classList.remove('hidden');
  $('log').appendChild(KV.el('div', 'msg user', question));
  $('prompt').value = '';
  let req = buildRequest(question);
  let msg = newMessage(req);
  state.abort = new AbortController();
  status('generating…');
  try {
    try {
      await KV.postStream(req.path, req.body, (ev) => onEvent(msg, ev), state.abort.signal);
    } catch (e) {
      // The server does not take 'reasoning' on chat yet: ask again on /v1/completions.
      if (!(e instanceof KV.ApiError && e.status === 400 && e.param === 'reasoning' && req.kind === 'chat')) throw e;
      state.chatTakesReasoning = false;
      msg.box.remove();
      req = buildRequest(question);
      msg = newMessage(req);
      await KV.postStream(req.path, req.body, (ev) => onEvent(msg, ev), state.abort.signal);
    }
    msg.done = true;
    render(msg);
    if (req.kind === 'chat') {
      state.history.push({ role: 'user', content: question });
      state.history.push({ role: 'assistant', content: msg.text });
    }
    status('');
  } catch (e) {
    msg.done = true;
    render(msg);
    if (e.name === 'AbortError') status('stopped');
    else { msg.box.appendChild(KV.el('div', 'error', String(e.message || e))); status('request failed', true); }
  } finally {
    state.busy = false;
    state.abort = null;
    $('send').disabled = false;
    $('stop').classList.add('hidden');
    msg.box.scrollIntoView({ block: 'nearest' });
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('send').addEventListener('click', send);
  $('stop').addEventListener('click', () => state.abort && state.abort.abort());
  $('prompt').addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) send(); });
  $('clear').addEventListener('click', () => { state.history = []; $('log').replaceChildren(); });
  $('endpoint').addEventListener('change', () => $('system-row').classList.toggle('hidden', $('endpoint').value !== 'chat'));
  // An example fills the prompt (the user sends it, and may edit it first).
  for (const b of document.querySelectorAll('#examples .example'))
    b.addEventListener('click', () => { $('prompt').value = b.textContent; $('prompt').focus(); });
  KV.showModel();
});
