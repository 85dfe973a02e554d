import type pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import { describePgError } from './errors.js';

/** Runs `work` in one transaction on one pooled connection; any failure rolls it back whole. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A connection that cannot even roll back (server gone) is dropped, not reused.
    client.release(broken);
  }
}

/** Runs a write; driver and server failures become one-line LedgerErrors naming what and where. */
export async function guardWrite<T>(location: string, what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('ledger_write_failed', `cannot ${what} in ${location}: ${describePgError(error)}`, { cause: error });
  }
}
