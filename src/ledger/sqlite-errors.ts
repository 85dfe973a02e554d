import { LedgerError } from '../domain/errors.js';

/** One line for a better-sqlite3 / filesystem error, naming the SQLite code when there is one. */
export function describeSqliteError(error: unknown): string {
  const err = error as { code?: string; message?: string };
  const message = err?.message ?? String(error);
  switch (err?.code) {
    case 'SQLITE_BUSY':
      return `the database is locked by another process (${message}); retry, or raise the busy timeout`;
    case 'SQLITE_READONLY':
      return `the database is read-only (${message}); check the file's permissions`;
    case 'SQLITE_READONLY_DIRECTORY':
      return `the database's directory is read-only (${message}); the ledger needs to create its -wal and -shm files there`;
    case 'SQLITE_IOERR_WRITE':
      return `could not write to the disk (${message}); the disk may be full or a file-size limit reached`;
    case 'SQLITE_FULL':
      return `the disk is full (${message})`;
    case 'SQLITE_CANTOPEN':
      return `the file cannot be opened (${message}); check the path and permissions`;
    case 'SQLITE_CORRUPT':
    case 'SQLITE_NOTADB':
      return `the file is not a valid hookledger database (${message})`;
    default:
      return err?.code ? `${err.code}: ${message}` : message;
  }
}

/** Runs a write, turning SQLite failures into one-line LedgerErrors that say what was being written and where. */
export function guardWrite<T>(path: string, what: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('ledger_write_failed', `could not ${what} in ${path}: ${describeSqliteError(error)}`, { cause: error });
  }
}

/** Whether a writer process on this host still exists (EPERM: it does, under another user). */
export function isProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
