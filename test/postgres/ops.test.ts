import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRecordsPostgres, exportTextPostgres } from '../../src/ledger/postgres/queries/export.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { exportLines, exportRecords } from '../../src/ledger/queries/export.js';
import { hookHealth, type HealthOptions } from '../../src/ledger/queries/health.js';
import { hookHealthPostgres } from '../../src/ledger/postgres/queries/health.js';
import { BUCKET_FLOORS_FOR_TEST, catchUpRollupPostgres, rollupTotalsPostgres } from '../../src/ledger/postgres/health-rollup.js';
import { bucketOf } from '../../src/ledger/health-rollup.js';
import { adminSql } from './support.js';
import type { InvocationFilter } from '../../src/ledger/queries/filters.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordScenario, writeScenario } from './ops-scenario.js';
import { freshDatabase } from './support.js';

let dbName: string;

/** The operations queries on PostgreSQL return what SQLite returns for the same records. */
let sqlite: SqliteLedger;
let store: PostgresStore;
const dir = mkdtempSync(join(tmpdir(), 'hookledger-ops-'));

beforeAll(async () => {
  const scratch = SqliteLedger.open({ path: ':memory:' });
  const events = await recordScenario(scratch);
  await scratch.close();
  sqlite = SqliteLedger.open({ path: join(dir, 'ledger.db') });
  // Today, yesterday, and 3, 10 and 40 days ago: closed hours for the rollup, and some outside a 30-day window.
  const days = [0, 1, 3, 10, 40];
  await writeScenario(sqlite, events, days);
  const { url, name } = await freshDatabase();
  dbName = name;
  store = await PostgresStore.open({ url, writerId: 'ops' });
  await writeScenario(store, events, days);
}, 60_000);
afterAll(async () => {
  await store?.close();
  await sqlite?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const filters: InvocationFilter[] = [
  {},
  { sessionId: 'p1' },
  { decision: 'deny' },
  { agent: 'claude-code' },
  { agent: 'codex', toolName: 'Write' },
  { hookSet: 'ops-parity' },
  { since: Date.now() - 5 * 86_400_000, until: Date.now() - 86_400_000 / 2 },
  { hookId: 'no-rm', reasonCode: 'safety_violation', point: 'pre_tool_use' },
  { sessionId: 'nobody' },
];

describe('export on PostgreSQL', () => {
  it.each(['jsonl', 'csv'] as const)('%s: byte-identical to SQLite for every filter', async (format) => {
    const pool = store.connection.pool;
    for (const filter of filters) {
      const onSqlite = [...exportLines(sqlite, filter, format)].join('');
      const onPostgres = (await collect(exportTextPostgres(pool, 'pg', filter, format))).join('');
      expect(onPostgres, JSON.stringify(filter)).toBe(onSqlite);
    }
    const all = [...exportLines(sqlite, {}, format)].join('');
    expect(all.split('\n').length).toBeGreaterThan(40);
  });

  it('records equal to SQLite', async () => {
    const onSqlite = [...exportRecords(sqlite, {})];
    const onPostgres = await collect(exportRecordsPostgres(store.connection.pool, 'pg', {}));
    expect(onPostgres).toEqual(onSqlite);
  });
});

describe('hook health on PostgreSQL', () => {
  const DAY = 86_400_000;
  const now = Date.now();
  const windows: HealthOptions[] = [
    {},
    { since: now - 90 * DAY },
    { since: now - 2 * DAY, until: now - DAY / 2 },
    { hookId: 'slow-policy' },
    { hookId: 'no-rm', since: now - 50 * DAY },
    { exactPercentileLimit: 0 },
    { since: now - 90 * DAY, exactPercentileLimit: 0 },
  ];
  const report = async (options: HealthOptions) => ({
    sqlite: hookHealth(sqlite, { now, ...options, until: options.until ?? now }),
    postgres: await hookHealthPostgres(store.connection.pool, 'pg', { now, ...options, until: options.until ?? now }),
  });

  it('the same report as SQLite for every window, first built live then read from the rollup it stored', async () => {
    const pool = store.connection.pool;
    for (const options of windows) {
      const { sqlite: a, postgres: b } = await report(options);
      expect(b, JSON.stringify(options)).toEqual(a);
    }
    // The scenario exercises every counter.
    const all = (await report({ since: now - 90 * DAY })).postgres.hooks;
    const by = (id: string) => all.find((h) => h.hookId === id)!;
    // Four copies in the window: 1, 3, 10 and 40 days back (today's started after `now`).
    expect(by('slow-policy')).toMatchObject({ timeouts: 4, decisive: 4 });
    expect(by('flaky-observer').failures).toBe(4);
    expect(by('pushy-observer').observeOnlyViolations).toBe(4);
    expect(by('audit').skips).toBeGreaterThan(0);
    expect(by('no-rm')).toMatchObject({ denials: 4 });

    const built = (await adminSql<{ n: string }>('SELECT count(*) AS n FROM health_rollup_hours', dbName))[0]!.n;
    expect(Number(built)).toBeGreaterThan(24 * 30);
    const second = await rollupTotalsPostgres(pool, now - 90 * DAY, now, undefined, now);
    expect(second.stats.rolledUp).toBeGreaterThan(24 * 30);
    expect(second.stats.built).toBe(0);
    for (const options of windows) {
      const { sqlite: a, postgres: b } = await report(options);
      expect(b, `from the rollup: ${JSON.stringify(options)}`).toEqual(a);
    }
  });

  it('PostgreSQL puts every duration in the bucket bucketOf gives it', async () => {
    const durations = [0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 99, 100, 101, 1_000, 4_095, 4_096, 65_537, 1_000_000, 123_456_789, 2 ** 40 + 1];
    for (let d = 1; d < 5_000; d += 7) durations.push(d);
    const { rows } = await store.connection.pool.query<{ d: number; b: number }>(
      `SELECT d, width_bucket(d, $2::bigint[]) AS b FROM unnest($1::bigint[]) AS d`,
      [durations, BUCKET_FLOORS_FOR_TEST],
    );
    for (const r of rows) expect(r.b, `${r.d} µs`).toBe(bucketOf(r.d));
  });

  it('an invocation recorded late with an old start drops the hours it lands in, and the report counts it', async () => {
    const pool = store.connection.pool;
    await catchUpRollupPostgres(pool, now);
    const before = await hookHealthPostgres(pool, 'pg', { now, until: now });
    const recorder = store.writer();
    const hookSetId = await recorder.hookSetId((await import('./ops-scenario.js')).opsHookSet);
    const at = now - 5 * DAY;
    const id = await recorder.begin(hookSetId, { point: 'session_start', sessionId: 'late', meta: {} } as never, at);
    await recorder.finish(
      id,
      {
        decision: 'none',
        decisiveHookId: null,
        reasonCode: null,
        message: null,
        modifiedInput: null,
        additionalContext: [],
        durationUs: 5,
      },
      [
        {
          hookId: 'late-hook',
          point: 'session_start',
          priority: 100,
          registrationIndex: 0,
          executionOrder: 0,
          mode: 'foreground',
          capability: 'observe',
          runtime: 'in_process',
          status: 'completed',
          decision: null,
          decisive: false,
          reasonCode: null,
          message: null,
          payload: null,
          modifiedInput: null,
          additionalContext: null,
          failureReason: null,
          failureDetail: null,
          skipReason: null,
          skippedBy: null,
          timeoutMs: 1000,
          startedAt: at + 1,
          durationUs: 42,
        },
      ],
      at + 2,
    );
    const stats = (await rollupTotalsPostgres(pool, now - 30 * DAY, now, undefined, now)).stats;
    expect(stats.dropped).toBe(true);
    const after = await hookHealthPostgres(pool, 'pg', { now, until: now });
    expect(after.hooks.find((h) => h.hookId === 'late-hook')).toMatchObject({ runs: 1, maxUs: 42 });
    expect(after.hooks.filter((h) => h.hookId !== 'late-hook')).toEqual(before.hooks);
  });
});
