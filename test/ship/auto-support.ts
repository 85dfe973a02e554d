import Database from 'better-sqlite3';
import { sleep } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';

/** Shared by the automatic-shipping tests (auto, auto-agents, serve-ship): a centre, and waiting for what it holds. */

/** A fresh central database: its URL without the password (as a settings file holds it), the password, its name. */
export async function centreWithoutPassword(prefix: string): Promise<{ url: string; password: string; database: string; fullUrl: string }> {
  const fresh = await freshDatabase(prefix);
  const parsed = new URL(fresh.url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return { url: parsed.toString().replace(':@', '@'), password, database: fresh.name, fullUrl: fresh.url };
}

/** How many invocations the centre holds, and how many distinct (source, source id) pairs: equal when nothing was shipped twice. */
export async function centreCounts(database: string): Promise<{ n: number; distinct: number }> {
  try {
    const [row] = await adminSql<{ n: number; distinct: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT (writer_id, source_ref))::int AS distinct FROM invocations',
      database,
    );
    return row!;
  } catch {
    return { n: 0, distinct: 0 }; // not migrated yet: nothing shipped
  }
}

/** Reads `read` every 100 ms until `done` says so; fails naming `what` and the last value after `timeoutMs`. */
export async function waitFor<T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

/** The invocations the local ledger holds. */
export function countLocal(db: string): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
  } finally {
    sqlite.close();
  }
}
