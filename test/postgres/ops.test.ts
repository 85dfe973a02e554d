import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRecordsPostgres, exportTextPostgres } from '../../src/ledger/postgres/queries/export.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { exportLines, exportRecords } from '../../src/ledger/queries/export.js';
import type { InvocationFilter } from '../../src/ledger/queries/filters.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordScenario, writeScenario } from './ops-scenario.js';
import { freshDatabase } from './support.js';

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
  const { url } = await freshDatabase();
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
