import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { quoteIdent } from '../../scripts/postgres-server.js';

/** The shared server's superuser URL for `database`. */
export function adminUrl(database = 'postgres'): string {
  const url = new URL(inject('postgresAdminUrl'));
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs SQL as the superuser on `database` of the shared server. */
export async function adminSql<R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  database = 'postgres',
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: adminUrl(database) });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A new, empty database on the shared server (tests run in parallel workers; each gets its own),
 * as the superuser's URL. Left for the server's removal at the end of the run.
 */
export async function freshDatabase(prefix = 'hl'): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminSql(`CREATE DATABASE ${quoteIdent(name)}`);
  return { name, url: adminUrl(name) };
}
