import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/domain/errors.js';
import { connectPostgres } from '../../src/ledger/postgres/open.js';
import * as sqliteSchema from '../../src/ledger/schema.js';
import { adminSql, freshDatabase } from './support.js';

/** The migration files, as drizzle-kit's journal lists them. */
const journal = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../migrations/postgres/meta/_journal.json'), 'utf8')) as {
    entries: { idx: number; tag: string }[];
  }
).entries.map(({ idx, tag }) => ({ idx, tag }));
const migrationFiles = journal.length;

describe('PostgreSQL schema and migrations', () => {
  it('creates every SQLite table with the same columns (plus the PostgreSQL-only writer bookkeeping)', async () => {
    const { name, url } = await freshDatabase();
    const ledger = await connectPostgres({ url });
    await ledger.close();
    const columns = await adminSql<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
      name,
    );
    const byTable = new Map<string, string[]>();
    for (const c of columns) byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), c.column_name]);
    for (const table of Object.values(sqliteSchema)) {
      const config = getTableConfig(table);
      // The local ledger's identity as a ship source (docs/ship.md) has no place in a central ledger.
      if (config.name === 'ship_source') continue;
      const expected = config.columns.map((c) => c.name);
      const extra =
        {
          invocations: ['writer_id', 'source_ref'],
          chain: ['writer_id'],
          outcomes: ['source_ref'],
          prune_checkpoints: ['source_id', 'source_ref'],
        }[config.name] ?? [];
      expect(byTable.get(config.name), config.name).toEqual([...expected, ...extra]);
    }
    expect(byTable.get('writers')).toEqual(['id', 'host', 'head_seq', 'head_hash', 'created_at', 'lease_until']);
    const indexes = await adminSql<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'invocations'`,
      name,
    );
    // Partial indexes keep their condition.
    expect(indexes.find((i) => i.indexname === 'invocations_deny_tool')?.indexdef).toMatch(/WHERE \(decision = 'deny'::text\)$/);
  });

  it('concurrent first starts are safe: the schema is applied once', async () => {
    const { name, url } = await freshDatabase();
    const ledgers = await Promise.all(Array.from({ length: 6 }, () => connectPostgres({ url, poolSize: 2 })));
    await Promise.all(ledgers.map((l) => l.close()));
    expect(await adminSql(`SELECT idx::int, tag FROM hookledger_migrations ORDER BY idx`, name)).toEqual(journal);
    expect(journal.slice(0, 3).map((e) => e.tag)).toEqual(['0000_init', '0001_session_summaries', '0002_session_summaries_triggers']);
    // Up to date: a later open applies nothing and changes nothing.
    const again = await connectPostgres({ url });
    await again.close();
    expect(await adminSql(`SELECT count(*)::int AS n FROM hookledger_migrations`, name)).toEqual([{ n: migrationFiles }]);
  });

  it('a ledger written by an older version migrates', async () => {
    const { name, url } = await freshDatabase();
    await (await connectPostgres({ url })).close();
    // Back to what the first release wrote: only 0000_init applied.
    await adminSql(
      `DROP TABLE session_summaries; DROP TABLE ship_hook_sets; DROP TABLE ship_sources;
       ALTER TABLE invocations DROP COLUMN source_ref; ALTER TABLE outcomes DROP COLUMN source_ref;
       ALTER TABLE prune_checkpoints DROP COLUMN source_id, DROP COLUMN source_ref;
       DROP INDEX chain_ref; CREATE UNIQUE INDEX chain_ref ON chain (kind, ref_id);
       ALTER TABLE outcomes ADD CONSTRAINT outcomes_invocation_id_invocations_id_fk FOREIGN KEY (invocation_id)
         REFERENCES invocations (id) ON DELETE CASCADE;
       DELETE FROM hookledger_migrations WHERE idx > 0`,
      name,
    );
    const outcomeKeys = () =>
      adminSql<{ conname: string }>(`SELECT conname FROM pg_constraint WHERE conrelid = 'outcomes'::regclass AND contype = 'f'`, name);
    expect(await outcomeKeys()).toEqual([{ conname: 'outcomes_invocation_id_invocations_id_fk' }]);
    await (await connectPostgres({ url })).close();
    // 0007: the outcome → invocation reference is kept by hookledger's writers, not enforced (docs/ship.md, Central schema).
    expect(await outcomeKeys()).toEqual([]);
    // 0008: the centre's health index, start-first (docs/ship.md, Central schema).
    expect(await adminSql(`SELECT indexdef FROM pg_indexes WHERE indexname = 'outcomes_health'`, name)).toEqual([
      { indexdef: 'CREATE INDEX outcomes_health ON public.outcomes USING btree (hook_id, started_at, duration_us)' },
    ]);
    // 0011: explain's tool-use id lookups through a hash index.
    expect(await adminSql(`SELECT indexdef FROM pg_indexes WHERE indexname = 'invocations_tool_use_id'`, name)).toEqual([
      { indexdef: 'CREATE INDEX invocations_tool_use_id ON public.invocations USING hash (tool_use_id)' },
    ]);
    // 0010: the centre's index audit (docs/postgres.md, Indexes): two indexes gone, two partial.
    expect(
      await adminSql(
        `SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('invocations_running', 'outcomes_source_ref', 'invocations_decision', 'invocations_point') ORDER BY 1`,
        name,
      ),
    ).toEqual([
      {
        indexname: 'invocations_decision',
        indexdef: `CREATE INDEX invocations_decision ON public.invocations USING btree (decision, id) WHERE (decision <> 'none'::text)`,
      },
      {
        indexname: 'invocations_point',
        indexdef: `CREATE INDEX invocations_point ON public.invocations USING btree (point, id) WHERE ((point <> 'pre_tool_use'::text) AND (point <> 'post_tool_use'::text))`,
      },
    ]);
    expect(await adminSql(`SELECT count(*)::int AS n FROM hookledger_migrations`, name)).toEqual([{ n: migrationFiles }]);
    expect(await adminSql(`SELECT to_regclass('session_summaries')::text AS t`, name)).toEqual([{ t: 'session_summaries' }]);
    expect(await adminSql(`SELECT to_regclass('ship_sources')::text AS t`, name)).toEqual([{ t: 'ship_sources' }]);
  });

  it('refuses a ledger written by a newer hookledger, in one line', async () => {
    const { name, url } = await freshDatabase();
    await (await connectPostgres({ url })).close();
    await adminSql(`INSERT INTO hookledger_migrations VALUES (99, '0099_future', 0)`, name);
    const error = await connectPostgres({ url }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).message).toMatch(
      new RegExp(
        `^the ledger was written by a newer hookledger \\(schema ${migrationFiles + 1}, this one knows ${migrationFiles}\\); upgrade hookledger$`,
      ),
    );
  });
});
