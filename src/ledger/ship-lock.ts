import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import * as z from 'zod';

/**
 * The "one shipper per ledger" lock (docs/ship.md, "One shipper per ledger"): every shipper of a
 * ledger holds it while it runs — `ship`, `ship --follow` (serve's too) and `ship --background`.
 *
 * A ledger's lock is one or more lock files (ship/auto-files.ts names them: one by the ledger's
 * real path, one by its file identity), all held together. Each is an exclusive SQLite lock on a
 * small file. SQLite's locks are POSIX record locks, which the kernel releases when the process
 * dies, SIGKILL included: there is no stale lock to detect and no pid to trust. The holder writes
 * its pid and command beside each (`<lock>.holder`) only so that a refused shipper can say who
 * holds the ledger; it is read only while the lock is seen held.
 */
export class ShipperLock {
  private constructor(private dbs: Database.Database[]) {}

  /**
   * Takes every lock of `lockFiles` (in order), waiting up to `waitMs` in all for them (a probe
   * holds one for microseconds; a running shipper for its whole run). Null when another process
   * holds one of them; then none is held. `command` is what the holder file says it is.
   */
  static tryAcquire(lockFiles: readonly string[], waitMs: number, command = 'ship'): ShipperLock | null {
    const deadline = Date.now() + waitMs;
    const held: Database.Database[] = [];
    for (const file of lockFiles) {
      const db = new Database(file, { timeout: Math.max(0, deadline - Date.now()) });
      try {
        // No journal file beside the lock: nothing is ever written in the lock's transaction.
        db.pragma('journal_mode = MEMORY');
        db.exec('BEGIN EXCLUSIVE');
        held.push(db);
      } catch (error) {
        db.close();
        new ShipperLock(held).release();
        if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return null;
        throw error;
      }
    }
    const holder: ShipperHolder = { pid: process.pid, command, since: new Date().toISOString() };
    for (const file of lockFiles) writeHolder(file, holder);
    return new ShipperLock(held);
  }

  /** Lets the lock go (also what the process's exit does). */
  release(): void {
    const dbs = this.dbs;
    this.dbs = [];
    for (const db of dbs) {
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    }
  }
}

/**
 * Whether a shipper holds the lock now. A shared lock on each file for an instant: it never
 * blocks a shipper taking the lock (which waits the instant out) and two probes never fail each
 * other. A missing lock file means no shipper ever ran. Never waits.
 */
export function shipperRunning(lockFiles: readonly string[]): boolean {
  return lockFiles.some(held);
}

/** Who holds the ledger's lock: null when nobody does, or its holder file cannot be read. */
export function shipperHolder(lockFiles: readonly string[]): ShipperHolder | null {
  for (const file of lockFiles) {
    if (!held(file)) continue;
    try {
      return holderSchema.parse(JSON.parse(readFileSync(`${file}.holder`, 'utf8')));
    } catch {
      return null;
    }
  }
  return null;
}

const holderSchema = z.object({
  pid: z.number().int(),
  /** `ship`, `ship --follow`, `ship --background`. */
  command: z.string(),
  since: z.string(),
});
/** The process holding a ledger's shipper lock, as it wrote itself down. */
export type ShipperHolder = z.infer<typeof holderSchema>;

function writeHolder(lockFile: string, holder: ShipperHolder): void {
  const temp = `${lockFile}.holder.${process.pid}.tmp`;
  try {
    writeFileSync(temp, JSON.stringify(holder), { mode: 0o600 });
    renameSync(temp, `${lockFile}.holder`);
  } catch {
    // Only a message needs it: the lock itself is held.
  }
}

function held(lockFile: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(lockFile, { timeout: 0, fileMustExist: true });
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
