import type pg from 'pg';
import {
  filterConditions,
  idRangeKey,
  idRangeParams,
  idRangeSql,
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

/** No unary `+` hint: PostgreSQL's planner weighs the conditions itself (and has no `+` on text). */
export const POSTGRES_DIALECT: FilterDialect = { unindexed: (column) => column };

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
      bounds = (await pool.query<IdRange>({ text: numbered(idRangeSql(options)), values: idRangeParams(filter) })).rows[0]!;
      memo?.set(key, bounds);
    }
    lookups.idRange = bounds;
  }
  return filterConditions(filter, lookups, extra, extraParams, POSTGRES_DIALECT);
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
