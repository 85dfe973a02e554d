import type pg from 'pg';
import {
  filterConditions,
  idRangeKey,
  idRangeParams,
  type FilterDialect,
  type FilterLookups,
  type IdRange,
  type InvocationFilter,
  type SqlCondition,
} from '../../queries/filters.js';
import { numbered } from '../placeholders.js';

/**
 * The invocation filter on PostgreSQL: the conditions of ledger/queries/filters.ts, the same SQL
 * apart from the placeholders and SQLite's index hints; only the lookups a filter needs first
 * (hook set ids, a time window's id range) are read here.
 */

/**
 * No unary `+` hint: PostgreSQL's planner weighs the text conditions itself (and has no `+` on
 * text). A time bound is the exception: it always comes with the window's exact id range, and left
 * indexable the planner (which cannot know that ids follow start times) reads the whole window
 * through `invocations_deny_started_at` and sorts it (23 ms for a 7-day denials page at 1M
 * invocations) instead of walking ids from the newest (0.3 ms). `+ 0` makes it an expression no
 * index serves.
 */
export const POSTGRES_DIALECT: FilterDialect = {
  unindexed: (column) => (column === 'i.started_at' ? '(i.started_at + 0)' : column),
  // A shipped source is the writer whose chain is its own (docs/ship.md); a direct writer's id selects its records alike.
  source: 'i.writer_id = ?',
};

/** As `orderedFilterSql` (ledger/queries/filters.ts), with `?` placeholders: pass the query through `numbered`. */
export async function pgFilterSql(
  pool: pg.Pool,
  filter: InvocationFilter,
  extra: string[] = [],
  extraParams: (string | number)[] = [],
  memo?: Map<string, IdRange>,
  options: { deniedOnly?: boolean } = {},
): Promise<SqlCondition> {
  const lookups: FilterLookups = {};
  if (filter.hookSet !== undefined) lookups.hookSetIds = await hookSetIdsPostgres(pool, filter.hookSet);
  if (lookups.hookSetIds?.length !== 0 && (filter.since !== undefined || filter.until !== undefined)) {
    const key = idRangeKey(filter, options);
    let bounds = memo?.get(key);
    if (!bounds) {
      bounds = (await pool.query<IdRange>({ text: numbered(pgIdRangeSql(options)), values: idRangeParams(filter) })).rows[0]!;
      memo?.set(key, bounds);
    }
    lookups.idRange = bounds;
  }
  return filterConditions(filter, lookups, extra, extraParams, POSTGRES_DIALECT);
}

/**
 * A time window's id range, written for PostgreSQL (idRangeSql's columns and parameters): with
 * SQLite's `SELECT min(id), max(id) … WHERE started_at …` the planner turns min and max into walks
 * of the id order (the primary key, or `(decision, id)` for denials) filtered on started_at, and
 * for a recent window the walk from the oldest end reads almost the whole ledger first (0.5-0.7 s
 * per denials page at 1M invocations, scripts/bench-postgres.ts). Reading the window's ids through
 * its started_at index first reads only the window; `OFFSET 0` keeps the planner from flattening it.
 */
function pgIdRangeSql(options: { deniedOnly?: boolean }): string {
  const denied = options.deniedOnly ? `decision = 'deny' AND ` : '';
  return `SELECT min(id) AS lo, max(id) AS hi FROM (SELECT id FROM invocations WHERE ${denied}started_at >= ? AND started_at < ? OFFSET 0) AS w`;
}

/**
 * The hook sets a `hookSet` filter names: by name, or by fingerprint prefix (6+ hex characters).
 * `starts_with` rather than SQLite's range, whose text comparison would follow the database's
 * collation here.
 */
export async function hookSetIdsPostgres(pool: pg.Pool, nameOrFingerprint: string): Promise<number[]> {
  const prefix = nameOrFingerprint.toLowerCase();
  const { rows } = await pool.query<{ id: number }>({
    name: 'hl_hook_set_ids',
    text: 'SELECT id FROM hook_sets WHERE name = $1 OR ($2::boolean AND starts_with(fingerprint, $3)) ORDER BY id',
    values: [nameOrFingerprint, /^[0-9a-f]{6,64}$/.test(prefix), prefix],
  });
  return rows.map((r) => r.id);
}
