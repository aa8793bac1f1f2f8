// Greedy generation by llama.cpp (node-llama-cpp, CPU) for many prompts, to compare with PyTorch.
// stdin: {"model": PATH, "prompts": [[ids incl. BOS], ...], "max_new": 200, "threads": 1}
// stdout: {"outputs": [[generated ids, EOS excluded], ...]}
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
  contextSize: 512,
  threads: req.threads ?? 1,
  batchSize: 512,
  experimentalKvCacheKeyType: "F32",
  experimentalKvCacheValueType: "F32",
  flashAttention: false,
});
const seq = context.getSequence();
const maxNew = req.max_new ?? 200;
const outputs = [];
for (const prompt of req.prompts) {
  await seq.clearHistory();
  const out = [];
  for await (const tok of seq.evaluate(prompt, {temperature: 0})) {
    if (model.isEogToken(tok)) break;
    out.push(Number(tok));
    if (out.length >= maxNew) break;
  }
  outputs.push(out);
}
process.stdout.write(JSON.stringify({outputs}) + "\n");
await context.dispose();
await model.dispose();
await llama.dispose();
