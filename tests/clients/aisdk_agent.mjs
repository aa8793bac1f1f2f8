// The Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`, zod schemas) against `kvscope serve`, as
// an agent framework drives it: generateText running a two-tool agent over several steps (the SDK
// executes the tools and sends their results back), generateObject with a zod schema (response_format
// json_schema), and streamText for plain text and for a streamed tool call.
// The test model has random weights, so the checks are mechanical: every call names an offered tool
// and its input passes the zod schema (the SDK validates it), the objects parse under their schema,
// and streamed text equals the text the stream reports.
// Env: KVSCOPE_BASE_URL (http://127.0.0.1:PORT/v1), KVSCOPE_MODEL, KVSCOPE_AISDK_DIR.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.KVSCOPE_AISDK_DIR;
const load = (file) => import(pathToFileURL(path.join(dir, 'node_modules', file)).href);
const { generateText, generateObject, streamText, tool, stepCountIs, Output } = await load('ai/dist/index.js');
const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible/dist/index.js');
const { z } = await load('zod/index.js');

const provider = createOpenAICompatible({
  name: 'kvscope',
  baseURL: process.env.KVSCOPE_BASE_URL,
  apiKey: 'none',
  supportsStructuredOutputs: true,  // response_format json_schema, which kvscope decodes under
});
const model = provider(process.env.KVSCOPE_MODEL);

const seen = [];
const tools = {
  calculate: tool({
    description: 'Arithmetic on two integers',
    inputSchema: z.object({ op: z.enum(['add', 'sub', 'mul']), a: z.int().min(0).max(99), b: z.int().min(0).max(99) }),
    execute: async ({ op, a, b }) => {
      seen.push('calculate');
      return { result: op === 'add' ? a + b : op === 'sub' ? a - b : a * b };
    },
  }),
  get_weather: tool({
    description: 'Weather in a city',
    inputSchema: z.object({ city: z.string().max(6) }),
    execute: async ({ city }) => {
      seen.push('get_weather');
      return { city, forecast: 'sunny', celsius: 21 };
    },
  }),
};

let passed = 0;
const ok = (what) => {
  console.log(`ok - ${what}`);
  passed++;
};

// 1. A multi-step agent: three steps that must call a tool, then one that must answer in text.
{
  const r = await generateText({
    model,
    tools,
    prompt: 'What is 6 times 7, and is it sunny in Paris?',
    stopWhen: stepCountIs(4),
    prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber < 3 ? 'required' : 'none' }),
    maxOutputTokens: 120,
    temperature: 0.8,
    seed: 5,
    maxRetries: 0,
  });
  assert.equal(r.steps.length, 4, JSON.stringify(r.steps.map((s) => s.finishReason)));
  for (const s of r.steps.slice(0, 3)) {
    assert.equal(s.finishReason, 'tool-calls');
    assert.ok(s.toolCalls.length >= 1);
    for (const c of s.toolCalls) assert.ok(['calculate', 'get_weather'].includes(c.toolName), c.toolName);
    assert.equal(s.toolResults.length, s.toolCalls.length, 'every call ran (its input passed the zod schema)');
  }
  assert.equal(r.steps[3].toolCalls.length, 0);
  assert.ok(seen.length >= 3);
  assert.ok(r.totalUsage.inputTokens > r.steps[0].usage.inputTokens, 'later steps carry the tool results');
  ok(`generateText agent: ${r.steps.slice(0, 3).map((s) => s.toolCalls.map((c) => `${c.toolName}(${JSON.stringify(c.input)})`).join(' ')).join(', ')}`);
}

// 2. generateObject with a zod 4 schema (int bounds, string lengths, an enum array, a nested object).
{
  const schema = z.object({
    name: z.string().min(1).max(8),
    age: z.int().min(0).max(120),
    tags: z.array(z.enum(['red', 'blue'])).max(2),
    home: z.object({ city: z.string().max(6), zip: z.string().regex(/^[0-9]{5}$/) }),
  });
  for (const seed of [1, 2]) {
    const r = await generateObject({ model, schema, prompt: 'A person record', temperature: 1, seed, maxOutputTokens: 200, maxRetries: 0 });
    assert.equal(schema.safeParse(r.object).success, true, JSON.stringify(r.object));
    ok(`generateObject seed ${seed}: ${JSON.stringify(r.object)}`);
  }
}

// 3. streamText: plain text, and a streamed tool call the SDK assembles from delta.tool_calls.
{
  const r = streamText({ model, prompt: 'Once upon a time', maxOutputTokens: 16, temperature: 0, maxRetries: 0 });
  let streamed = '';
  for await (const t of r.textStream) streamed += t;
  assert.equal(streamed, await r.text);
  assert.ok(streamed.length > 0);
  assert.equal(await r.finishReason, 'length');
  ok('streamText text');

  const before = seen.length;
  const s = streamText({ model, tools, toolChoice: 'required', prompt: 'Weather in Oslo?', maxOutputTokens: 120, temperature: 0.8, seed: 9, maxRetries: 0 });
  const parts = [];
  for await (const p of s.fullStream) {
    if (p.type === 'error') throw p.error;
    parts.push(p.type);
  }
  const calls = await s.toolCalls;
  assert.ok(calls.length >= 1, parts.join(' '));
  assert.ok(parts.includes('tool-input-start') && parts.includes('tool-input-delta') && parts.includes('tool-call'), parts.join(' '));
  assert.equal((await s.toolResults).length, calls.length);
  assert.ok(seen.length > before);
  ok(`streamText tool call: ${calls.map((c) => `${c.toolName}(${JSON.stringify(c.input)})`).join(' ')}`);
}
// 4. The Responses API: the agent (function_call items out, function_call_output items back), an
// object through text.format json_schema (Output.object), and a stream of its events.
{
  const { createOpenAI } = await load('@ai-sdk/openai/dist/index.js');
  const openai = createOpenAI({ baseURL: process.env.KVSCOPE_BASE_URL, apiKey: 'none' });
  const rm = openai.responses(process.env.KVSCOPE_MODEL);
  const r = await generateText({
    model: rm,
    tools,
    prompt: 'What is 6 times 7, and is it sunny in Paris?',
    stopWhen: stepCountIs(3),
    prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber < 2 ? 'required' : 'none' }),
    maxOutputTokens: 120,
    temperature: 0.8,
    maxRetries: 0,
  });
  assert.equal(r.steps.length, 3, JSON.stringify(r.steps.map((s) => s.finishReason)));
  for (const s of r.steps.slice(0, 2)) {
    assert.equal(s.finishReason, 'tool-calls');
    assert.equal(s.toolResults.length, s.toolCalls.length);
  }
  ok(`Responses agent: ${r.steps.slice(0, 2).map((s) => s.toolCalls.map((c) => `${c.toolName}(${JSON.stringify(c.input)})`).join(' ')).join(', ')}`);

  const schema = z.object({ city: z.string().max(6), celsius: z.int().min(-40).max(50), sunny: z.boolean() });
  const o = await generateText({ model: rm, output: Output.object({ schema }), prompt: 'Weather record', temperature: 1, maxOutputTokens: 120, maxRetries: 0 });
  assert.equal(schema.safeParse(o.output).success, true, JSON.stringify(o.output));
  // The model's own text (zod rebuilds the object in its shape's order, so read the text).
  assert.deepEqual(Object.keys(JSON.parse(o.text)), ['city', 'celsius', 'sunny'], `properties in the schema's order: ${o.text}`);
  ok(`Responses Output.object: ${JSON.stringify(o.output)}`);

  const st = streamText({ model: rm, prompt: 'Once upon a time', maxOutputTokens: 16, temperature: 0, maxRetries: 0 });
  let streamed = '';
  for await (const t of st.textStream) streamed += t;
  assert.equal(streamed, await st.text);
  assert.ok(streamed.length > 0);
  ok('Responses streamText');
}
console.log(`${passed} checks passed`);
