import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';
import type { InvocationFilter } from './filters.js';

/**
 * Reads of `session_summaries`, the per-session totals triggers keep current as records commit
 * (migration 0005). They stand in for aggregating a session's invocations when a listing is
 * not filtered: the sessions list a console opens first.
 */

export interface StoredSummaryRow {
  session_id: string;
  first_seen: number;
  last_seen: number;
  last_id: number;
  invocations: number;
  denials: number;
  asks: number;
  modified: number;
  failures: number;
  timeouts: number;
}

const COLUMNS = 'session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts';

/** Whether a filter selects every invocation (the summaries are over all of a session's invocations). */
export function selectsEverything(filter: InvocationFilter): boolean {
  return Object.values(filter).every((value) => value === undefined);
}

/**
 * Makes the summaries usable: recomputes the sessions a prune or an edit marked stale. Returns
 * false when they cannot be used (an older ledger without them, or stale rows in a read-only
 * open), and the caller aggregates instead.
 */
export function summariesReady(ledger: Ledger): boolean {
  if (prepared(ledger, `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_summaries'`).get() === undefined) return false;
  const stale = prepared<[], string>(ledger, 'SELECT session_id FROM session_summaries INDEXED BY session_summaries_stale WHERE stale = 1')
    .pluck()
    .all();
  if (stale.length === 0) return true;
  if (ledger.sqlite.readonly) return false;
  const recompute = prepared<[string], Omit<StoredSummaryRow, 'session_id'>>(
    ledger,
    `SELECT min(i.started_at) AS first_seen, max(i.started_at) AS last_seen, max(i.id) AS last_id, count(*) AS invocations,
       coalesce(sum(i.decision IS 'deny'), 0) AS denials, coalesce(sum(i.decision IS 'ask'), 0) AS asks,
       coalesce(sum(i.modified_input_json IS NOT NULL), 0) AS modified,
       coalesce(sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'failed')), 0) AS failures,
       coalesce(sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'timed_out')), 0) AS timeouts
     FROM invocations i WHERE i.session_id = ?`,
  );
  const update = prepared(
    ledger,
    `UPDATE session_summaries SET first_seen = @first_seen, last_seen = @last_seen, last_id = @last_id, invocations = @invocations,
       denials = @denials, asks = @asks, modified = @modified, failures = @failures, timeouts = @timeouts, stale = 0
     WHERE session_id = @session_id`,
  );
  const remove = prepared<[string]>(ledger, 'DELETE FROM session_summaries WHERE session_id = ?');
  ledger.sqlite
    .transaction(() => {
      for (const sessionId of stale) {
        const row = recompute.get(sessionId)!;
        if (row.invocations === 0) remove.run(sessionId);
        else update.run({ ...row, session_id: sessionId });
      }
    })
    .immediate();
  return true;
}

/** Sessions most recently active first (by their newest invocation id), as the walk over invocations lists them. */
export function newestSummaries(ledger: Ledger, count: number): StoredSummaryRow[] {
  return prepared<[number], StoredSummaryRow>(
    ledger,
    `SELECT ${COLUMNS} FROM session_summaries INDEXED BY session_summaries_last_id ORDER BY last_id DESC LIMIT ?`,
  ).all(count);
}

/** One session's stored summary (call `summariesReady` first). */
export function storedSummary(ledger: Ledger, sessionId: string): StoredSummaryRow | undefined {
  return prepared<[string], StoredSummaryRow>(ledger, `SELECT ${COLUMNS} FROM session_summaries WHERE session_id = ?`).get(sessionId);
}
