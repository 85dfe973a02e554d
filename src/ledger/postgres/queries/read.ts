import { HookledgerError, LedgerError } from '../../../domain/errors.js';
import { describePgError } from '../errors.js';

/**
 * Runs a read of a PostgreSQL ledger; a driver or server failure (connection lost, statement
 * timeout, permission) becomes one LedgerError line naming the ledger, so the CLI answers it
 * like any other ledger failure (exit 3) instead of as an internal error. Our own typed errors
 * (NotFoundError, InputError) pass through.
 */
export async function pgRead<T>(location: string, what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw asReadError(location, what, error);
  }
}

/** The LedgerError a failed read becomes (see `pgRead`); typed hookledger errors are returned as they are. */
export function asReadError(location: string, what: string, error: unknown): Error {
  if (error instanceof HookledgerError) return error;
  return new LedgerError('ledger_read_failed', `cannot ${what} in ${location}: ${describePgError(error)}`, { cause: error });
}
