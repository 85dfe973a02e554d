import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/ledger/health-rollup.js';
import { createPool } from '../../src/ledger/postgres/connection.js';
import { chainHeadsPostgres } from '../../src/ledger/postgres/queries/chain-head.js';
import { hookHealthSeriesPostgres } from '../../src/ledger/postgres/queries/health-buckets.js';
import { hookSetsInForcePostgres } from '../../src/ledger/postgres/queries/hook-sets.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { chainHeads } from '../../src/ledger/queries/chain-head.js';
import { hookHealthSeries } from '../../src/ledger/queries/health-series.js';
import { hookSetsInForce } from '../../src/ledger/queries/hook-sets.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { recordOnBoth } from '../console/postgres-scenario.js';
import { freshDatabase } from './support.js';

// The console's PostgreSQL queries (chain heads per writer, hook sets in force, hook health over
// time) against SQLite's on the same records.

let dir: string;
let sqlite: SqliteLedger;
let pool: pg.Pool;
let t0: number;
const WRITER = 'queries-writer';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-pg-console-'));
  const path = join(dir, 'ledger.db');
  const { url } = await freshDatabase('console_q');
  t0 = await recordOnBoth(path, url, WRITER);
  sqlite = SqliteLedger.open({ path });
  pool = createPool({ url, poolSize: 2 });
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await sqlite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('console queries on PostgreSQL', () => {
  it("chain heads: one per writer that has chained something, ending where verify ends that writer's chain", async () => {
    const heads = await chainHeadsPostgres(pool);
    const verified = await verifyPostgres(pool, 'test');
    expect(verified.problems).toEqual([]);
    expect(heads).toEqual(
      verified.writers.map((w) => ({
        writer: w.writer,
        seq: w.head.seq,
        hash: w.head.hash,
        kind: expect.any(String),
        at: expect.any(Number),
      })),
    );
    expect(heads.map((h) => h.writer)).toEqual([WRITER]);
    const [onSqlite] = chainHeads(sqlite);
    expect(heads[0]!.seq).toBe(onSqlite!.seq);
    // A writer that joined but has chained nothing is not listed.
    await pool.query(`INSERT INTO writers (id, host, head_seq, head_hash, created_at, lease_until) VALUES ('idle', 'h', 0, '', 0, 0)`);
    expect((await chainHeadsPostgres(pool)).map((h) => h.writer)).toEqual([WRITER]);
  });

  it('hook sets in force: the same rows as on SQLite', async () => {
    const window = [t0 - 60_000, Date.now() + 60_000] as const;
    const sets = await hookSetsInForcePostgres(pool, ...window);
    expect(sets).toEqual(hookSetsInForce(sqlite, ...window));
    expect(sets).toEqual([expect.objectContaining({ name: 'console-pg', version: '3', invocations: 6 })]);
    expect(await hookSetsInForcePostgres(pool, 0, t0 - 60_000)).toEqual([]);
  });

  it('hook health over time: the same buckets and counts as on SQLite; percentiles within one histogram bucket', async () => {
    for (const options of [
      { since: t0 - 3 * HOUR_MS + 1234, until: t0 + 2 * HOUR_MS, stepMs: HOUR_MS },
      { since: t0 - 3 * HOUR_MS, until: t0 + 2 * HOUR_MS, stepMs: 2 * HOUR_MS, hookId: 'no-rm' },
    ]) {
      const onPg = await hookHealthSeriesPostgres(pool, options);
      const onSqlite = hookHealthSeries(sqlite, { ...options, now: Date.now() });
      const counts = (s: typeof onPg) => s.buckets.map((b) => ({ ...b, hooks: b.hooks.map(({ p50Us: _p50, p95Us: _p95, ...c }) => c) }));
      expect(counts(onPg)).toEqual(counts(onSqlite));
      expect(onPg.buckets.some((b) => b.hooks.length > 0)).toBe(true);
      const pairs = onPg.buckets.flatMap((b, k) => b.hooks.map((h, j) => [h, onSqlite.buckets[k]!.hooks[j]!] as const));
      for (const [p, s] of pairs) {
        for (const key of ['p50Us', 'p95Us'] as const) {
          expect(p[key] === null, key).toBe(s[key] === null);
          if (p[key] !== null) expect(Math.abs(p[key] - s[key]!)).toBeLessThanOrEqual(p[key] * 0.022 + 1);
        }
      }
    }
    const window = { since: t0 - HOUR_MS, until: t0 + HOUR_MS, stepMs: HOUR_MS };
    const some = await hookHealthSeriesPostgres(pool, { ...window, percentilesOf: ['no-rm'] });
    const all = await hookHealthSeriesPostgres(pool, window);
    expect(some.buckets.map((b) => b.hooks)).toEqual(
      all.buckets.map((b) => b.hooks.map((h) => (h.hookId === 'no-rm' ? h : { ...h, p50Us: null, p95Us: null }))),
    );
    await expect(hookHealthSeriesPostgres(pool, { since: 5, until: 5, stepMs: HOUR_MS })).rejects.toThrow(/window is empty/);
  });
});
