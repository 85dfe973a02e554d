import type pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import { checkConnection, createPool, displayUrl, type PostgresConnectionOptions } from './connection.js';
import { describePgError } from './errors.js';
import { applyPostgresMigrations } from './migrate.js';
import { withPgpassPassword } from './pgpass.js';

export interface OpenPostgresOptions extends PostgresConnectionOptions {
  /** Open without writing: no migrations (a read-only role can read a ledger). */
  readonly?: boolean;
}

/** An open PostgreSQL ledger connection: its pool, and the URL without password for messages. */
export interface PostgresConnection {
  readonly pool: pg.Pool;
  /** The URL without its password. */
  readonly displayUrl: string;
  close(): Promise<void>;
}

/**
 * Connects (bounded by the connect timeout), then brings the schema up to date under the
 * migration lock (ledger/postgres/migrate.ts). Every failure is one LedgerError line naming the
 * ledger by its password-free URL.
 */
export async function connectPostgres(options: OpenPostgresOptions): Promise<PostgresConnection> {
  const pool = createPool({ ...options, url: await withPgpassPassword(options.url) });
  const shown = displayUrl(options.url);
  try {
    await checkConnection(pool, options.url);
    if (!options.readonly) {
      try {
        await applyPostgresMigrations(pool);
      } catch (error) {
        if (error instanceof LedgerError) throw error;
        throw new LedgerError('ledger_open_failed', `cannot migrate ledger ${shown}: ${describePgError(error)}`, { cause: error });
      }
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return { pool, displayUrl: shown, close: () => pool.end() };
}
