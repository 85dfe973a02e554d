import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/ledger/ledger.js';
import { runHookledger, startConsole, TEST_TOKEN, type RunningConsole } from '../../scripts/console-support.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { recordOnBoth } from './postgres-scenario.js';

// `hookledger console --db postgres://…` over real HTTP, against the same records on SQLite:
// every page answers as the SQLite console does, or, where the PostgreSQL engine does not have
// the query yet, with one line saying so (never a stack trace). Which it is comes from the
// engine itself (a probe below), so the test keeps proving the right thing as queries land.

let dir: string;
let sqlitePath: string;
let pgUrl: string;
let pg: Ledger;
let onSqlite: RunningConsole;
let onPostgres: RunningConsole;
let t0: number;
const WRITER = 'console-pg-writer';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-console-pg-'));
  sqlitePath = join(dir, 'ledger.db');
  pgUrl = (await freshDatabase('console')).url;
  t0 = await recordOnBoth(sqlitePath, pgUrl, WRITER);
  pg = await openLedger({ url: pgUrl });
  [onSqlite, onPostgres] = await Promise.all([startConsole(sqlitePath), startConsole(pgUrl)]);
}, 180_000);

afterAll(async () => {
  await onSqlite?.stop();
  await onPostgres?.stop();
  await pg?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cookieFor(server: RunningConsole): Promise<string> {
  const res = await fetch(`${server.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: TEST_TOKEN }),
  });
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

async function get(server: RunningConsole, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${server.url}${path}`, { headers: { cookie: await cookieFor(server) } });
  return { status: res.status, body: await res.text() };
}

/** The page's own content (the header names the ledger, which differs). */
function main(body: string): string {
  const m = /<main id="main"[^>]*>([\s\S]*)<\/main>/.exec(body);
  expect(m, body.slice(0, 400)).not.toBeNull();
  return m![1]!;
}

/** Whether the PostgreSQL engine has this query yet (it says so with `ledger_engine_unsupported`). */
async function supported(probe: (ledger: Ledger) => Promise<unknown>): Promise<boolean> {
  try {
    await probe(pg);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ledger_engine_unsupported') return false;
    throw error;
  }
}

/** An unsupported page: 501 and the engine's one line, no stack trace, no ledger data. */
function expectOneLine(page: { status: number; body: string }, what: RegExp) {
  expect(page.status).toBe(501);
  const text = main(page.body)
    .replace(/<[^>]+>/g, '\n')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  expect(text[0]).toBe('Not available on this ledger');
  expect(text.slice(1).join(' ')).toMatch(what);
  expect(text.slice(1).join(' ')).toMatch(/not supported on PostgreSQL yet/);
  expect(page.body).not.toMatch(/\n\s+at |Error:|node:internal/);
}

/** A page that must read the same on both engines where PostgreSQL has the query, else one line. */
async function samePage(path: string, probe: (ledger: Ledger) => Promise<unknown>, what: RegExp, normalise = (s: string) => s) {
  const [a, b] = await Promise.all([get(onSqlite, path), get(onPostgres, path)]);
  expect(a.status, `${path} on SQLite`).toBe(200);
  if (!(await supported(probe))) return expectOneLine(b, what);
  expect(b.status, `${path} on PostgreSQL: ${b.body.slice(0, 300)}`).toBe(200);
  expect(normalise(main(b.body)), path).toBe(normalise(main(a.body)));
  return { sqlite: a.body, postgres: b.body };
}

describe('console on PostgreSQL', () => {
  it('prints its URL for a postgres:// ledger, without the password; refuses to start without a token in one line', async () => {
    expect(onPostgres.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const refused = await runHookledger(['console', '--db', pgUrl, '--port', '0']).catch((e: Error) => e.message);
    expect(refused).toMatch(
      /exit 2: hookledger: a ledger on a database server has no token file beside it; give --token or set HOOKLEDGER_TOKEN\n$/,
    );
    const page = await get(onPostgres, '/integrity');
    expect(page.body).toContain('postgres://');
    expect(page.body).not.toContain(new URL(pgUrl).password || '\u0000');
  });

  it('logs in; nothing without the cookie', async () => {
    const anonymous = await fetch(`${onPostgres.url}/sessions`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(await anonymous.text()).toBe('');
    expect((await fetch(`${onPostgres.url}/export.csv`)).status).toBe(401);
    expect((await get(onPostgres, '/sessions')).status).not.toBe(303);
  });

  it('/sessions and a session timeline: the same as on SQLite', async () => {
    const list = await samePage('/sessions', (l) => l.listSessions({}, { limit: 1 }), /session/i);
    if (list) expect(list.postgres).toContain('pg-s2');
    await samePage('/sessions/pg-s1', (l) => l.sessionTimeline('pg-s1', { limit: 1 }), /session/i);
  });

  it('/denials (list and grouped chart): the same as on SQLite', async () => {
    const page = await samePage('/denials', (l) => l.listDenials({}, { limit: 1 }), /denial/i);
    if (page) expect(page.postgres).toContain('no rm -rf &lt;script&gt;');
    await samePage('/denials?group-by=tool', (l) => l.groupDenials({}, 'tool'), /denial/i);
  });

  it('an explain, by id and by tool_use_id: the same as on SQLite, the decisive hook highlighted', async () => {
    const page = await samePage('/invocations/toolu_a', (l) => l.explain(2), /explain/i);
    expect(page).toBeDefined(); // explain is on the engine since the engine exists
    expect(page!.postgres).toMatch(/class="decisive[^"]*"[\s\S]*no-rm/);
    await samePage('/invocations/3', (l) => l.explain(3), /explain/i);
    expect((await get(onPostgres, '/invocations/999')).status).toBe(404);
  });

  it('/hooks: the table the same as on SQLite; the over-time counts the same (percentiles: exact on PostgreSQL)', async () => {
    const since = new Date(t0 - 3_600_000).toISOString();
    const until = new Date(t0 + 2 * 3_600_000).toISOString();
    const path = `/hooks?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
    const charts = (body: string) =>
      [...body.matchAll(/data-chart="([^"]*)"/g)].map(
        (m) =>
          JSON.parse(m[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as { series: { label: string; values: (number | null)[] }[] },
      );
    const page = await samePage(
      path,
      (l) =>
        Promise.all([
          l.hookHealth({ since: t0 - 3_600_000, until: t0 + 7_200_000 }),
          l.hookHealthSeries({ since: t0, until: t0 + 1, stepMs: 3_600_000 }),
        ]),
      /health|hook/i,
      // The latency chart's percentiles come from histograms on SQLite, exactly on PostgreSQL.
      (s) => s.replace(/data-chart="[^"]*"/g, 'data-chart'),
    );
    if (page) {
      const [volumeA, ratesA] = charts(page.sqlite);
      const [volumeB, ratesB] = charts(page.postgres);
      expect(volumeB).toEqual(volumeA);
      expect(ratesB).toEqual(ratesA);
      expect(volumeB!.series[0]!.values.some((v) => (v ?? 0) > 0)).toBe(true);
    }
  });

  it("/integrity: every writer's chain head, and verify's verdict from the worker", async () => {
    const heads = await pg.chainHeads();
    expect(heads).toHaveLength(1);
    expect(heads[0]).toMatchObject({ writer: WRITER, kind: expect.any(String) });
    const sqliteHead = (await get(onSqlite, '/integrity')).body;
    const seqOnSqlite = /<dt>Link<\/dt><dd>([\d,]+)<\/dd>/.exec(sqliteHead)![1];
    let body = '';
    await expect
      .poll(
        async () => {
          body = (await get(onPostgres, '/integrity')).body;
          return /Intact|NOT intact|Verify could not run/.test(body);
        },
        { timeout: 60_000, interval: 500 },
      )
      .toBe(true);
    expect(body).toMatch(new RegExp(`<td>(<span class="value">)?${WRITER}(</span>)?</td><td class="num">${seqOnSqlite}</td>`));
    expect(body).toContain(heads[0]!.hash);
    if (await supported((l) => l.verify())) expect(body).toMatch(/<strong>Intact<\/strong>/);
    else expect(body).toMatch(/Verify could not run: [^<]*not supported on PostgreSQL yet/);
  });

  it('/replays: the same (no runs) as on SQLite, or one line', async () => {
    const page = await samePage('/replays', (l) => l.listReplayRuns(), /replay/i);
    if (page) expect(page.postgres).toContain('No replay runs yet.');
  });

  it('a CSV download: the same bytes as on SQLite, or one line', async () => {
    const download = async (server: RunningConsole) => {
      const res = await fetch(`${server.url}/export.csv?decision=deny`, { headers: { cookie: await cookieFor(server) } });
      return { status: res.status, body: await res.text() };
    };
    const [a, b] = await Promise.all([download(onSqlite), download(onPostgres)]);
    expect(a.status).toBe(200);
    if (await supported(async (l) => l.exportText({}, 'csv')[Symbol.asyncIterator]().next())) expect(b).toEqual(a);
    else {
      expect(b.status).toBe(501);
      expect(b.body).toMatch(/^[^\n]*not supported on PostgreSQL yet[^\n]*\n$/);
    }
  });

  it("hookledger report --db postgres://…: the audit report with the writer's chain head, or one line", async () => {
    const out = join(dir, 'audit.html');
    const since = new Date(t0 - 3_600_000).toISOString();
    const result = await runHookledger(['report', '--db', pgUrl, '--since', since, '--out', out]).then(
      (stdout) => ({ ok: true, text: stdout }),
      (error: Error) => ({ ok: false, text: error.message }),
    );
    const needs: ((l: Ledger) => Promise<unknown>)[] = [
      (l) => l.listSessions({}, { limit: 1 }),
      (l) => l.groupDenials({}, 'hook'),
      (l) => l.hookHealth({}),
      (l) => l.hookSetsInForce(0, 1),
      (l) => l.listReplayRuns(),
      (l) => l.verify(),
    ];
    const all = (await Promise.all(needs.map(supported))).every(Boolean);
    if (!all) {
      expect(result.ok).toBe(false);
      expect(result.text).toMatch(/exit 3: hookledger: [^\n]*not supported on PostgreSQL yet\n$/);
      return;
    }
    expect(result.text).toMatch(/ledger intact/);
    const html = readFileSync(out, 'utf8');
    // The writer id is shown as a value (fold wraps it in a span).
    expect(html).toMatch(new RegExp(`writer (<span class="value">)?${WRITER}(</span>)?: link`));
    expect(html).toContain('console-pg');
    expect(html).toContain('pg-s2');
  });

  it("opens the ledger read-only: a dead writer's unfinished invocation is left for a writer to recover", async () => {
    const { name, url } = await freshDatabase('console_ro');
    await recordOnBoth(join(dir, 'readonly.db'), url, 'gone-writer');
    await adminSql(`UPDATE invocations SET status = 'running' WHERE id = 6`, name);
    await adminSql(`UPDATE writers SET lease_until = 0`, name);
    const status = async () => (await adminSql<{ status: string }>('SELECT status FROM invocations WHERE id = 6', name))[0]!.status;
    const reader = await startConsole(url);
    try {
      const cookie = await cookieFor(reader);
      for (const path of ['/sessions', '/integrity', '/invocations/6']) {
        expect((await fetch(`${reader.url}${path}`, { headers: { cookie } })).status, path).toBe(200);
      }
    } finally {
      await reader.stop();
    }
    expect(await status()).toBe('running');
    // What the console did not do: any command that opens the ledger to write recovers it.
    await runHookledger(['explain', '6', '--db', url]);
    expect(await status()).toBe('interrupted');
  });
});
