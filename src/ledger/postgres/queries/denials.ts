import type pg from 'pg';
import {
  checkGroupBy,
  DENIED,
  denialGroupsFrom,
  denialPageConditions,
  denialPageFrom,
  denialSelection,
  denialsPageSql,
  type DenialGroupBy,
  type DenialGroups,
  type DenialGroupSqlRow,
  type DenialPage,
  type DenialSqlRow,
} from '../../queries/denials.js';
import type { InvocationFilter } from '../../queries/filters.js';
import { checkPage, type PageRequest } from '../../queries/paging.js';
import { numbered } from '../placeholders.js';
import { pgFilterSql } from './filters.js';

/** Denials on PostgreSQL: the SQLite module's query and paging (ledger/queries/denials.ts), its placeholders numbered. */
export async function listDenialsPostgres(pool: pg.Pool, filter: InvocationFilter, page: PageRequest): Promise<DenialPage> {
  const { limit, offset, after } = checkPage(page, 'denials');
  const { extra, extraParams } = denialPageConditions(after);
  const { where, params } = await pgFilterSql(pool, denialSelection(filter), [DENIED, ...extra], extraParams, undefined, {
    deniedOnly: true,
  });
  const { rows } = await pool.query<DenialSqlRow>({ text: numbered(denialsPageSql(where)), values: [...params, limit + 1, offset] });
  return denialPageFrom(rows, limit);
}

/** The grouping key of each `--group-by`; days are UTC calendar days, as on SQLite. */
const GROUP_KEYS: Record<DenialGroupBy, string> = {
  hook: 'i.decisive_hook_id',
  tool: 'i.tool_name',
  reason: 'i.reason_code',
  session: 'i.session_id',
  agent: 'i.agent',
  day: `to_char(to_timestamp(i.started_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};

/**
 * Denials counted per group. Written for PostgreSQL rather than shared: the order must be
 * SQLite's (keys compared byte-wise, NULL first ascending and last descending), which here needs
 * `COLLATE "C"` and explicit NULLS, and an output name cannot carry those in ORDER BY.
 */
export async function groupDenialsPostgres(
  pool: pg.Pool,
  filter: InvocationFilter,
  groupBy: DenialGroupBy,
  options: { limit?: number } = {},
): Promise<DenialGroups> {
  checkGroupBy(groupBy);
  const limit = options.limit ?? 10_000;
  const { where, params } = await pgFilterSql(pool, denialSelection(filter), [DENIED], [], undefined, { deniedOnly: true });
  const key = GROUP_KEYS[groupBy];
  const order = groupBy === 'day' ? `${key} DESC` : `count(*) DESC, ${key} COLLATE "C" NULLS FIRST`;
  const { rows } = await pool.query<DenialGroupSqlRow>({
    text: numbered(`SELECT ${key} AS key, count(*) AS count, min(i.started_at) AS "firstAt", max(i.started_at) AS "lastAt",
       (sum(count(*)) OVER ())::bigint AS total, count(*) OVER () AS total_groups
     FROM invocations i ${where} GROUP BY 1 ORDER BY ${order} LIMIT ?`),
    values: [...params, limit],
  });
  return denialGroupsFrom(groupBy, rows);
}
