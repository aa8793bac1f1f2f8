// Drives a running kvscope server with the official `openai` npm client (installed by
// tools/openai/setup.sh): models, completions, chat, streams, a stream the client abandons, and
// errors surfacing as the client's own exception types.
// Env: KVSCOPE_BASE_URL (http://127.0.0.1:PORT/v1), KVSCOPE_API_KEY, KVSCOPE_OPENAI_DIR.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.KVSCOPE_OPENAI_DIR;
const { default: OpenAI } = await import(pathToFileURL(path.join(dir, 'node_modules', 'openai', 'index.mjs')).href);
const client = new OpenAI({ baseURL: process.env.KVSCOPE_BASE_URL, apiKey: process.env.KVSCOPE_API_KEY, maxRetries: 0, timeout: 60000 });

let passed = 0;
async function check(name, fn) {
  await fn();
  passed++;
  console.log(`ok - ${name}`);
}

const chatBody = { model: 'default', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 12, temperature: 0 };

await check('models.list', async () => {
  const page = await client.models.list();
  assert.deepEqual(page.data.map((m) => m.id), ['default']);
});

let completionText;
await check('completions.create', async () => {
  const r = await client.completions.create({ model: 'default', prompt: 'Once upon a time', max_tokens: 10, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(typeof r.choices[0].text, 'string');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(typeof r.kvscope.prompt_tokens_cached, 'number');
  completionText = r.choices[0].text;
});

await check('completions stream', async () => {
  const s = await client.completions.create({ model: 'default', prompt: 'Once upon a time', max_tokens: 10, temperature: 0, stream: true });
  let text = '';
  let chunks = 0;
  for await (const c of s) {
    chunks++;
    text += c.choices[0].text;
  }
  assert.ok(chunks >= 2, `only ${chunks} chunks`);
  assert.equal(text, completionText);
});

let chatText;
await check('chat.completions.create', async () => {
  const r = await client.chat.completions.create(chatBody);
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  chatText = r.choices[0].message.content;
  assert.equal(typeof chatText, 'string');
});

await check('chat stream with usage', async () => {
  const s = await client.chat.completions.create({ ...chatBody, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let role = null;
  let finish = null;
  let usage = null;
  for await (const c of s) {
    if (c.choices.length) {
      role ??= c.choices[0].delta.role;
      text += c.choices[0].delta.content ?? '';
      finish ??= c.choices[0].finish_reason;
    }
    if (c.usage) usage = c.usage;
  }
  assert.equal(role, 'assistant');
  assert.equal(text, chatText);
  assert.ok(finish);
  assert.ok(usage && usage.completion_tokens > 0);
});

await check('n choices and logit_bias', async () => {
  const r = await client.chat.completions.create({ ...chatBody, n: 3, temperature: 0.9, seed: 3 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  for (const c of r.choices) assert.equal(typeof c.message.content, 'string');
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  // Streamed, the client sees each choice by its index.
  const s = await client.chat.completions.create({ ...chatBody, n: 2, temperature: 0.9, seed: 3, stream: true });
  const texts = ['', ''];
  for await (const c of s) for (const ch of c.choices) texts[ch.index] += ch.delta.content ?? '';
  assert.deepEqual(texts, r.choices.slice(0, 2).map((c) => c.message.content));
  // A token pushed by +100 is the only one greedy decoding writes.
  const b = await client.completions.create({ model: 'default', prompt: 'Hello', max_tokens: 3, temperature: 0, logit_bias: { 42: 100 }, logprobs: 0 });
  assert.equal(b.choices[0].logprobs.tokens.length, 3);
  assert.equal(new Set(b.choices[0].logprobs.tokens).size, 1);
});

await check('structured output: json_schema', async () => {
  const r = await client.chat.completions.create({
    ...chatBody,
    max_tokens: 40,
    response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema: { type: 'object', properties: { ok: { type: 'boolean' }, level: { enum: ['low', 'high'] } }, required: ['ok', 'level'] } } },
  });
  const text = r.choices[0].message.content;
  assert.equal(r.choices[0].finish_reason, 'stop', text);
  const v = JSON.parse(text);
  assert.deepEqual(Object.keys(v), ['ok', 'level']);
  assert.equal(typeof v.ok, 'boolean');
  assert.ok(['low', 'high'].includes(v.level));
});

await check('stream abandoned by the client', async () => {
  const s = await client.completions.create({ model: 'default', prompt: 'A very long story', max_tokens: 400, temperature: 0, stream: true });
  for await (const c of s) break;  // leaving the loop aborts the request
});

await check('stop strings', async () => {
  const stop = completionText.slice(3, 5);
  const r = await client.completions.create({ model: 'default', prompt: 'Once upon a time', max_tokens: 10, temperature: 0, stop: [stop] });
  assert.equal(r.choices[0].text, completionText.slice(0, completionText.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, 'stop');
});

await check('400 surfaces as BadRequestError', async () => {
  await assert.rejects(client.completions.create({ model: 'default', prompt: 'x', max_tokens: 0 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError, `got ${e?.constructor?.name}`);
    assert.ok(e instanceof OpenAI.APIError);
    assert.equal(e.status, 400);
    assert.equal(e.param, 'max_tokens');
    assert.equal(e.code, 'invalid_value');
    return true;
  });
  await assert.rejects(client.chat.completions.create({ ...chatBody, n: 65 }), OpenAI.BadRequestError);
});

await check('404 surfaces as NotFoundError', async () => {
  await assert.rejects(client.chat.completions.create({ ...chatBody, model: 'gpt-none' }), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.code, 'model_not_found');
    return true;
  });
});

await check('401 surfaces as AuthenticationError', async () => {
  const bad = new OpenAI({ baseURL: process.env.KVSCOPE_BASE_URL, apiKey: 'wrong-key', maxRetries: 0 });
  await assert.rejects(bad.models.list(), OpenAI.AuthenticationError);
});

await check('embeddings', async () => {
  const r = await client.embeddings.create({ model: 'default', input: ['hello there', 'general kenobi'] });
  assert.equal(r.data.length, 2);
  const v = r.data[0].embedding;
  assert.ok(Array.isArray(v) && v.length > 0);
  const norm = Math.sqrt(v.reduce((a, x) => a + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-3, `norm ${norm}`);
  const d = await client.embeddings.create({ model: 'default', input: 'hello there', dimensions: 4 });
  assert.equal(d.data[0].embedding.length, 4);
});

// The Responses API (what current OpenAI SDKs and agent frameworks call by default).
const question = 'Tell me a story';
let responseText;
let firstId;
await check('responses.create', async () => {
  const r = await client.responses.create({ model: 'default', input: question, max_output_tokens: 12, temperature: 0 });
  assert.equal(r.object, 'response');
  assert.ok(r.id.startsWith('resp_'));
  assert.ok(['completed', 'incomplete'].includes(r.status));
  assert.equal(r.output.at(-1).type, 'message');
  responseText = r.output_text;  // the SDK's own join of the output_text parts
  assert.equal(typeof responseText, 'string');
  assert.ok(responseText.length > 0);
  // The same greedy answer as chat completions gives for the same conversation.
  const chat = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: question }], max_tokens: 12, temperature: 0 });
  assert.equal(responseText, chat.choices[0].message.content);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
  assert.equal(r.usage.output_tokens, chat.usage.completion_tokens);
  assert.equal(typeof r.usage.output_tokens_details.reasoning_tokens, 'number');
  firstId = r.id;
});

await check('responses stream (events)', async () => {
  const s = await client.responses.create({ model: 'default', input: question, max_output_tokens: 12, temperature: 0, stream: true, store: false });
  const types = [];
  let text = '';
  let done = null;
  let seq = -1;
  for await (const e of s) {
    assert.equal(e.sequence_number, seq + 1);
    seq = e.sequence_number;
    types.push(e.type);
    if (e.type === 'response.output_text.delta') text += e.delta;
    if (e.type === 'response.completed' || e.type === 'response.incomplete') done = e.response;
  }
  assert.equal(types[0], 'response.created');
  assert.ok(types.includes('response.output_item.added') && types.includes('response.output_item.done'));
  assert.equal(text, responseText);
  assert.ok(done && done.output.at(-1).content[0].text === responseText);
  assert.ok(done.usage.output_tokens > 0);
});

await check('responses.stream() accumulates to the final response', async () => {
  const s = client.responses.stream({ model: 'default', input: question, max_output_tokens: 12, temperature: 0, store: false });
  let deltas = '';
  s.on('response.output_text.delta', (e) => (deltas += e.delta));
  const final = await s.finalResponse();
  assert.equal(final.output_text, responseText);
  assert.equal(deltas, responseText);
});

await check('previous_response_id continues the conversation', async () => {
  const follow = await client.responses.create({ model: 'default', previous_response_id: firstId, input: 'And then?', max_output_tokens: 8, temperature: 0 });
  assert.equal(follow.previous_response_id, firstId);
  // The same turn sent whole, as messages, gives the same text.
  const whole = await client.responses.create({
    model: 'default',
    input: [
      { role: 'user', content: question },
      { role: 'assistant', content: responseText },
      { role: 'user', content: [{ type: 'input_text', text: 'And then?' }] },
    ],
    max_output_tokens: 8,
    temperature: 0,
    store: false,
  });
  assert.equal(follow.output_text, whole.output_text);
  // The chain's history was served from the pinned KV, not recomputed.
  assert.ok(follow.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(follow.usage));
  const got = await client.responses.retrieve(follow.id);
  assert.equal(got.id, follow.id);
  assert.equal(got.output_text, follow.output_text);
  await client.responses.delete(follow.id);
  await assert.rejects(client.responses.retrieve(follow.id), OpenAI.NotFoundError);
});

await check('responses errors surface as the client\'s exceptions', async () => {
  await assert.rejects(client.responses.create({ model: 'default', previous_response_id: 'resp_missing', input: 'x' }), (e) => {
    assert.ok(e instanceof OpenAI.NotFoundError);
    assert.equal(e.param, 'previous_response_id');
    return true;
  });
  await assert.rejects(
    client.responses.create({ model: 'default', input: 'x', tools: [{ type: 'web_search' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'tools[0].type',
  );
  await assert.rejects(client.responses.create({ model: 'default', input: 'x', max_output_tokens: 0 }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.param, 'max_output_tokens');
    return true;
  });
  // Deleting the chain's last stored response unpins its KV (the C++ side checks the blocks came back).
  await client.responses.delete(firstId);
});

console.log(`openai-compat: ${passed} checks passed`);
