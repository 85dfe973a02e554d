import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookServer, type HookServer } from '../../src/adapters/server.js';
import { loadHookSet } from '../../src/config/load.js';
import { openLedger, type Ledger } from '../../src/ledger/open.js';
import { createRunner } from '../../src/runner/runner.js';
import { runCli } from '../cli-helpers.js';
import { concurrentDir, tempDir } from '../helpers.js';

/**
 * meerkat's wire (reference/meerkat-wire.md) through the real `hookledger meerkat` and the
 * real server's POST /meerkat: one table of cases, each checked against what meerkat itself
 * accepts (written here from the reference, not from the adapter): exit 0 / 200, exactly one
 * JSON object whose only key is `decision`, a valid reason code, within payload_max_bytes.
 */

const GUARD = join(import.meta.dirname, '../fixtures/meerkat-hooks/guard.py');
const LIMIT = 4096;
const TOKEN = 'meerkat-token-0123456789';
const REASON_CODES = ['policy_violation', 'safety_violation', 'schema_violation', 'timeout', 'runtime_error'];

/** What meerkat would reject in an answer; an empty list means it accepts it. */
function meerkatProblems(text: string): string[] {
  if (Buffer.byteLength(text) > LIMIT) return [`answer is ${Buffer.byteLength(text)} bytes, over payload_max_bytes ${LIMIT}`];
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return ['answer is not JSON'];
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return ['answer is not an object'];
  const problems = Object.keys(answer)
    .filter((k) => k !== 'decision')
    .map((k) => `unknown key ${k}`);
  const decision = (answer as { decision?: Record<string, unknown> }).decision;
  if (decision === undefined) return problems;
  if (decision.decision === 'allow') {
    if (Object.keys(decision).length !== 1) problems.push('allow carries other fields');
  } else if (decision.decision === 'deny') {
    for (const k of Object.keys(decision))
      if (!['decision', 'hook_id', 'reason_code', 'message', 'payload'].includes(k)) problems.push(`deny has unknown field ${k}`);
    if (!REASON_CODES.includes(decision.reason_code as string)) problems.push(`reason_code ${String(decision.reason_code)}`);
    if (typeof decision.message !== 'string' || decision.message === '') problems.push('deny without a message');
  } else problems.push(`decision.decision ${String(decision.decision)}`);
  return problems;
}

function writeHookSet(dir: string): string {
  const path = join(dir, 'hooks.json');
  const meerkatGuard = { command: 'python3', args: [GUARD], protocol: 'meerkat' };
  const claudeSays = (json: unknown) => `cat >/dev/null; echo '${JSON.stringify(json)}'`;
  writeFileSync(
    path,
    JSON.stringify({
      name: 'meerkat-wire',
      defaults: { timeoutMs: 20_000 },
      hooks: [
        {
          id: 'audit',
          point: [
            'run_started',
            'run_completed',
            'run_failed',
            'pre_llm_request',
            'post_llm_response',
            'pre_tool_execution',
            'post_tool_execution',
            'turn_boundary',
            'other',
          ],
          command: 'cat >/dev/null',
        },
        { id: 'no-rm', point: 'pre_tool_execution', match: 'shell', capability: 'guardrail', priority: 10, command: meerkatGuard },
        {
          id: 'confirm-push',
          point: 'pre_tool_execution',
          match: 'git',
          capability: 'guardrail',
          command: claudeSays({
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'push to main?' },
          }),
        },
        {
          id: 'redact',
          point: 'pre_tool_execution',
          match: 'write_file',
          capability: 'guardrail',
          command: claudeSays({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { path: 'a.txt', text: '[redacted]' } } }),
        },
        { id: 'reads', point: 'pre_tool_execution', match: 'read_file', capability: 'guardrail', command: meerkatGuard },
        { id: 'big', point: 'pre_tool_execution', match: 'big_tool', capability: 'guardrail', command: meerkatGuard },
        { id: 'crash', point: 'pre_tool_execution', match: 'crash_tool', capability: 'guardrail', command: meerkatGuard },
        { id: 'hang', point: 'pre_tool_execution', match: 'slow_tool', capability: 'guardrail', timeoutMs: 1000, command: meerkatGuard },
      ],
    }),
  );
  return path;
}

const session = '0193f6c2-7d1e-7b55-9a51-3f0c2a9e4d10';
const tool = (name: string, args: unknown) => ({
  point: 'pre_tool_execution',
  session_id: session,
  turn_number: 3,
  tool_call: { tool_use_id: 'call_7', name, args },
});

type Expect =
  | { answer: 'none'; point: string }
  | { answer: 'allow' }
  | { answer: 'deny'; code: string; message: RegExp; payload?: unknown; recorded?: boolean };

/** [label, stdin text, expected] */
const CASES: [string, string, Expect][] = [
  ...(
    [
      ['run_started', { prompt: 'hi', prompt_input: [{ type: 'text', text: 'hi' }] }, 'session_start'],
      ['run_completed', {}, 'session_end'],
      ['run_failed', { error: 'model unavailable', error_class: 'provider', error_report: { kind: 'provider' } }, 'error'],
      ['pre_llm_request', { llm_request: { max_tokens: 1024, message_count: 3 } }, 'pre_llm_request'],
      [
        'post_llm_response',
        { llm_response: { assistant_text: 'ok', tool_call_names: ['shell'], stop_reason: 'tool_use' } },
        'post_llm_response',
      ],
      ['pre_tool_execution', { tool_call: { tool_use_id: 'c1', name: 'shell', args: { command: 'ls' } } }, 'pre_tool_use'],
      [
        'post_tool_execution',
        { tool_result: { tool_use_id: 'c1', name: 'shell', content_blocks: [], is_error: false, content: 'a\nb' } },
        'post_tool_use',
      ],
      ['turn_boundary', {}, 'turn_boundary'],
    ] as const
  ).map(([point, fields, canonical]): [string, string, Expect] => [
    `point ${point}`,
    JSON.stringify({ point, session_id: session, turn_number: 1, ...fields }),
    { answer: 'none', point: canonical },
  ]),
  [
    'unknown fields are kept',
    JSON.stringify({ ...tool('shell', { command: 'ls' }), provenance: { origin: 'mcp' }, brand_new: [1] }),
    { answer: 'none', point: 'pre_tool_use' },
  ],
  [
    'an unknown point is recorded at other',
    JSON.stringify({ point: 'pre_compaction', session_id: session }),
    { answer: 'none', point: 'other' },
  ],
  [
    'deny with payload, naming the hook',
    JSON.stringify(tool('shell', { command: 'rm -rf /' })),
    {
      answer: 'deny',
      code: 'safety_violation',
      message: /^\[hookledger\] denied by no-rm \(safety_violation\): refusing to delete \/ \(hookledger explain \d+\)$/,
      payload: { rule: 'rm-root' },
    },
  ],
  [
    'ask: denied, saying confirmation was required',
    JSON.stringify(tool('git', { args: ['push'] })),
    {
      answer: 'deny',
      code: 'policy_violation',
      message:
        /^\[hookledger\] denied: confirm-push requires confirmation \(push to main\?\), and meerkat cannot ask at pre_tool_execution/,
    },
  ],
  [
    'a rewrite: denied, naming it',
    JSON.stringify(tool('write_file', { path: 'a.txt', text: 'secret' })),
    {
      answer: 'deny',
      code: 'policy_violation',
      message: /^\[hookledger\] denied: redact rewrote the tool input, and meerkat cannot take a rewritten input/,
    },
  ],
  ['allow', JSON.stringify(tool('read_file', { path: 'a.txt' })), { answer: 'allow' }],
  [
    'a failing hook fails closed',
    JSON.stringify(tool('crash_tool', {})),
    {
      answer: 'deny',
      code: 'runtime_error',
      message: /denied by crash \(runtime_error\).*exited with code 1: boom: cannot reach the policy store/,
    },
  ],
  ['a timeout', JSON.stringify(tool('slow_tool', {})), { answer: 'deny', code: 'timeout', message: /denied by hang \(timeout\)/ }],
  [
    'an answer over payload_max_bytes is cut to fit',
    JSON.stringify(tool('big_tool', {})),
    {
      answer: 'deny',
      code: 'policy_violation',
      message: /denied by big/,
      payload: { hookledger_omitted: expect.stringMatching(/payload of \d+ bytes left out/) },
    },
  ],
  [
    'garbage',
    'this is not json',
    { answer: 'deny', code: 'runtime_error', message: /^hookledger could not decide: .*not valid JSON/, recorded: false },
  ],
  ['an empty invocation', '', { answer: 'deny', code: 'runtime_error', message: /empty/, recorded: false }],
  ['a JSON array', '[1,2]', { answer: 'deny', code: 'runtime_error', message: /expected a JSON object/, recorded: false }],
  [
    'a field of the wrong type',
    JSON.stringify({ point: 'turn_boundary', session_id: session, turn_number: 'three' }),
    { answer: 'deny', code: 'runtime_error', message: /turn_number/, recorded: false },
  ],
  [
    'an invocation over payload_max_bytes',
    JSON.stringify({ ...tool('shell', { command: 'x'.repeat(LIMIT) }) }),
    { answer: 'deny', code: 'runtime_error', message: /exceeds .*payload_max_bytes/, recorded: false },
  ],
];

function checkAnswer(text: string, expected: Expect): void {
  expect(meerkatProblems(text.trim())).toEqual([]);
  const answer = JSON.parse(text) as { decision?: Record<string, unknown> };
  if (expected.answer === 'none') expect(answer).toEqual({});
  else if (expected.answer === 'allow') expect(answer).toEqual({ decision: { decision: 'allow' } });
  else {
    expect(answer.decision).toMatchObject({
      decision: 'deny',
      reason_code: expected.code,
      message: expect.stringMatching(expected.message),
    });
    if (expected.payload !== undefined) expect(answer.decision!.payload).toEqual(expected.payload);
  }
}

function recorded(ledger: Ledger): { point: string; event_name: string; agent: string; raw_json: string }[] {
  return ledger.sqlite.prepare('SELECT point, event_name, agent, raw_json FROM invocations').all() as never;
}

describe('`hookledger meerkat`: the wire cases', () => {
  it.concurrent.each(CASES)(
    '%s',
    async (_label, input, expected) => {
      const dir = concurrentDir();
      const db = join(dir, 'l.db');
      const result = await runCli(['meerkat', '--config', writeHookSet(dir), '--db', db, '--payload-max-bytes', String(LIMIT)], {
        input,
        timeoutMs: 60_000,
      });
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
      checkAnswer(result.stdout, expected);
      const ledger = openLedger({ path: db });
      try {
        const rows = recorded(ledger);
        if (expected.answer === 'deny' && expected.recorded === false) {
          expect(rows).toEqual([]);
          expect(result.stderr).toMatch(/^hookledger: .+\n$/);
        } else {
          expect(rows).toHaveLength(1);
          expect(rows[0]!.agent).toBe('meerkat');
          // meerkat's own point name and the invocation as sent are kept.
          expect(rows[0]!.event_name).toBe(JSON.parse(input).point);
          expect(JSON.parse(rows[0]!.raw_json)).toEqual(JSON.parse(input));
          if (expected.answer === 'none') expect(rows[0]!.point).toBe(expected.point);
        }
      } finally {
        ledger.close();
      }
    },
    90_000,
  );

  it('--on-error allow answers {} when hookledger cannot decide; exit 0 either way', async () => {
    const dir = tempDir();
    const result = await runCli(['meerkat', '--config', join(dir, 'missing.json'), '--db', join(dir, 'l.db'), '--on-error', 'allow'], {
      input: JSON.stringify(tool('shell', { command: 'ls' })),
    });
    expect(result).toMatchObject({ code: 0, stdout: '{}\n' });
    expect(result.stderr).toMatch(/^hookledger: .*config file not found\n$/);
    const denied = await runCli(['meerkat', '--config', join(dir, 'missing.json'), '--db', join(dir, 'l.db')], {
      input: JSON.stringify(tool('shell', { command: 'ls' })),
    });
    expect(denied.code).toBe(0);
    checkAnswer(denied.stdout, { answer: 'deny', code: 'runtime_error', message: /^hookledger could not decide: .*config file not found/ });
  }, 60_000);
});

describe('POST /meerkat on the real server: the same wire cases', () => {
  let server: HookServer;
  let url: string;
  let ledger: Ledger;
  beforeAll(async () => {
    const dir = concurrentDir();
    ledger = openLedger({ path: join(dir, 'l.db') });
    const runner = createRunner({ hookSet: await loadHookSet(writeHookSet(dir)), ledger });
    server = createHookServer({ runner, ledger, token: TOKEN, meerkatPayloadMaxBytes: LIMIT });
    ({ url } = await server.listen(0));
  });
  afterAll(async () => {
    await server.close({ drainMs: 100 });
    ledger.close();
  });
  const post = (body: string, token = TOKEN) =>
    fetch(`${url}/meerkat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });

  it.each(CASES)(
    '%s',
    async (_label, input, expected) => {
      const before = recorded(ledger).length;
      const response = await post(input);
      expect(response.status).toBe(200);
      checkAnswer(await response.text(), expected);
      const rows = recorded(ledger);
      expect(rows.length - before).toBe(expected.answer === 'deny' && expected.recorded === false ? 0 : 1);
    },
    60_000,
  );

  it('a wrong token is answered 200 with a deny (meerkat would fail the run on 401); nothing recorded', async () => {
    const before = recorded(ledger).length;
    const response = await post(JSON.stringify(tool('shell', { command: 'ls' })), 'wrong-token-0123456789');
    expect(response.status).toBe(200);
    checkAnswer(await response.text(), { answer: 'deny', code: 'runtime_error', message: /missing or wrong bearer token/ });
    expect(recorded(ledger).length).toBe(before);
  });
});

describe('meerkat sessions in the reports and replay', () => {
  it('explain, denials --agent meerkat, sessions and replay read what `hookledger meerkat` recorded', async () => {
    const dir = concurrentDir();
    const db = join(dir, 'l.db');
    const config = writeHookSet(dir);
    for (const input of [tool('shell', { command: 'rm -rf /' }), tool('shell', { command: 'ls' })]) {
      const result = await runCli(['meerkat', '--config', config, '--db', db], { input: JSON.stringify(input), timeoutMs: 60_000 });
      expect(result.code).toBe(0);
    }
    const explained = await runCli(['explain', 'call_7', '--db', db, '--json']);
    expect(JSON.parse(explained.stdout)).toMatchObject({ invocation: { agent: 'meerkat', eventName: 'pre_tool_execution' } });
    const denials = await runCli(['denials', '--agent', 'meerkat', '--db', db, '--json']);
    expect(JSON.parse(denials.stdout).rows).toEqual([expect.objectContaining({ decisiveHookId: 'no-rm', reasonCode: 'safety_violation' })]);
    const sessions = await runCli(['sessions', '--db', db]);
    expect(sessions.stdout).toContain(session);
    // A hook set without no-rm: replay shows the denial would go away.
    writeFileSync(join(dir, 'new.json'), JSON.stringify({ name: 'open', hooks: [] }));
    const replay = await runCli(['replay', '--config', join(dir, 'new.json'), '--db', db, '--agent', 'meerkat', '--json']);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout).run.totals).toMatchObject({ selected: 2, newlyAllowed: 1 });
  }, 120_000);
});
