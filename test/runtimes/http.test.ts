import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withModifiedInput } from '../../src/domain/invocation.js';
import { parseHookResult } from '../../src/domain/results.js';
import { httpRuntime } from '../../src/runtimes/http.js';
import { HookExecutionFailure } from '../../src/runtimes/types.js';
import { makeContext, makeHook, makeInvocation, rejectionOf } from './helpers.js';

let server: Server;
let base: string;
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      switch (path) {
        case '/deny':
          return json(200, {
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'blocked over http' },
          });
        case '/empty':
          res.writeHead(200);
          return res.end();
        case '/no-content':
          res.writeHead(204);
          return res.end();
        case '/error':
          res.writeHead(500, { 'content-type': 'text/plain' });
          return res.end('internal\n  oops');
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end('hello there');
        case '/array':
          return json(200, [1, 2]);
        case '/big':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
        case '/slow': {
          const timer = setTimeout(() => json(200, {}), 5000);
          timers.add(timer);
          return;
        }
        default:
          res.writeHead(404, 'Not Found');
          return res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const timer of timers) clearTimeout(timer);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function run(http: string | { url: string; headers?: Record<string, string> }, invocation = makeInvocation()) {
  const hook = makeHook({ http });
  const { ctx, controller } = makeContext(hook);
  return { promise: httpRuntime.execute(hook, invocation, ctx), controller };
}

async function failure(http: string): Promise<HookExecutionFailure> {
  const error = await rejectionOf(run(http).promise);
  expect(error).toBeInstanceOf(HookExecutionFailure);
  return error as HookExecutionFailure;
}

describe('httpRuntime', () => {
  it('POSTs the Claude payload and reads a 2xx JSON deny', async () => {
    const invocation = withModifiedInput(makeInvocation(), { command: 'rm -rf /' });
    const result = await run({ url: `${base}/deny`, headers: { authorization: 'Bearer t0k' } }, invocation).promise;
    expect(parseHookResult(result).ok).toBe(true);
    expect(result).toEqual({ decision: 'deny', reasonCode: 'policy_violation', message: 'blocked over http' });

    const request = received.find((r) => r.path === '/deny')!;
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBe('Bearer t0k');
    expect(JSON.parse(request.body)).toMatchObject({
      session_id: 's-1',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
      hookledger: { hookId: 'h1', replay: false },
    });
  });

  it('a 2xx with an empty body is no opinion', async () => {
    expect(await run(`${base}/empty`).promise).toBeUndefined();
    expect(await run(`${base}/no-content`).promise).toBeUndefined();
  });

  it('a non-2xx status is execution_failed with a body excerpt', async () => {
    expect(await failure(`${base}/error`)).toMatchObject({
      reason: 'execution_failed',
      detail: 'HTTP 500 Internal Server Error: internal oops',
    });
    expect(await failure(`${base}/missing`)).toMatchObject({ reason: 'execution_failed', detail: 'HTTP 404 Not Found' });
  });

  it('a 2xx body that is not a JSON object is invalid_result', async () => {
    const text = await failure(`${base}/text`);
    expect(text.reason).toBe('invalid_result');
    expect(text.detail).toMatch(/^response body is not valid JSON: .*; starts with: hello there$/);
    expect(await failure(`${base}/array`)).toMatchObject({
      reason: 'invalid_result',
      detail: 'response body JSON: expected a JSON object, got an array',
    });
  });

  it('a body over 1 MiB is invalid_result', async () => {
    expect(await failure(`${base}/big`)).toMatchObject({ reason: 'invalid_result', detail: 'response body exceeded 1 MiB' });
  });

  it('a refused connection is execution_failed naming the url and the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hook`;
    await new Promise((resolve) => closed.close(resolve));
    expect(await failure(url)).toMatchObject({ reason: 'execution_failed', detail: `could not reach ${url}: ECONNREFUSED` });
  });

  it('rejects promptly when aborted during a slow response', async () => {
    const { promise, controller } = run(`${base}/slow`);
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await rejectionOf(promise);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).not.toBeInstanceOf(HookExecutionFailure);
  });
});
