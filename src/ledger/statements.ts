import type Database from 'better-sqlite3';
import type { Ledger } from './open.js';

const caches = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * Prepares a read statement once per connection. Report queries run often (a server, a
 * paging UI); preparing each time would cost more than the indexed lookups themselves.
 */
export function prepared<P extends unknown[] | object = unknown[], R = unknown>(ledger: Ledger, sql: string): Database.Statement<P, R> {
  let cache = caches.get(ledger.sqlite);
  if (!cache) {
    cache = new Map();
    caches.set(ledger.sqlite, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    statement = ledger.sqlite.prepare(sql);
    cache.set(sql, statement);
  }
  return statement as Database.Statement<P, R>;
}
