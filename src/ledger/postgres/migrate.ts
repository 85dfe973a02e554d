import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import { packageRoot } from '../paths.js';

/** Where drizzle-kit writes the PostgreSQL migrations (drizzle.pg.config.ts). */
export const postgresMigrationsFolder = join(packageRoot, 'migrations', 'postgres');

/** The advisory lock that serializes migrations: two int4 keys, 'hklg' and 1. */
const MIGRATION_LOCK = [0x686b6c67, 1] as const;

interface Journal {
  entries: { idx: number; tag: string }[];
}

/** The migration files, in journal order. */
function journal(): Journal['entries'] {
  return (JSON.parse(readFileSync(join(postgresMigrationsFolder, 'meta', '_journal.json'), 'utf8')) as Journal).entries;
}

/** How many files this database has applied (0 before the first migration). */
async function appliedCount(db: pg.Pool | pg.PoolClient): Promise<number> {
  // Two statements: a query naming a table that does not exist fails at parse time, whatever CASE says.
  const exists = (await db.query<{ t: string | null }>(`SELECT to_regclass('hookledger_migrations')::text AS t`)).rows[0]!.t !== null;
  if (!exists) return 0;
  return Number((await db.query<{ n: number }>('SELECT count(*) AS n FROM hookledger_migrations')).rows[0]!.n);
}

/**
 * Applies drizzle-kit's SQL files that this database has not seen, in journal order, in one
 * transaction under a transaction-scoped advisory lock: processes starting at once on a new
 * database wait for the first one and then find the schema current (PostgreSQL's DDL is
 * transactional, so a failed migration leaves nothing behind). An up-to-date database costs two
 * small queries. `hookledger_migrations` records each file applied (drizzle's own migrator is not used:
 * it cannot run under our lock).
 *
 * @returns how many files were applied now.
 */
export async function applyPostgresMigrations(pool: pg.Pool): Promise<number> {
  const entries = journal();
  const current = await appliedCount(pool);
  if (current === entries.length) return 0;
  if (current > entries.length) throw tooNew(current, entries.length);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS hookledger_migrations (
      idx bigint PRIMARY KEY, tag text NOT NULL, applied_at bigint NOT NULL)`);
    const from = await appliedCount(client);
    if (from > entries.length) throw tooNew(from, entries.length);
    for (const entry of entries.slice(from)) {
      const text = readFileSync(join(postgresMigrationsFolder, `${entry.tag}.sql`), 'utf8');
      for (const statement of text.split('--> statement-breakpoint')) {
        if (statement.trim() !== '') await client.query(statement);
      }
      await client.query('INSERT INTO hookledger_migrations (idx, tag, applied_at) VALUES ($1, $2, $3)', [
        entry.idx,
        entry.tag,
        Date.now(),
      ]);
    }
    await client.query('COMMIT');
    return entries.length - from;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function tooNew(applied: number, known: number): LedgerError {
  return new LedgerError(
    'ledger_too_new',
    `the ledger was written by a newer hookledger (schema ${applied}, this one knows ${known}); upgrade hookledger`,
  );
}
