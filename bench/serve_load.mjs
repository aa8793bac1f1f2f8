// Load generator for a running `kvscope serve` (bigger runs than the ServerLoad test): C concurrent
// streaming clients send N completions with mixed prompt lengths and report latency percentiles and
// aggregate generated tokens/s. Uses only Node's built-in fetch.
// Usage: node bench/serve_load.mjs [--url http://127.0.0.1:8080/v1] [--clients 64] [--requests 512]
//                                   [--max-tokens 64] [--max-prompt-words 80] [--api-key KEY]
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const url = args.url ?? 'http://127.0.0.1:8080/v1';
const clients = Number(args.clients ?? 64), requests = Number(args.requests ?? 512);
const maxTokens = Number(args['max-tokens'] ?? 64), maxWords = Number(args['max-prompt-words'] ?? 80);
const headers = { 'Content-Type': 'application/json', ...(args['api-key'] ? { Authorization: `Bearer ${args['api-key']}` } : {}) };

const pct = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(p * v.length))];
let next = 0, tokens = 0, failed = 0;
const lat = [], ttft = [];
const t0 = performance.now();

async function client() {
  for (let i; (i = next++) < requests;) {
    const words = 1 + ((i * 7919) % maxWords);
    const prompt = `Request ${i}:` + ' and then'.repeat(words);
    const start = performance.now();
    let first = -1;
    try {
      const r = await fetch(`${url}/completions`, {
        method: 'POST', headers,
        body: JSON.stringify({ prompt, max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true } }),
      });
      if (r.status !== 200) throw new Error(`status ${r.status}: ${await r.text()}`);
      const dec = new TextDecoder();
      let buf = '';
      for await (const part of r.body) {
        if (first < 0) first = performance.now() - start;
        buf += dec.decode(part, { stream: true });
        let e;
        while ((e = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, e);
          buf = buf.slice(e + 2);
          if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
          const j = JSON.parse(ev.slice(6));
          if (j.usage) tokens += j.usage.completion_tokens;
        }
      }
      lat.push(performance.now() - start);
      ttft.push(first);
    } catch (err) {
      failed++;
      console.error(`request ${i}: ${err.message}`);
    }
  }
}

await Promise.all(Array.from({ length: clients }, client));
const wall = (performance.now() - t0) / 1000;
console.log(JSON.stringify({
  requests, clients, failed, wall_s: +wall.toFixed(2), gen_tok_s: +(tokens / wall).toFixed(1),
  latency_ms: { p50: Math.round(pct(lat, 0.5)), p99: Math.round(pct(lat, 0.99)) },
  ttft_ms: { p50: Math.round(pct(ttft, 0.5)), p99: Math.round(pct(ttft, 0.99)) },
}));
process.exit(failed ? 1 : 0);
