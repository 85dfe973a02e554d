import type pg from 'pg';
import { HOOK_SETS_IN_FORCE_SQL, type HookSetInForce } from '../../queries/hook-sets.js';
import { numbered } from '../placeholders.js';

/** SQLite's query text, with PostgreSQL's numbered placeholders. */
const TEXT = numbered(HOOK_SETS_IN_FORCE_SQL);

/** The hook sets that decided the invocations started in [since, until), in order of first use (as on SQLite). */
export async function hookSetsInForcePostgres(pool: pg.Pool, since: number, until: number): Promise<HookSetInForce[]> {
  return (await pool.query<HookSetInForce>({ name: 'hl_hook_sets_in_force', text: TEXT, values: [since, until] })).rows;
}
