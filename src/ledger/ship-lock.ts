import Database from 'better-sqlite3';

/**
 * The local "one shipper per ledger" lock of automatic shipping (docs/ship.md, "Set it once").
 *
 * The lock is an exclusive SQLite lock on a small file next to the ledger (`<ledger>.ship.lock`),
 * held by the background shipper for as long as it runs. SQLite's locks are POSIX record locks,
 * which the kernel releases when the process dies, SIGKILL included: there is no stale lock to
 * detect and no pid to trust (a pid file would be wrong once the pid is reused).
 */
export class ShipperLock {
  private constructor(private db: Database.Database | null) {}

  /**
   * Takes the lock, waiting up to `waitMs` for it (a probe holds it for microseconds; a running
   * shipper for its whole run). Null when another process holds it.
   */
  static tryAcquire(lockPath: string, waitMs: number): ShipperLock | null {
    const db = new Database(lockPath, { timeout: waitMs });
    try {
      // No journal file beside the lock: nothing is ever written in the lock's transaction.
      db.pragma('journal_mode = MEMORY');
      db.exec('BEGIN EXCLUSIVE');
      return new ShipperLock(db);
    } catch (error) {
      db.close();
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return null;
      throw error;
    }
  }

  /** Lets the lock go (also what the process's exit does). */
  release(): void {
    if (!this.db) return;
    try {
      this.db.exec('ROLLBACK');
    } finally {
      this.db.close();
      this.db = null;
    }
  }
}

/**
 * Whether a shipper holds the lock now. A shared lock for an instant: it never blocks a shipper
 * taking the lock (which waits the instant out) and two probes never fail each other. A missing
 * lock file means no shipper ever ran. Never waits.
 */
export function shipperRunning(lockPath: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(lockPath, { timeout: 0, fileMustExist: true });
  } catch {
    return false;
  }
  try {
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    db.exec('COMMIT');
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === 'SQLITE_BUSY';
  } finally {
    db.close();
  }
}
