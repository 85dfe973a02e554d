import pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import { describePgError } from './errors.js';
import { displayUrl } from './url.js';

export { displayUrl, isPostgresUrl } from './url.js';

/**
 * The connection pool of a PostgreSQL ledger (node-postgres; docs/postgres.md says why this
 * driver). The URL is handed to the driver as is, so `sslmode`, `application_name` and the other
 * usual parameters work as with psql; the password comes from the URL, `PGPASSWORD` or
 * `~/.pgpass` (pgpass.ts), and is never part of a message: `displayUrl` drops it.
 */

const INT8_OID = 20;

/** `bigint` (int8) columns come back as JS numbers: ids, times (ms) and durations (µs) are far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (text: string) => Number(text)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export interface PostgresConnectionOptions {
  /** `postgres://` or `postgresql://` URL. */
  url: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Give up connecting after this long, ms. Default: the URL's `connect_timeout` (libpq's, in seconds), else 5000. */
  connectTimeoutMs?: number;
  /** The server cancels any one statement running longer, ms. Default 30000. */
  statementTimeoutMs?: number;
}

/**
 * A pool whose every connection has the statement timeout set. Connecting is lazy (the first
 * query); `connect` below checks the server is reachable and says why in one line if not.
 */
export function createPool(options: PostgresConnectionOptions): pg.Pool {
  let config: pg.PoolConfig;
  try {
    const url = new URL(options.url);
    config = {
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? connectTimeoutOf(url) ?? 5000,
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      // A lock the ledger waits for (a writer's chain head) is bounded by the statement timeout too.
      application_name: 'hookledger',
      keepAlive: true,
      types,
    };
  } catch (error) {
    throw new LedgerError('ledger_open_failed', `cannot open ledger ${displayUrl(options.url)}: not a valid URL`, { cause: error });
  }
  const pool = new pg.Pool(config);
  // An idle connection the server drops (restart, failover) must not crash the process; the next
  // query on the pool gets a fresh connection or a clear error.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * libpq's `connect_timeout` URL parameter (whole seconds) in ms; node-postgres reads it only for
 * its native binding. Zero means "wait forever" to libpq: a hook must never hang on a connect, so
 * anything but a positive whole number keeps the default.
 */
function connectTimeoutOf(url: URL): number | undefined {
  const text = url.searchParams.get('connect_timeout')?.trim();
  return text !== undefined && /^[1-9]\d*$/.test(text) ? Number(text) * 1000 : undefined;
}

/** Checks out one connection (proving the server, credentials and database), as a LedgerError when it fails. */
export async function checkConnection(pool: pg.Pool, url: string): Promise<void> {
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    throw new LedgerError('ledger_open_failed', `cannot open ledger ${displayUrl(url)}: ${describePgError(error)}`, { cause: error });
  }
}
