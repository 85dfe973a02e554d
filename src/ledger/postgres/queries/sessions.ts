import type pg from 'pg';
import { NotFoundError } from '../../../domain/errors.js';
import type { IdRange, InvocationFilter } from '../../queries/filters.js';
import { checkPage, decodeCursorParts, encodeCursor, type PageRequest } from '../../queries/paging.js';
import { selectsEverything, type StoredSummaryRow } from '../../queries/session-summaries.js';
import {
  summaryFromRow,
  timelineFrom,
  WALK_BATCH,
  type SessionPage,
  type SessionSummary,
  type SessionTimeline,
  type SummarySqlRow,
  type TimelineSqlRow,
} from '../../queries/sessions.js';
import { describePgError } from '../errors.js';
import { numbered } from '../placeholders.js';
import { pgFilterSql } from './filters.js';

/**
 * Sessions and session timelines on PostgreSQL: the algorithm and results of
 * ledger/queries/sessions.ts (the walk over the newest invocations, its cursor, the stored
 * summaries for the unfiltered first page), the same row mappers. The aggregate SQL is written
 * for PostgreSQL: it has no boolean `sum`, and `json_agg` stands for `json_group_array`.
 */

/** Per-invocation counts of failed and timed-out outcomes, and the session's agents (a JSON array, as text). */
const SUMMARY_COLUMNS = `min(i.started_at) AS first_seen, max(i.started_at) AS last_seen, count(*) AS invocations,
  count(*) FILTER (WHERE i.decision = 'deny') AS denials, count(*) FILTER (WHERE i.decision = 'ask') AS asks,
  count(*) FILTER (WHERE i.modified_input_json IS NOT NULL) AS modified,
  sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'failed'))::bigint AS failures,
  sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'timed_out'))::bigint AS timeouts`;
const AGENTS = `(json_agg(DISTINCT i.agent) FILTER (WHERE i.agent IS NOT NULL))::text AS agents`;

/** Totals for one session, or null when the filter selects none of its invocations. */
export async function sessionSummaryPostgres(
  pool: pg.Pool,
  sessionId: string,
  filter: InvocationFilter = {},
  memo?: Map<string, IdRange>,
): Promise<SessionSummary | null> {
  const { where, params } = await pgFilterSql(pool, { ...filter, sessionId }, [], [], memo);
  const { rows } = await pool.query<SummarySqlRow>({
    text: numbered(`SELECT ${SUMMARY_COLUMNS}, ${AGENTS} FROM invocations i ${where}`),
    values: params,
  });
  const row = rows[0]!;
  return row.invocations === 0 ? null : summaryFromRow(sessionId, row);
}

/** Sessions, most recently active first: see `listSessions` in ledger/queries/sessions.ts (same walk, same cursor). */
export async function listSessionsPostgres(pool: pg.Pool, filter: InvocationFilter, page: PageRequest): Promise<SessionPage> {
  const { limit, offset, after } = checkPage(page, 'sessions');
  const { sessionId: _ignored, ...rest } = filter;
  const stored = selectsEverything(rest) && (await summariesReadyPostgres(pool));
  if (stored && after === null) return firstPageFromSummaries(pool, limit, offset);
  const memo = new Map<string, IdRange>();
  const { where, params } = await pgFilterSql(pool, rest, ['i.session_id IS NOT NULL', 'i.id < ?'], [], memo);
  const walk = numbered(`SELECT i.id, i.session_id FROM invocations i ${where} ORDER BY i.id DESC LIMIT ${WALK_BATCH}`);
  const wanted = offset + limit + 1;
  const found: { id: number; sessionId: string }[] = [];
  const seen = new Set<string>();
  let top = after !== null && page.cursor ? decodeCursorParts('sessions', page.cursor).top : null;
  let below = after ?? Number.MAX_SAFE_INTEGER;
  while (found.length < wanted) {
    const batch = (await pool.query<{ id: number; session_id: string }>({ text: walk, values: [...params, below] })).rows;
    if (top === null && after === null && batch.length > 0) top = batch[0]!.id;
    for (const row of batch) {
      if (seen.has(row.session_id)) continue;
      seen.add(row.session_id);
      if (after !== null && (await activeSince(pool, rest, row.session_id, after, top, memo))) continue;
      found.push({ id: row.id, sessionId: row.session_id });
      if (found.length >= wanted) break;
    }
    if (batch.length < WALK_BATCH) break;
    below = batch[batch.length - 1]!.id;
  }
  const selected = found.slice(offset);
  const more = selected.length > limit;
  const pageRows = more ? selected.slice(0, limit) : selected;
  const summaries = await Promise.all(
    pageRows.map(async (f) => {
      const row = stored ? await storedSummary(pool, f.sessionId) : undefined;
      return row ? summaryFromRow(f.sessionId, row) : (await sessionSummaryPostgres(pool, f.sessionId, rest, memo))!;
    }),
  );
  return { rows: summaries, nextCursor: more ? encodeCursor('sessions', pageRows[pageRows.length - 1]!.id, top ?? undefined) : null };
}

/** Whether the session has a matching invocation in [id, top] (the ids earlier pages walked); no `top`: at or above id. */
async function activeSince(
  pool: pg.Pool,
  filter: InvocationFilter,
  sessionId: string,
  id: number,
  top: number | null,
  memo: Map<string, IdRange>,
): Promise<boolean> {
  const { where, params } = await pgFilterSql(
    pool,
    { ...filter, sessionId },
    top === null ? ['i.id >= ?'] : ['i.id >= ?', 'i.id <= ?'],
    top === null ? [id] : [id, top],
    memo,
  );
  return (await pool.query({ text: numbered(`SELECT 1 FROM invocations i ${where} LIMIT 1`), values: params })).rows.length > 0;
}

/** The stored summary's columns, with the session's agents (read through the session index). */
const STORED = `s.session_id, s.first_seen, s.last_seen, s.last_id, s.invocations, s.denials, s.asks, s.modified, s.failures, s.timeouts,
  (SELECT (json_agg(DISTINCT i.agent) FILTER (WHERE i.agent IS NOT NULL))::text FROM invocations i WHERE i.session_id = s.session_id) AS agents`;

/** The unfiltered first page from the stored summaries: the walk's sessions, order and cursor (see sessions.ts). */
async function firstPageFromSummaries(pool: pg.Pool, limit: number, offset: number): Promise<SessionPage> {
  const { rows } = await pool.query<StoredSummaryRow & { agents: string | null }>({
    name: 'hl_sessions_newest',
    text: `SELECT ${STORED} FROM session_summaries s ORDER BY s.last_id DESC LIMIT $1`,
    values: [offset + limit + 1],
  });
  const top = rows[0]?.last_id;
  const selected = rows.slice(offset);
  const more = selected.length > limit;
  const pageRows = more ? selected.slice(0, limit) : selected;
  return {
    rows: pageRows.map((r) => summaryFromRow(r.session_id, r)),
    nextCursor: more ? encodeCursor('sessions', pageRows[pageRows.length - 1]!.last_id, top) : null,
  };
}

async function storedSummary(pool: pg.Pool, sessionId: string): Promise<(StoredSummaryRow & { agents: string | null }) | undefined> {
  const { rows } = await pool.query<StoredSummaryRow & { agents: string | null }>({
    name: 'hl_sessions_stored',
    text: `SELECT ${STORED} FROM session_summaries s WHERE s.session_id = $1`,
    values: [sessionId],
  });
  return rows[0];
}

/**
 * Makes the stored summaries usable: recomputes the sessions a prune or an edit marked stale
 * (the triggers of migrations/postgres/0002 mark them). False when they cannot be used (a role
 * that may not write them while some are stale): the caller aggregates instead.
 */
export async function summariesReadyPostgres(pool: pg.Pool): Promise<boolean> {
  const stale = await pool.query({ name: 'hl_summaries_stale', text: 'SELECT 1 FROM session_summaries WHERE stale = 1 LIMIT 1' });
  if (stale.rows.length === 0) return true;
  try {
    await pool.query({
      name: 'hl_summaries_recompute',
      text: `WITH stale AS (SELECT session_id FROM session_summaries WHERE stale = 1 FOR UPDATE SKIP LOCKED),
        fresh AS (
          SELECT i.session_id, ${SUMMARY_COLUMNS}, max(i.id) AS last_id
          FROM invocations i WHERE i.session_id IN (SELECT session_id FROM stale) GROUP BY i.session_id),
        gone AS (DELETE FROM session_summaries s USING stale WHERE s.session_id = stale.session_id
          AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.session_id = s.session_id))
        UPDATE session_summaries s SET first_seen = f.first_seen, last_seen = f.last_seen, last_id = f.last_id,
          invocations = f.invocations, denials = f.denials, asks = f.asks, modified = f.modified,
          failures = coalesce(f.failures, 0), timeouts = coalesce(f.timeouts, 0), stale = 0
        FROM fresh f WHERE s.session_id = f.session_id`,
    });
  } catch (error) {
    // A read-only role (or server) cannot refresh them; the listing aggregates instead.
    if (/read-only|permission denied/.test(describePgError(error))) return false;
    throw error;
  }
  // Rows another reader was recomputing at the same moment (skipped above) are fresh once it commits.
  return (
    (await pool.query({ name: 'hl_summaries_stale', text: 'SELECT 1 FROM session_summaries WHERE stale = 1 LIMIT 1' })).rows.length === 0
  );
}

/** One session as a timeline, in recorded order: see `sessionTimeline` in ledger/queries/sessions.ts. */
export async function sessionTimelinePostgres(
  pool: pg.Pool,
  location: string,
  sessionId: string,
  page: PageRequest,
  filter: InvocationFilter = {},
): Promise<SessionTimeline> {
  const { limit, offset, after } = checkPage(page, 'timeline');
  const memo = new Map<string, IdRange>();
  const session = await sessionSummaryPostgres(pool, sessionId, filter, memo);
  if (!session) throw new NotFoundError(`no invocations for session "${sessionId}" in ${location}`);
  const { where, params } = await pgFilterSql(
    pool,
    { ...filter, sessionId },
    after === null ? [] : ['i.id > ?'],
    after === null ? [] : [after],
    memo,
  );
  const { rows } = await pool.query<TimelineSqlRow>({
    text: numbered(`SELECT i.id, i.started_at, i.point, i.event_name, i.turn, i.tool_name, i.tool_use_id, i.status, i.decision,
       i.decisive_hook_id, i.reason_code, i.message, i.duration_us, i.input_json, i.modified_input_json,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id) AS hooks,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'failed') AS failures,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'timed_out') AS timeouts,
       CASE WHEN i.modified_input_json IS NOT NULL THEN (SELECT json_agg(o.hook_id ORDER BY o.execution_order)::text FROM outcomes o
         WHERE o.invocation_id = i.id AND o.modified_input_json IS NOT NULL AND o.failure_reason IS NULL) END AS modified_by
     FROM invocations i ${where} ORDER BY i.id LIMIT ? OFFSET ?`),
    values: [...params, limit + 1, offset],
  });
  return timelineFrom(session, rows, limit);
}
