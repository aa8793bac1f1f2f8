#!/usr/bin/env node
// Reference tokenization by llama.cpp (through node-llama-cpp, installed by tools/oracle/setup.sh).
// Usage: node tools/oracle/tokenize.mjs MODEL.gguf [--special] < texts.json
//   texts.json: a JSON array of strings, or {"texts": [...], "special": true|false}.
// Prints one JSON object: {"tokens": [[ids...], ...], "bos": id|null, "eos": id|null}.
// Tokens are llama.cpp's llama_tokenize(text, add_special=false, parse_special=special): no BOS/EOS.
// The oracle folder is found from KVSCOPE_ORACLE_DIR, else build/oracle next to this repository.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const oracleDir = process.env.KVSCOPE_ORACLE_DIR || path.resolve(here, "../../build/oracle");

async function main() {
  const args = process.argv.slice(2);
  const modelPath = args.find((a) => !a.startsWith("--"));
  if (!modelPath) {
    console.error("usage: node tools/oracle/tokenize.mjs MODEL.gguf [--special] < texts.json");
    process.exit(2);
  }
  const input = JSON.parse(readFileSync(0, "utf8"));
  const texts = Array.isArray(input) ? input : input.texts;
  const special = args.includes("--special") || (!Array.isArray(input) && !!input.special);
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
    throw new Error("input must be a JSON array of strings or {\"texts\": [...]} ");
  }

  const require = createRequire(path.join(oracleDir, "package.json"));
  let entry;
  try {
    entry = require.resolve("node-llama-cpp");
  } catch (e) {
    throw new Error(`node-llama-cpp not found under ${oracleDir}: run tools/oracle/setup.sh`);
  }
  const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path.resolve(modelPath), vocabOnly: true });
  const tokens = texts.map((t) => Array.from(model.tokenize(t, special)).map(Number));
  const bos = model.tokens.bos ?? null;
  const eos = model.tokens.eos ?? null;
  process.stdout.write(JSON.stringify({ tokens, bos: bos === null ? null : Number(bos), eos: eos === null ? null : Number(eos) }) + "\n");
  await model.dispose();
  await llama.dispose();
}

main().catch((e) => {
  console.error(`tokenize.mjs: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
