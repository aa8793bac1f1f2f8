// A two-tool agent (calculator and weather) over three turns with the official `openai` npm client
// against `kvscope serve`, non-streamed and streamed: each turn the model must call a tool
// (tool_choice "required"), the agent runs the call and sends the result back as a tool message.
// The test model has random weights, so the check is mechanical: every call names an offered tool,
// its arguments parse and fit the tool's schema, and the history the agent builds is accepted.
// Env: KVSCOPE_BASE_URL (http://127.0.0.1:PORT/v1), KVSCOPE_MODEL, KVSCOPE_OPENAI_DIR.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.KVSCOPE_OPENAI_DIR;
const { default: OpenAI } = await import(pathToFileURL(path.join(dir, 'node_modules', 'openai', 'index.mjs')).href);
const client = new OpenAI({ baseURL: process.env.KVSCOPE_BASE_URL, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const model = process.env.KVSCOPE_MODEL;

const tools = [
  {
    type: 'function',
    function: {
      name: 'calculate',
      description: 'Arithmetic on two integers',
      parameters: {
        type: 'object',
        properties: {
          op: { type: 'string', enum: ['add', 'sub', 'mul'] },
          a: { type: 'integer', minimum: 0, maximum: 99 },
          b: { type: 'integer', minimum: 0, maximum: 99 },
        },
        required: ['op', 'a', 'b'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', maxLength: 6 } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
];

// The tools themselves, with their schemas checked.
function run(name, args) {
  if (name === 'calculate') {
    assert.ok(['add', 'sub', 'mul'].includes(args.op), JSON.stringify(args));
    for (const k of ['a', 'b']) assert.ok(Number.isInteger(args[k]) && args[k] >= 0 && args[k] <= 99, JSON.stringify(args));
    assert.deepEqual(Object.keys(args).sort(), ['a', 'b', 'op']);
    return { result: args.op === 'add' ? args.a + args.b : args.op === 'sub' ? args.a - args.b : args.a * args.b };
  }
  assert.equal(name, 'get_weather');
  assert.equal(typeof args.city, 'string');
  assert.deepEqual(Object.keys(args), ['city']);
  return { city: args.city, forecast: 'sunny', celsius: 21 };
}

async function turn(messages, stream, seed) {
  const req = { model, messages, tools, tool_choice: 'required', parallel_tool_calls: false, max_tokens: 120, temperature: 0.8, seed };
  if (!stream) {
    const r = await client.chat.completions.create(req);
    const c = r.choices[0];
    assert.equal(c.finish_reason, 'tool_calls');
    assert.equal(c.message.role, 'assistant');
    return c.message;
  }
  const s = await client.chat.completions.create({ ...req, stream: true });
  const calls = [];
  let finish = null;
  for await (const chunk of s) {
    const c = chunk.choices[0];
    if (!c) continue;
    if (c.finish_reason) finish = c.finish_reason;
    for (const d of c.delta?.tool_calls ?? []) {
      if (!calls[d.index]) {
        assert.ok(d.id && d.function?.name, 'the first piece of a call has its id and name');
        calls[d.index] = { id: d.id, type: 'function', function: { name: d.function.name, arguments: '' } };
      }
      calls[d.index].function.arguments += d.function?.arguments ?? '';
    }
  }
  assert.equal(finish, 'tool_calls');
  return { role: 'assistant', content: null, tool_calls: calls };
}

let passed = 0;
for (const stream of [false, true]) {
  const messages = [{ role: 'user', content: 'What is 6 times 7, and is it sunny in Paris?' }];
  for (let t = 0; t < 3; t++) {
    const msg = await turn(messages, stream, 10 * t + (stream ? 1 : 0));
    assert.ok(msg.tool_calls.length >= 1);
    messages.push(msg);
    for (const call of msg.tool_calls) {
      const out = run(call.function.name, JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(out) });
    }
    console.log(`ok - ${stream ? 'streamed' : 'whole'} turn ${t + 1}: ${msg.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join(', ')}`);
    passed++;
  }
  // The final answer, with the whole history, tools offered and none forced.
  const r = await client.chat.completions.create({ model, messages, tools, tool_choice: 'none', max_tokens: 8, temperature: 0 });
  assert.notEqual(r.choices[0].finish_reason, 'tool_calls');
  assert.ok(r.usage.prompt_tokens > 0);
  passed++;
}
console.log(`${passed} checks passed`);
