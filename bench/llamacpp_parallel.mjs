// The bench-serve workload through llama.cpp (node-llama-cpp 3.21.1, CPU): N sequences of one
// context, each evaluating a random prompt and generating greedily; node-llama-cpp batches the
// sequences' tokens into shared llama_decode calls. Prints one JSON line per concurrency level.
// stdin: {"model": PATH, "n_vocab": 32000, "concurrency": [1, 4], "prompt_len": 128, "gen_len": 64, "threads": 2, "seed": 1}
// Node's own thread competes with llama.cpp's for the cores, so this understates llama.cpp somewhat.
import {pathToFileURL} from "node:url";
import path from "node:path";
import fs from "node:fs";

const here = path.dirname(new URL(import.meta.url).pathname);
const oracleDir = process.env.KVSCOPE_ORACLE_DIR || path.join(here, "../build/oracle");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(path.join(oracleDir, "node_modules/node-llama-cpp/dist/index.js")).href);

const req = JSON.parse(fs.readFileSync(0, "utf8"));
const llama = await getLlama({gpu: false, logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: req.model});
const nVocab = req.n_vocab;  // given by the caller (kvscope knows it from the same file)

let state = BigInt(req.seed ?? 1);
function rand(n) {  // xorshift64*: reproducible prompts without depending on Math.random
  state ^= state >> 12n; state ^= (state << 25n) & 0xffffffffffffffffn; state ^= state >> 27n;
  return Number(((state * 2685821657736338717n) & 0xffffffffffffffffn) % BigInt(n));
}

for (const c of req.concurrency) {
  const perSeq = req.prompt_len + req.gen_len + 8;
  const context = await model.createContext({
    contextSize: perSeq * c, sequences: c, threads: req.threads ?? 2,
    batchSize: Math.min(512, perSeq * c), flashAttention: false,
  });
  const seqs = [];
  for (let i = 0; i < c; i++) seqs.push(context.getSequence());
  const prompts = seqs.map(() => Array.from({length: req.prompt_len}, () => 3 + rand(nVocab - 3)));
  const ttft = new Array(c).fill(-1);
  const t0 = performance.now();
  const counts = await Promise.all(seqs.map(async (seq, i) => {
    let n = 0;
    for await (const _ of seq.evaluate(prompts[i], {temperature: 0})) {
      if (n === 0) ttft[i] = performance.now() - t0;
      if (++n >= req.gen_len) break;
    }
    return n;
  }));
  const wall = (performance.now() - t0) / 1000;
  const generated = counts.reduce((a, b) => a + b, 0);
  const lastFirst = Math.max(...ttft) / 1000;
  process.stdout.write(JSON.stringify({
    concurrency: c, gen_tok_s: generated / wall, decode_tok_s: (generated - c) / (wall - lastFirst), wall_s: wall,
    ttft_ms_mean: ttft.reduce((a, b) => a + b, 0) / c,
  }) + "\n");
  await context.dispose();
}
await model.dispose();
