import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHookServer, resolveServerToken, type HookServer } from '../../src/adapters/server.js';
import { defineHooks, type HookDefinition } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import { createRunner } from '../../src/runner/runner.js';
import { tsxLoader } from '../cli-helpers.js';
import { setup, sleep, tempDir, tempLedger } from '../helpers.js';
import { protocolProblems } from './protocol.js';

const TOKEN = 'test-token-0123456789abcdef';
const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code');
const fixtureText = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const HOOKS: HookDefinition[] = [
  {
    id: 'block-destructive-rm',
    point: ['pre_tool_use', 'permission_request'],
    match: 'Bash',
    capability: 'guardrail',
    priority: 10,
    run: (inv) =>
      String((inv.toolInput as { command?: string }).command).startsWith('rm -rf')
        ? deny('recursive delete', 'safety_violation')
        : undefined,
  },
  {
    id: 'slow',
    point: 'pre_tool_use',
    match: 'Slow',
    capability: 'guardrail',
    run: async (_inv, ctx) => {
      await sleep(300);
      return ctx.signal.aborted ? undefined : deny('slow says no');
    },
  },
  { id: 'audit', point: ['pre_tool_use', 'post_tool_use'], run: () => undefined },
];

/** A response body read loosely: each test states the shape it expects with toEqual/toMatchObject. */
interface Body {
  [key: string]: Body;
}

const servers: HookServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close({ drainMs: 100 });
});

async function start(options: { maxBodyBytes?: number; hooks?: HookDefinition[]; onError?: 'deny' | 'allow' } = {}) {
  const { runner, ledger } = setup(options.hooks ?? HOOKS);
  const server = createHookServer({
    runner,
    ledger,
    token: TOKEN,
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
  servers.push(server);
  const { url } = await server.listen(0);
  const count = () => ledger.sqlite.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
  const call = async (
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
  ) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, json: text === '' ? null : (JSON.parse(text) as Body), headers: response.headers };
  };
  return { server, url, runner, ledger, count, call };
}

describe('hookledger serve (real HTTP on 127.0.0.1)', () => {
  it('GET /healthz needs no token', async () => {
    const { call } = await start();
    expect(await call('GET', '/healthz', undefined, {})).toMatchObject({ status: 200, json: { status: 'ok' } });
  });

  it('answers a Claude Code http hook exactly like command mode', async () => {
    const { call, count } = await start();
    const res = await call('POST', '/claude', fixtureText('01-pretooluse-bash-rm.json'));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: '[hookledger] denied by block-destructive-rm (safety_violation): recursive delete (hookledger explain 1)',
      },
    });
    expect(protocolProblems('PreToolUse', res.json)).toEqual([]);
    const permission = await call('POST', '/claude', fixtureText('08-permissionrequest-bash.json'));
    expect(permission.json).toEqual({});
    const post = await call('POST', '/claude', fixtureText('09-posttooluse-bash.json'));
    expect(post.json).toEqual({});
    expect(count()).toBe(3);
  });

  it('requests without the right token get 401 (a Claude hook call: a block) and are not recorded', async () => {
    const { call, count } = await start();
    const body = fixtureText('01-pretooluse-bash-rm.json');
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: TOKEN },
      { authorization: `Basic ${TOKEN}` },
    ]) {
      for (const [method, path] of [
        ['POST', '/v1/invocations'],
        ['GET', '/v1/invocations/1'],
        ['GET', '/v1/denials'],
      ] as const) {
        const res = await call(method, path, method === 'POST' ? body : undefined, headers);
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json).toMatchObject({ error: { code: 'unauthorised' } });
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      // A Claude Code hook with a wrong token must not fail open: a 401 would let the tool run.
      const res = await call('POST', '/claude', body, headers);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        decision: 'block',
        reason: expect.stringMatching(/^hookledger could not decide: missing or wrong bearer token/),
        systemMessage: expect.any(String),
      });
    }
    expect(count()).toBe(0);
  });

  it('malformed bodies on the JSON API: 400 with one clear message, nothing recorded', async () => {
    const { call, count } = await start();
    const cases: Array<[string, string, RegExp]> = [
      ['/v1/invocations', 'nope', /^body: not valid JSON/],
      ['/v1/invocations', '', /^body: empty; expected JSON$/],
      ['/v1/invocations', '{"point":"pre_tool"}', /^body: point: unknown point "pre_tool"/],
      ['/v1/invocations', '{"point":"pre_tool_use","tool_name":"Bash"}', /^body: .*tool_name/],
      ['/v1/invocations', '{"hook_event_name":"PreToolUse","tool_name":5}', /^body: tool_name: tool_name must be a string$/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call('POST', path, body);
      expect(res.status, `${path} ${body}`).toBe(400);
      expect(res.json).toEqual({ error: { code: 'input_invalid', message: expect.stringMatching(message) } });
      expect(res.json!.error!.message).not.toContain('\n');
    }
    expect(count()).toBe(0);
  });

  it('a Claude payload with a bad field on a blocking event is denied under the error policy (status 200)', async () => {
    const { call, count } = await start();
    const res = await call('POST', '/claude', '{"hook_event_name":"PreToolUse","tool_name":5}');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'hookledger could not decide: body: tool_name: tool_name must be a string',
      },
    });
    expect(count()).toBe(0);
  });

  it('a /claude body that is not a hook payload, or too large, is blocked under the error policy (status 200, nothing recorded)', async () => {
    const { call, count } = await start({ maxBodyBytes: 2048 });
    const cases: Array<[string, RegExp]> = [
      ['{"hook_event_name":', /^hookledger could not decide: body: not valid JSON/],
      ['[1,2]', /^hookledger could not decide: body: expected the Claude Code hook JSON object$/],
      ['', /^hookledger could not decide: body: empty; expected JSON$/],
      [
        JSON.stringify({ hook_event_name: 'PreToolUse', tool_input: { content: 'x'.repeat(10_000) } }),
        /^hookledger could not decide: body: (10060 bytes )?exceeds the 2048-byte limit/,
      ],
    ];
    for (const [body, reason] of cases) {
      const res = await call('POST', '/claude', body);
      // An error status would be a non-blocking error in Claude Code: the tool call would run.
      expect(res.status, body.slice(0, 30)).toBe(200);
      expect(res.json).toEqual({ decision: 'block', reason: expect.stringMatching(reason), systemMessage: expect.stringMatching(reason) });
      expect(res.json!.reason).not.toContain('\n');
    }
    expect(count()).toBe(0);

    const lenient = await start({ onError: 'allow' });
    const res = await lenient.call('POST', '/claude', 'not json');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ systemMessage: expect.stringMatching(/^hookledger could not decide: body: not valid JSON/) });
  });

  it('oversized bodies get 413, with and without Content-Length', async () => {
    const { url, call, count } = await start({ maxBodyBytes: 2048 });
    const big = JSON.stringify({ point: 'pre_tool_use', toolInput: { content: 'x'.repeat(10_000) } });
    const res = await call('POST', '/v1/invocations', big);
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: { code: 'body_too_large', message: expect.stringMatching(/exceeds the 2048-byte limit/) } });
    // Chunked: the limit is enforced while reading.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${url}/v1/invocations`,
        { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'transfer-encoding': 'chunked' } },
        (response) => {
          let body = '';
          response.on('data', (c: Buffer) => (body += c.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i += 1) req.write('x'.repeat(1000));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error.code).toBe('body_too_large');
    expect(count()).toBe(0);
  });

  it('the JSON API: POST an invocation, GET its explanation, GET denials with filters and paging', async () => {
    const { call } = await start();
    const posted = await call(
      'POST',
      '/v1/invocations',
      JSON.stringify({
        point: 'pre_tool_use',
        sessionId: 's-1',
        toolName: 'Bash',
        toolUseId: 'toolu_a',
        toolInput: { command: 'rm -rf /' },
      }),
    );
    expect(posted.status).toBe(200);
    expect(posted.json).toMatchObject({ decision: 'deny', decisiveHookId: 'block-destructive-rm', reasonCode: 'safety_violation' });
    await call('POST', '/v1/invocations', fixtureText('01-pretooluse-bash-rm.json'));
    await call(
      'POST',
      '/v1/invocations',
      JSON.stringify({ point: 'pre_tool_use', sessionId: 's-2', toolName: 'Bash', toolInput: { command: 'ls' } }),
    );

    const byId = await call('GET', `/v1/invocations/${posted.json!.invocationId}`);
    expect(byId.status).toBe(200);
    expect(byId.json).toMatchObject({ invocation: { id: posted.json!.invocationId }, decisive: { hookId: 'block-destructive-rm' } });
    const byToolUse = await call('GET', '/v1/invocations/toolu_01HbQ3xk7VnR2sPq9LmA4tZc');
    expect(byToolUse.json).toMatchObject({ raw: { hook_event_name: 'PreToolUse' } });
    expect((await call('GET', '/v1/invocations/nope')).status).toBe(404);

    const page1 = await call('GET', '/v1/denials?toolName=Bash&reasonCode=safety_violation&limit=1');
    expect(page1.status).toBe(200);
    expect(page1.json!.denials).toHaveLength(1);
    expect(page1.json!.nextCursor).toEqual(expect.any(String));
    const page2 = await call('GET', `/v1/denials?toolName=Bash&reasonCode=safety_violation&limit=1&cursor=${page1.json!.nextCursor}`);
    expect(page2.json!.denials).toHaveLength(1);
    expect(page2.json!.nextCursor).toBeNull();
    expect(new Set([page1.json!.denials![0]!.invocationId, page2.json!.denials![0]!.invocationId]).size).toBe(2);
    const session = await call('GET', '/v1/denials?sessionId=s-1&since=1d');
    expect((session.json!.denials as unknown as { sessionId: string }[]).map((d) => d.sessionId)).toEqual(['s-1']);

    expect(await call('GET', '/v1/denials?reasonCode=rude')).toMatchObject({
      status: 400,
      json: { error: { message: expect.stringMatching(/^query: reasonCode/) } },
    });
    expect(await call('GET', '/v1/denials?colour=red')).toMatchObject({ status: 400 });
    expect(await call('GET', '/v1/denials?limit=0')).toMatchObject({ status: 400 });
    expect(await call('GET', '/v1/denials?since=yesterday')).toMatchObject({
      status: 400,
      json: { error: { message: expect.stringMatching(/^since: "yesterday" is not a date/) } },
    });
    expect(await call('DELETE', '/v1/denials')).toMatchObject({ status: 405 });
    expect(await call('GET', '/v2/nothing')).toMatchObject({ status: 404 });
  });

  it('serves 16 concurrent clients; every request is recorded once', async () => {
    const { call, count } = await start();
    const body = (i: number, j: number) =>
      JSON.stringify({
        hook_event_name: 'PreToolUse',
        session_id: `c-${i}`,
        tool_name: 'Bash',
        tool_use_id: `t-${i}-${j}`,
        tool_input: { command: j % 2 ? 'rm -rf x' : 'ls' },
      });
    const results = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const answers = [];
        for (let j = 0; j < 10; j += 1) answers.push(await call('POST', '/claude', body(i, j)));
        return answers;
      }),
    );
    const flat = results.flat();
    expect(flat.every((r) => r.status === 200)).toBe(true);
    expect(flat.filter((r) => (r.json!.hookSpecificOutput?.permissionDecision as unknown) === 'deny')).toHaveLength(80);
    expect(count()).toBe(160);
  });

  it('works as the target of a hookledger http hook (the http runtime)', async () => {
    const { url } = await start();
    const { ledger } = tempLedger();
    const upstream = createRunner({
      ledger,
      hookSet: defineHooks({
        name: 'via-http',
        hooks: [
          {
            id: 'remote',
            point: 'pre_tool_use',
            capability: 'guardrail',
            http: { url: `${url}/claude`, headers: { authorization: `Bearer ${TOKEN}` } },
          },
          { id: 'unauthorised', point: 'pre_tool_use', match: 'Read', capability: 'guardrail', onFailure: 'allow', http: `${url}/claude` },
        ],
      }),
    });
    const report = await upstream.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'rm -rf /tmp/x' } });
    expect(report).toMatchObject({
      decision: 'deny',
      decisiveHookId: 'remote',
      message: expect.stringContaining('denied by block-destructive-rm (safety_violation): recursive delete'),
    });
    // Without the token the Claude endpoint still answers in Claude's format: a block, under the deny error policy.
    const read = await upstream.run({ point: 'pre_tool_use', toolName: 'Read', toolInput: { file_path: '/x' } });
    expect(read).toMatchObject({
      decision: 'deny',
      decisiveHookId: 'unauthorised',
      message: expect.stringMatching(/missing or wrong bearer token/),
    });
    await upstream.close();
  });

  it('close() lets requests in flight finish and drains background hooks', async () => {
    let backgroundDone = false;
    const { call, server, count } = await start({
      hooks: [
        {
          id: 'slow-ok',
          point: 'pre_tool_use',
          capability: 'guardrail',
          run: async () => {
            await sleep(300);
            return { decision: 'allow' };
          },
        },
        {
          id: 'bg',
          point: 'pre_tool_use',
          mode: 'background',
          run: async () => {
            await sleep(200);
            backgroundDone = true;
          },
        },
      ],
    });
    const slow = call('POST', '/v1/invocations', JSON.stringify({ point: 'pre_tool_use', toolName: 'Bash' }));
    await sleep(50);
    servers.splice(servers.indexOf(server), 1);
    await server.close({ drainMs: 2000 });
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ decision: 'allow', decisiveHookId: 'slow-ok' });
    expect(backgroundDone).toBe(true);
    expect(count()).toBe(1);
  });
});

describe('the token', () => {
  it('is generated once into <db>.token, mode 0600, and reused', () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    const first = resolveServerToken({ env: {}, ledgerPath: db });
    expect(first).toMatchObject({ source: 'file', file: `${db}.token`, created: true });
    expect(first.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(`${db}.token`).mode & 0o777).toBe(0o600);
    expect(resolveServerToken({ env: {}, ledgerPath: db })).toMatchObject({ token: first.token, created: false });
    expect(resolveServerToken({ env: { HOOKLEDGER_TOKEN: 'from-the-environment-1234' }, ledgerPath: db })).toMatchObject({
      source: 'env',
      file: null,
    });
    writeFileSync(join(dir, 'open.db.token'), 'x'.repeat(32), { mode: 0o644 });
    expect(() => resolveServerToken({ env: {}, ledgerPath: join(dir, 'open.db') })).toThrow(/readable by other users \(mode 644\)/);
  });
});

describe('hookledger serve (the CLI)', () => {
  it('starts on 127.0.0.1, writes the token file, serves, and shuts down on SIGTERM', async () => {
    const dir = tempDir();
    const db = join(dir, 'ledger.db');
    const config = join(dir, 'hooks.json');
    writeFileSync(
      config,
      JSON.stringify({
        name: 'srv',
        hooks: [
          {
            id: 'no-rm',
            point: 'pre_tool_use',
            capability: 'guardrail',
            command: `bash ${join(import.meta.dirname, '../fixtures/claude-hooks/block-rm.sh')}`,
          },
        ],
      }),
    );
    const child = spawn(
      process.execPath,
      [
        '--import',
        tsxLoader,
        join(import.meta.dirname, '../../src/cli/bin.ts'),
        'serve',
        '--config',
        config,
        '--db',
        db,
        '--port',
        '0',
        '--json',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, HOOKLEDGER_TOKEN: '' },
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = await new Promise<{ url: string; tokenFile: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
        });
        child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(started.tokenFile).toBe(`${db}.token`);
      expect(statSync(started.tokenFile).mode & 0o777).toBe(0o600);
      expect(stderr).toContain(`token in ${db}.token (new)`);
      const token = readFileSync(started.tokenFile, 'utf8').trim();
      const res = await fetch(`${started.url}/claude`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: fixtureText('01-pretooluse-bash-rm.json'),
      });
      expect(await res.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
      expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/SIGTERM: draining/);
    expect(stderr).toMatch(/stopped\n$/);
  });
});

describe('the young generation', () => {
  it('is grown to its maximum before the server listens, in a fresh process', async () => {
    // A fresh process: V8 starts new space small and grows it only while young objects
    // survive; a request's garbage dies young, so without this serve kept the small one.
    const script = `
      import { getHeapSpaceStatistics } from 'node:v8';
      import { createHookServer } from ${JSON.stringify(join(import.meta.dirname, '../../src/adapters/server.ts'))};
      const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
      const before = newSpace();
      const hs = createHookServer({ runner: {}, ledger: {}, token: 'young-generation-token' });
      await hs.listen(0);
      const grown = newSpace();
      // Objects held across scavenges, as the server's start does: at the maximum, no further growth.
      let held = new Array(200000);
      for (let round = 0; round < 5; round++) for (let i = 0; i < 200000; i++) held[i] = { i, next: held[(i * 7) % 200000] ?? null };
      held = null;
      hs.server.close();
      console.log(JSON.stringify({ before, grown, after: newSpace() }));
    `;
    const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
    const { before, grown, after } = JSON.parse(out) as { before: number; grown: number; after: number };
    expect(grown).toBeGreaterThan(before);
    expect(after).toBe(grown);
  }, 60_000);
});
