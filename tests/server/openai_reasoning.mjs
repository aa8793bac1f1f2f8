// The official `openai` npm client reading kvscope's reasoning fields from a thinking model:
// reasoning_content and completion_tokens_details in a body, delta.reasoning_content in a raw
// stream and through the client's stream helper, a bad effort as the client's BadRequestError, and
// the Responses API's reasoning items (its own and streamed).
// Env: KVSCOPE_BASE_URL, KVSCOPE_OPENAI_DIR, KVSCOPE_MODEL.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.KVSCOPE_OPENAI_DIR;
const { default: OpenAI } = await import(pathToFileURL(path.join(dir, 'node_modules', 'openai', 'index.mjs')).href);
const client = new OpenAI({ baseURL: process.env.KVSCOPE_BASE_URL, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const model = process.env.KVSCOPE_MODEL;

let passed = 0;
async function check(name, fn) {
  await fn();
  passed++;
  console.log(`ok - ${name}`);
}

const body = { model, messages: [{ role: 'user', content: 'What is 2+2?' }], max_tokens: 20, temperature: 0, reasoning_effort: 'low' };

let full;
await check('chat with reasoning_effort low', async () => {
  full = await client.chat.completions.create(body);
  const m = full.choices[0].message;
  assert.equal(typeof m.reasoning_content, 'string');
  assert.ok(m.reasoning_content.length > 0);
  assert.equal(typeof m.content, 'string');
  assert.ok(!m.content.includes('</think>'));
  assert.equal(full.usage.completion_tokens_details.reasoning_tokens, 6);
  assert.equal(full.kvscope.reasoning.format, 'qwen3');
});

await check('raw stream with delta.reasoning_content', async () => {
  const s = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let reasoning = '', content = '', usage = null;
  for await (const chunk of s) {
    if (chunk.usage) usage = chunk.usage;
    const d = chunk.choices[0]?.delta;
    if (!d) continue;
    if (typeof d.reasoning_content === 'string') reasoning += d.reasoning_content;
    if (typeof d.content === 'string') content += d.content;
  }
  assert.equal(reasoning, full.choices[0].message.reasoning_content);
  assert.equal(content, full.choices[0].message.content);
  assert.equal(usage.completion_tokens_details.reasoning_tokens, 6);
});

await check('stream helper finalChatCompletion', async () => {
  const s = client.chat.completions.stream({ ...body, stream: true });
  let content = '';
  s.on('content', (delta) => { content += delta; });
  const done = await s.finalChatCompletion();
  assert.equal(done.choices[0].message.content, full.choices[0].message.content);
  assert.equal(content, full.choices[0].message.content);
});

await check('enable_thinking false', async () => {
  const r = await client.chat.completions.create({ ...body, reasoning_effort: undefined, chat_template_kwargs: { enable_thinking: false } });
  assert.equal(r.choices[0].message.reasoning_content, null);
  assert.equal(r.usage.completion_tokens_details.reasoning_tokens, 0);
});

await check('bad effort is a BadRequestError', async () => {
  await assert.rejects(client.chat.completions.create({ ...body, reasoning_effort: 'extreme' }), (e) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.status, 400);
    assert.equal(e.param, 'reasoning_effort');
    return true;
  });
});

await check('responses.create with reasoning.effort low', async () => {
  const r = await client.responses.create({ model, input: 'What is 2+2?', max_output_tokens: 20, temperature: 0, reasoning: { effort: 'low' } });
  const item = r.output.find((o) => o.type === 'reasoning');
  assert.ok(item, JSON.stringify(r.output));
  assert.equal(item.content[0].text, full.choices[0].message.reasoning_content);
  assert.equal(r.output_text, full.choices[0].message.content);
  assert.equal(r.usage.output_tokens_details.reasoning_tokens, 6);
});

await check('responses stream with reasoning', async () => {
  const s = await client.responses.create({ model, input: 'What is 2+2?', max_output_tokens: 20, temperature: 0, reasoning: { effort: 'low' }, stream: true });
  let reasoning = '', text = '';
  for await (const ev of s) {
    if (ev.type === 'response.reasoning_text.delta') reasoning += ev.delta;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  assert.equal(reasoning, full.choices[0].message.reasoning_content);
  assert.equal(text, full.choices[0].message.content);
});

console.log(`${passed} checks passed`);
