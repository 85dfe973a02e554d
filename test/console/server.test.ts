import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleServer, type ConsoleServer } from '../../src/console/server.js';
import { deny } from '../../src/domain/results.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { bash, setup } from '../helpers.js';

const TOKEN = 'server-test-token-0123456789';
const servers: ConsoleServer[] = [];
const readers: SqliteLedger[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const r of readers.splice(0)) await r.close();
});

async function consoleOverLedger() {
  const { runner, ledger, path } = setup([
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) => (JSON.stringify(inv.toolInput).includes('rm') ? deny('SECRET-DENIAL-TEXT', 'safety_violation') : undefined),
    },
  ]);
  await runner.run({ ...bash('rm -rf /'), sessionId: 'SESSION-SECRET' });
  await runner.run({ ...bash('ls'), sessionId: 'SESSION-SECRET' });
  // As `hookledger console` does: its own read-only connection, while the writer's stays open.
  const reader = SqliteLedger.open({ path, readonly: true });
  readers.push(reader);
  const server = createConsoleServer({ ledger: reader, token: TOKEN });
  servers.push(server);
  const { url } = await server.listen(0, '127.0.0.1');
  return { base: url.replace(/\/$/, ''), ledger };
}

async function logIn(base: string): Promise<string> {
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: TOKEN, next: '/denials' }),
  });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/denials');
  const cookie = res.headers.get('set-cookie')!;
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Strict/);
  return cookie.split(';')[0]!;
}

describe('console server', () => {
  it('shows nothing from the ledger without the session cookie', async () => {
    const { base } = await consoleOverLedger();
    const login = await fetch(`${base}/`);
    expect(login.status).toBe(200);
    const form = await login.text();
    expect(form).toContain('<input type="password"');
    for (const path of [
      '/sessions',
      '/sessions/SESSION-SECRET',
      '/denials',
      '/invocations/1',
      '/hooks',
      '/replays',
      '/replays/1',
      '/integrity',
    ]) {
      const res = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(303);
      expect(res.headers.get('location')).toBe(`/?next=${encodeURIComponent(path)}`);
      const body = await res.text();
      expect(body).not.toMatch(/SECRET/);
    }
    for (const path of ['/export.csv', '/export.jsonl?decision=deny']) {
      const res = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(res.status).toBe(401);
      expect(await res.text()).not.toMatch(/SECRET/);
    }
    const forged = await fetch(`${base}/denials`, { redirect: 'manual', headers: { cookie: `hookledger_console=${'a'.repeat(43)}` } });
    expect(forged.status).toBe(303);
  });

  it('refuses a wrong token and never redirects off the console after login', async () => {
    const { base } = await consoleOverLedger();
    const wrong = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'not-the-token-at-all' }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await fetch(`${base}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: TOKEN, next }),
      });
      expect(res.headers.get('location')).toBe('/sessions');
    }
  });

  it('serves pages with a strict CSP and no inline script once logged in; read-only', async () => {
    const { base, ledger } = await consoleOverLedger();
    const cookie = await logIn(base);
    // data_version changes when another connection commits to the file.
    const version = () => ledger.sqlite.pragma('data_version', { simple: true });
    const before = version();
    const headsBefore = await ledger.chainHeads();
    for (const path of [
      '/sessions',
      '/sessions/SESSION-SECRET',
      '/denials',
      '/denials?group-by=day',
      '/invocations/1',
      '/hooks',
      '/replays',
      '/integrity',
    ]) {
      const res = await fetch(`${base}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'; style-src 'self'/);
      expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
      const body = await res.text();
      expect(body.match(/<script\b[^>]*>/g) ?? []).toEqual(['<script src="/assets/console.js" defer>']);
      expect(body).not.toMatch(/\son[a-z]+=|style="/);
    }
    expect(await (await fetch(`${base}/denials`, { headers: { cookie } })).text()).toContain('SECRET-DENIAL-TEXT');
    const bad = await fetch(`${base}/denials?reason-code=nope`, { headers: { cookie } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('reason-code: unknown reason code');
    expect((await fetch(`${base}/invocations/999`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(`${base}/denials`, { method: 'POST', headers: { cookie } })).status).toBe(405);
    const csv = await (await fetch(`${base}/export.csv?decision=deny`, { headers: { cookie } })).text();
    expect(csv.split('\r\n').filter(Boolean)).toHaveLength(2);
    expect(version()).toBe(before);
    expect(await ledger.chainHeads()).toEqual(headsBefore);
  });
});
