// Perplexity and KL divergence (against llama.cpp's own F16 cache) of llama.cpp's KV cache types,
// teacher-forced on the same token chunks kvscope kv-eval uses (its --dump-tokens output).
// stdin: {"model": PATH, "chunks": [[ids]], "types": ["F16", "Q8_0", "Q4_0"], "threads": 2}
// stdout: one JSON line per type: {"type", "ppl", "mean_kl", "positions"}.
// Quantized V needs flash attention in llama.cpp, so every type runs with it on.
import {pathToFileURL} from "node:url";
import path from "node:path";
import fs from "node:fs";

const here = path.dirname(new URL(import.meta.url).pathname);
const oracleDir = process.env.KVSCOPE_ORACLE_DIR || path.join(here, "../../build/oracle");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(path.join(oracleDir, "node_modules/node-llama-cpp/dist/index.js")).href);

const req = JSON.parse(fs.readFileSync(0, "utf8"));
const llama = await getLlama({gpu: false, logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: req.model});
const maxLen = Math.max(...req.chunks.map((c) => c.length));

// Per position: a Map token -> log-probability over the vocabulary.
async function run(type) {
  const context = await model.createContext({
    contextSize: Math.max(maxLen, 16), threads: req.threads ?? 2, batchSize: Math.max(maxLen, 16),
    experimentalKvCacheKeyType: type, experimentalKvCacheValueType: type, flashAttention: true,
  });
  const rows = [], targets = [];
  const seq = context.getSequence();
  for (const chunk of req.chunks) {
    await seq.clearHistory();
    // No truncation of the distribution: all tokens keep their probability.
    const want = {generateNext: {probabilities: true, options: {temperature: 1, topK: 0, topP: 1, minP: 0}}};
    const res = await seq.controlledEvaluate(chunk.map((t, i) => (i + 1 < chunk.length ? [t, want] : t)));
    for (let i = 0; i + 1 < chunk.length; i++) {
      const lp = new Map();
      for (const [id, p] of res[i].next.probabilities) lp.set(id, Math.log(Math.max(p, 1e-30)));
      rows.push(lp);
      targets.push(chunk[i + 1]);
    }
  }
  await context.dispose();
  return {rows, targets};
}

const ref = await run("F16");
for (const type of req.types ?? ["F16", "Q8_0", "Q4_0"]) {
  const r = type === "F16" ? ref : await run(type);
  let nll = 0, kl = 0;
  for (let t = 0; t < r.rows.length; t++) {
    nll -= r.rows[t].get(r.targets[t]) ?? Math.log(1e-30);
    let k = 0;
    for (const [id, lp] of ref.rows[t]) k += Math.exp(lp) * (lp - (r.rows[t].get(id) ?? Math.log(1e-30)));
    kl += Math.max(k, 0);
  }
  const n = r.rows.length;
  process.stdout.write(JSON.stringify({type, ppl: Math.exp(nll / n), mean_kl: kl / n, positions: n}) + "\n");
}
await model.dispose();
