import { LedgerError } from '../../domain/errors.js';
import { HOLD_SQL, holdArguments, notHeld, type LegalHold } from '../holds.js';
import { describePgError } from './errors.js';
import { numbered } from './placeholders.js';
import { storedValue } from './text.js';
import type pg from 'pg';

/**
 * Legal holds on PostgreSQL: the statements and checks of ledger/holds.ts (SQLite), with
 * PostgreSQL's placeholders, so a hold means the same on both engines. A session id is matched
 * as it is stored (ledger/postgres/text.ts), so a hold finds the session's invocations.
 */

const PLACE = { name: 'hl_hold_place', text: numbered(HOLD_SQL.place) };
const RELEASE = { name: 'hl_hold_release', text: numbered(HOLD_SQL.release) };
const LIST = { name: 'hl_hold_list', text: HOLD_SQL.list };

/** Places (or updates the reason of) a legal hold on a session. The session need not exist yet. */
export async function placeHoldPostgres(
  pool: pg.Pool,
  location: string,
  sessionId: string,
  reason: string,
  heldBy?: string,
): Promise<LegalHold> {
  const values = holdArguments(sessionId, reason, heldBy).map(storedValue);
  await guard(location, 'place the legal hold', () => pool.query({ ...PLACE, values: [...values, Date.now()] }));
  return (await listHoldsPostgres(pool, location)).find((h) => h.sessionId === values[0])!;
}

/** Releases a hold; NotFoundError when the session is not held. */
export async function releaseHoldPostgres(pool: pg.Pool, location: string, sessionId: string): Promise<void> {
  const result = await guard(location, 'release the legal hold', () => pool.query({ ...RELEASE, values: [storedValue(sessionId)] }));
  if (result.rowCount === 0) throw notHeld(sessionId, location);
}

/** Every hold, oldest first, with the session's invocation count now. */
export async function listHoldsPostgres(pool: pg.Pool, location: string): Promise<LegalHold[]> {
  return (await guard(location, 'read the legal holds', () => pool.query<LegalHold>(LIST))).rows;
}

async function guard<T>(location: string, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new LedgerError(
      what.startsWith('read') ? 'ledger_read_failed' : 'ledger_write_failed',
      `cannot ${what} in ${location}: ${describePgError(error)}`,
      {
        cause: error,
      },
    );
  }
}
