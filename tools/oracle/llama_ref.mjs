// Reference outputs from llama.cpp (node-llama-cpp 3.21.1, CPU) for kvscope's parity tests.
// stdin: {"model": PATH, "tokens": [ids], "n_gen": 64, "top": 20, "threads": 2, "ctx": 512}
// stdout: {"greedy": [ids], "steps": [[[id, logprob], ...] per position: after the prompt, then after each greedy token]}
// KV cache is F32 on both sides so only the arithmetic order differs.
import {pathToFileURL} from "node:url";
import path from "node:path";
import fs from "node:fs";

const here = path.dirname(new URL(import.meta.url).pathname);
const oracleDir = process.env.KVSCOPE_ORACLE_DIR || path.join(here, "../../build/oracle");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(path.join(oracleDir, "node_modules/node-llama-cpp/dist/index.js")).href);

const req = JSON.parse(fs.readFileSync(0, "utf8"));
const llama = await getLlama({gpu: false, logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: req.model});
const context = await model.createContext({
  contextSize: req.ctx ?? 512,
  threads: req.threads ?? 2,
  batchSize: Math.max(req.tokens.length, 16),
  experimentalKvCacheKeyType: "F32",
  experimentalKvCacheValueType: "F32",
  flashAttention: false,
});
const seq = context.getSequence();
const top = req.top ?? 20;
const want = {generateNext: {probabilities: true, token: true, options: {temperature: 0}}};

function topOf(probs) {
  const out = [];
  for (const [id, p] of probs) {
    out.push([id, Math.log(p)]);
    if (out.length >= top) break;
  }
  return out;
}

const steps = [];
const greedy = [];
const items = req.tokens.map((t, i) => (i === req.tokens.length - 1 ? [t, want] : t));
let res = await seq.controlledEvaluate(items);
let next = res[res.length - 1].next;
for (let i = 0; i < (req.n_gen ?? 64); i++) {
  steps.push(topOf(next.probabilities));
  greedy.push(next.token);
  if (i + 1 === req.n_gen) break;
  res = await seq.controlledEvaluate([[next.token, want]]);
  next = res[0].next;
}
process.stdout.write(JSON.stringify({greedy, steps}) + "\n");
await context.dispose();
await model.dispose();
