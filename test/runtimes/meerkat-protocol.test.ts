import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { invocationFromClaude } from '../../src/adapters/claude-input.js';
import { setup } from '../helpers.js';

/** A real http endpoint answering meerkat's way; it records what it was sent. */
async function endpoint(answer: (body: Record<string, unknown>) => { status?: number; text: string }) {
  const received: Record<string, unknown>[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push(body);
      const { status = 200, text: out } = answer(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

const claudeBash = (command: string) =>
  invocationFromClaude({ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_use_id: 't1', tool_input: { command } });

describe('protocol "meerkat" on http hooks', () => {
  it('posts a meerkat invocation (built from a Claude event) and reads a meerkat deny with its payload', async () => {
    const { url, received } = await endpoint(() => ({
      text: JSON.stringify({ decision: { decision: 'deny', reason_code: 'safety_violation', message: 'no', payload: { rule: 'r1' } } }),
    }));
    const { runner } = setup([{ id: 'm', point: 'pre_tool_use', capability: 'guardrail', http: { url, protocol: 'meerkat' } }]);
    const report = await runner.run(claudeBash('rm -rf /'));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'safety_violation', message: 'no' });
    expect(report.outcomes[0]!.payload).toEqual({ rule: 'r1' });
    expect(received[0]).toEqual({
      point: 'pre_tool_execution',
      session_id: 's',
      tool_call: { tool_use_id: 't1', name: 'Bash', args: { command: 'rm -rf /' } },
    });
  });

  it.each([
    ['an empty body (meerkat fails the hook on it)', { text: '' }, 'invalid_result', /response body is empty/],
    ['a key meerkat rejects', { text: '{"decision":null,"extra":1}' }, 'invalid_result', /extra/],
    ['a Claude-shaped answer', { text: '{"hookSpecificOutput":{"permissionDecision":"deny"}}' }, 'invalid_result', /hookSpecificOutput/],
    ['a non-2xx status', { status: 500, text: 'oops' }, 'execution_failed', /HTTP 500/],
  ] as const)('%s is a failure of the hook', async (_label, answer, reason, detail) => {
    const { url } = await endpoint(() => answer);
    const { runner } = setup([{ id: 'm', point: 'pre_tool_use', capability: 'guardrail', http: { url, protocol: 'meerkat' } }]);
    const report = await runner.run(claudeBash('ls'));
    expect(report.outcomes[0]).toMatchObject({ status: 'failed', failureReason: reason, failureDetail: expect.stringMatching(detail) });
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'runtime_error' });
  });

  it('{} is no opinion and an allow is an allow', async () => {
    const { url } = await endpoint((body) => ({
      text: (body.tool_call as { args: { command: string } }).args.command === 'ls' ? '{}' : '{"decision":{"decision":"allow"}}',
    }));
    const { runner } = setup([{ id: 'm', point: 'pre_tool_use', capability: 'guardrail', http: { url, protocol: 'meerkat' } }]);
    expect((await runner.run(claudeBash('ls'))).decision).toBe('none');
    expect((await runner.run(claudeBash('pwd'))).decision).toBe('allow');
  });
});
