// Browser test of kvscope's web UI: Debian's Chromium (/usr/bin/chromium) driven by playwright-core
// (tools/webtest/setup.sh installs it; no browser is ever downloaded). Starts `kvscope serve` with
// the embedded default model and an API key, enters the key in the page's form, asks a question in
// the chat and checks that the answer streams in, that a confidence value and the plots are drawn,
// then opens the dashboard and checks that its plots move while requests run. Screenshots go to
// the artifacts folder. Nothing outside 127.0.0.1 may be requested.
//
// Env: KVSCOPE_BIN (the kvscope binary), KVSCOPE_WEBTEST_DIR (where setup.sh installed
// playwright-core), KVSCOPE_WEBTEST_ARTIFACTS (screenshots; default build/webtest-artifacts),
// KVSCOPE_CHROMIUM (default /usr/bin/chromium), KVSCOPE_WEBTEST_MODEL (default: the embedded model).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const bin = process.env.KVSCOPE_BIN || path.join(root, 'build', 'release', 'kvscope');
const modDir = process.env.KVSCOPE_WEBTEST_DIR || path.join(root, 'build', 'npm-webtest');
const artifacts = process.env.KVSCOPE_WEBTEST_ARTIFACTS || path.join(root, 'build', 'webtest-artifacts');
const chromiumPath = process.env.KVSCOPE_CHROMIUM || '/usr/bin/chromium';
const KEY = 'webtest-key';
const { chromium } = createRequire(path.join(modDir, 'package.json'))('playwright-core');

let passed = 0;
async function check(name, fn) {
  const t0 = Date.now();
  await fn();
  passed++;
  console.log(`ok - ${name} (${Date.now() - t0} ms)`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the server -------------------------------------------------------------------------------
function startServer() {
  // A 10 ms analysis tick: the answers here take ~100 ms, so the d trace gets several points.
  // The operator's own key is an admin key: the dashboard's KV-pool and prefix-cache plots are the
  // server-wide view, which a tenant's key does not see (docs/server.md, API keys and tenants).
  const args = ['serve', '--port', '0', '-t', '2', '--admin-key', KEY, '--analysis-interval', '10'];
  if (process.env.KVSCOPE_WEBTEST_MODEL) args.push('-m', process.env.KVSCOPE_WEBTEST_MODEL);
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const port = new Promise((resolve, reject) => {
    proc.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/http:\/\/127\.0\.0\.1:(\d+)\/v1/);
      if (m) resolve(+m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`kvscope serve exited (${code}):\n${log}`)));
  });
  return { proc, port, log: () => log };
}

async function waitHealthy(base) {
  for (let i = 0; i < 600; ++i) {
    try {
      const r = await fetch(base + '/health');
      if (r.status === 200) return;
    } catch (_) { /* not listening yet */ }
    await sleep(100);
  }
  throw new Error('the server did not become ready');
}

// Requests made from here while the dashboard is open (bearer key, logprobs so answers have a
// confidence, a long shared prefix so the prefix cache has something to hit).
async function load(base, n) {
  const prefix = 'Question: (1) Ann has 12 pencils. (2) Ann gives away 5 pencils. (3) Ann buys 9 more pencils. ';
  const one = async (i) => {
    const body = i % 3 === 2
      ? { prompt: prefix + `(4) Ann finds ${i} pencils. How many pencils does Ann have now?`, reasoning: 'auto', max_tokens: 96, temperature: 0, logprobs: 1 }
      : { prompt: prefix + `How many pencils does Ann have now? (${i})`, max_tokens: 48, temperature: 0, logprobs: 1 };
    const r = await fetch(base + '/v1/completions', {
      method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + KEY }, body: JSON.stringify(body),
    });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    JSON.parse(text);
  };
  const all = [];
  for (let i = 0; i < n; ++i) { all.push(one(i)); await sleep(250); }
  await Promise.all(all);
}

// Distinct non-empty text lengths drawn while answer number n was still streaming.
let page;
async function partialRenders(n) {
  const lengths = await page.evaluate(() => window.__lengths);
  return new Set(lengths.filter((x) => x.n === n && x.streaming && x.len > 0).map((x) => x.len)).size;
}

// Pixels of a canvas that are not blank: a drawn chart has lines, a blank one none.
function inkOf(page, selector) {
  return page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ++ink;
    return { ink, points: +(c.dataset.points || 0), draws: +(c.dataset.draws || 0) };
  });
}

// ---- the test ---------------------------------------------------------------------------------
fs.mkdirSync(artifacts, { recursive: true });
const server = startServer();
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvscope-webtest-'));
let context;
try {
  const port = await server.port;
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base);

  context = await chromium.launchPersistentContext(userDir, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1100, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Everything must come from the server itself.
  const foreign = [];
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' && +u.port === port) return route.continue();
    foreign.push(u.href);
    return route.abort();
  });
  page = context.pages()[0] || await context.newPage();
  const problems = [];
  let refused = 0, fellBack = false;
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => {
    // The key form itself is served with status 401; Chromium logs that load as an error.
    // A chat request with 'reasoning' gets a 400 from a server that takes it on completions only; the
    // page then asks /v1/completions (checked below).
    if (m.type() === 'error' && /status of 400/.test(m.text())) ++refused;
    else if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push('console: ' + m.text());
  });

  await check('/ asks for the API key (401) and the key form opens the chat', async () => {
    const r = await page.goto(base + '/');
    assert.equal(r.status(), 401);
    await page.getByText('API key required').waitFor();
    await page.fill('#key', KEY);
    await Promise.all([page.waitForNavigation(), page.click('form#login button[type=submit]')]);
    await page.locator('#prompt').waitFor();
    await page.locator('#model').filter({ hasText: /\S/ }).waitFor({ timeout: 10000 });
  });

  await check('a question streams its answer, with effort, confidence and plots', async () => {
    await page.selectOption('#endpoint', 'chat');
    await page.selectOption('#reasoning', 'auto');
    await page.fill('#max_tokens', '160');
    // Records the visible text's length at every change of the newest answer, to see it arrive in
    // pieces while it is still streaming.
    await page.evaluate(() => {
      window.__lengths = [];
      new MutationObserver(() => {
        const all = document.querySelectorAll('.msg.assistant');
        const m = all[all.length - 1];
        if (!m) return;
        const streaming = !!m.querySelector('.answer.streaming');
        const len = (m.querySelector('.answer').textContent + m.querySelector('.reasoning-text').textContent).length;
        window.__lengths.push({ n: all.length, len, streaming });
      }).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
    });
    await page.fill('#prompt', 'Question: (1) Mia starts with 29 candies. (2) Mia loses 5 candies. (3) Mia ends up with 3 times as many candies as before. (4) Mia buys 14 more candies. How many candies does Mia have now?');
    await page.click('#send');
    await page.locator('.msg.assistant .chip.confidence').waitFor({ timeout: 120000 });
    // The answer came as many SSE events (a fast model may finish them within a frame or two; the
    // next turn, a longer one, checks that partial text is drawn).
    const chunks = +(await page.getAttribute('.msg.assistant', 'data-chunks'));
    assert.ok(chunks >= 5, 'the answer arrived in several SSE events: ' + chunks);
    const partial = await partialRenders(1);
    const answer = (await page.textContent('.msg.assistant .answer')).trim();
    assert.ok(answer.length > 0, 'an answer is shown');
    const conf = +(await page.getAttribute('.msg.assistant .chip.confidence', 'data-value'));
    assert.ok(conf > 0 && conf <= 1, 'confidence in (0, 1]: ' + conf);
    const source = await page.textContent('.msg.assistant .confidence-source');
    assert.match(source, /signals|reasoning|logprobs/);
    const effort = await page.textContent('.msg.assistant .chip.effort');
    assert.match(effort, /effort (fast|mixed|slow)/);
    assert.match(await page.textContent('.msg.assistant .why'), /asked for auto/);
    const prob = await inkOf(page, '.msg.assistant canvas.prob-plot');
    assert.ok(prob.points > 0 && prob.ink > 200, 'token-probability plot drawn: ' + JSON.stringify(prob));
    // The d trace of the auto request (kvscope.reasoning.trace), drawn over the generated tokens when
    // d was re-estimated during the answer (every 5 tokens); no plot when it was not.
    const tracePoints = +(await page.getAttribute('.msg.assistant', 'data-trace-points'));
    const dShown = await page.isVisible('.msg.assistant canvas.d-plot');
    assert.equal(dShown, tracePoints > 0, `d plot shown iff the trace has points (${tracePoints})`);
    const d = await inkOf(page, '.msg.assistant canvas.d-plot');
    if (tracePoints > 0) assert.ok(d.points === tracePoints && d.ink > 100, 'd plot drawn: ' + JSON.stringify(d));
    fellBack = await page.isVisible(".msg.assistant .note >> text=/sent there/");
    const reasoningShown = await page.isVisible('.msg.assistant details.reasoning');
    console.log(`    answer ${JSON.stringify(answer.slice(0, 60))}; ${effort}; confidence ${conf.toFixed(3)} ${source}; ` +
      `${chunks} SSE text events, ${partial} partial renders; d trace ${tracePoints} points, plot ${d.points}; reasoning panel ${reasoningShown ? 'shown' : 'absent'}`);
    if (reasoningShown) await page.click('.msg.assistant details.reasoning summary');  // open it for the screenshot
    await page.screenshot({ path: path.join(artifacts, 'chat.png'), fullPage: true });
  });

  await check('a plain chat turn is drawn while it streams (no reasoning, confidence from logprobs)', async () => {
    await page.selectOption('#reasoning', '');
    await page.fill('#max_tokens', '120');
    await page.fill('#prompt', 'Question: (1) Tom has 4 boxes of 12 pens. (2) Tom gives 7 pens to Sam. (3) Tom buys 3 boxes more. How many pens does Tom have now?\nMode: slow');
    await page.click('#send');
    await page.locator('.msg.assistant >> nth=1 >> .chip.confidence').waitFor({ timeout: 60000 });
    const partial = await partialRenders(2);
    const final = (await page.textContent('.msg.assistant >> nth=1 >> .answer')).length;
    // Over both turns (a fast machine may deliver a short answer's events in one read).
    const both = partial + await partialRenders(1);
    assert.ok(both >= 2, `partial text drawn at least twice before the end of an answer (${partial} + turn 1; final length ${final})`);
    const src = await page.textContent('.msg.assistant >> nth=1 >> .confidence-source');
    assert.match(src, /signals|logprobs/);
    console.log(`    ${partial} partial renders of ${final} characters; confidence source: ${src}`);
  });

  await check('the example questions fill the prompt and the embedded model answers them right', async () => {
    await page.click('#clear');  // one question per conversation, as the model was trained
    await page.selectOption('#reasoning', '');
    await page.fill('#max_tokens', '160');
    const examples = page.locator('#examples .example');
    const n = await examples.count();
    assert.equal(n, 3, 'three example questions');
    assert.match(await page.textContent('#about'), /arithmetic demo[\s\S]*kvscope serve -m model\.gguf/);
    for (let i = 0; i < n; i++) {
      await page.click('#clear');
      const ex = examples.nth(i);
      const text = (await ex.textContent()).trim();
      await ex.click();
      assert.equal((await page.inputValue('#prompt')).trim(), text, 'the example fills the prompt');
      await page.click('#send');
      await page.locator('.msg.assistant .chip.confidence').waitFor({ timeout: 120000 });
      const answer = (await page.textContent('.msg.assistant .answer')).trim();
      const want = await ex.getAttribute('data-answer');
      assert.match(answer, new RegExp('(^|\\D)' + want + '$'), `example ${i + 1} (${text}) answered ${answer}, expected ${want}`);
      console.log(`    example ${i + 1}: ${JSON.stringify(text.slice(0, 50))} -> ${JSON.stringify(answer)}`);
    }
  });

  await check('/dashboard plots update while requests run', async () => {
    await page.goto(base + '/dashboard');
    await page.selectOption('#period', '500');
    await page.waitForFunction(() => document.getElementById('card-model').textContent === 'ready');
    const before = await inkOf(page, '#plot-tps');
    const reqBefore = +(await page.textContent('#card-requests'));
    await load(base, 12);
    await sleep(1200);  // two more polls after the last answer
    const after = await inkOf(page, '#plot-tps');
    assert.ok(after.draws > before.draws, `tokens/s plot redrawn: ${before.draws} -> ${after.draws}`);
    assert.ok(after.points > before.points, `more samples plotted: ${before.points} -> ${after.points}`);
    const reqAfter = +(await page.textContent('#card-requests'));
    assert.ok(reqAfter >= reqBefore + 12, `requests counted: ${reqBefore} -> ${reqAfter}`);
    for (const id of ['ttft', 'kv', 'hit', 'modes', 'conf']) {
      const p = await inkOf(page, '#plot-' + id);
      assert.ok(p.points > 0 && p.ink > 100, `${id} plot has data: ${JSON.stringify(p)}`);
    }
    const hit = await page.textContent('#card-hit');
    console.log(`    requests ${reqBefore} -> ${reqAfter}; tokens/s plot ${before.points} -> ${after.points} points; prefix-cache hit rate ${hit}`);
    await page.screenshot({ path: path.join(artifacts, 'dashboard.png'), fullPage: true });
  });

  await check('no request left 127.0.0.1 and the pages logged no errors', async () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(problems, []);
    assert.ok(refused <= 1 && (refused === 0 || fellBack), `400s: ${refused}, fallback note shown: ${fellBack}`);
  });
  console.log(`${passed} checks passed; screenshots in ${artifacts}`);
} catch (e) {
  console.error(e);
  console.error('--- kvscope serve stderr ---\n' + server.log());
  process.exitCode = 1;
} finally {
  if (context) await context.close().catch(() => {});
  server.proc.kill('SIGTERM');
  fs.rmSync(userDir, { recursive: true, force: true });
}
