import { NotFoundError } from '../../domain/errors.js';
import { fromJsonText } from '../json-text.js';
import type { InvocationStatus } from '../../domain/outcomes.js';
import type { Point } from '../../domain/points.js';
import type { Decision, ReasonCode } from '../../domain/results.js';
import type { Ledger } from '../open.js';
import type { InvocationRow } from '../rows.js';
import { prepared } from '../statements.js';
import { orderedFilterSql, type IdRange, type InvocationFilter } from './filters.js';
import { checkPage, decodeCursorParts, encodeCursor, type PageRequest } from './paging.js';
import { newestSummaries, selectsEverything, storedSummary, summariesReady, type StoredSummaryRow } from './session-summaries.js';

/** One session's totals (over the invocations the filter selects). */
export interface SessionSummary {
  sessionId: string;
  /** ms since the epoch of the first and last invocation. */
  firstSeen: number;
  lastSeen: number;
  invocations: number;
  denials: number;
  asks: number;
  /** Invocations whose input a hook modified. */
  modified: number;
  /** Hook outcomes that failed (threw, crashed, returned something invalid). */
  failures: number;
  /** Hook outcomes that timed out. */
  timeouts: number;
  /** The agents that sent the session's events (`codex`, `gemini-cli`, `claude-code/Explore` ...), sorted. */
  agents: string[];
}

export interface SessionPage {
  /** Most recently active first. */
  rows: SessionSummary[];
  nextCursor: string | null;
}

/** A session summary as the queries return it (either engine). */
export interface SummarySqlRow {
  first_seen: number | null;
  last_seen: number | null;
  invocations: number;
  denials: number | null;
  asks: number | null;
  modified: number | null;
  failures: number | null;
  timeouts: number | null;
  /** JSON array of the agents; absent in the stored summaries, then read per session (an index range). */
  agents?: string | null;
}

/** The summary from its row; `agents` absent is read from a SQLite `ledger`. */
export function summaryFromRow(sessionId: string, r: SummarySqlRow, ledger?: Ledger): SessionSummary {
  const agents = r.agents !== undefined ? r.agents : ledger ? sessionAgents(ledger, sessionId) : null;
  return {
    sessionId,
    firstSeen: r.first_seen ?? 0,
    lastSeen: r.last_seen ?? 0,
    invocations: r.invocations,
    denials: r.denials ?? 0,
    asks: r.asks ?? 0,
    modified: r.modified ?? 0,
    failures: r.failures ?? 0,
    timeouts: r.timeouts ?? 0,
    agents: agents === null || agents === undefined ? [] : (JSON.parse(agents) as string[]).sort(),
  };
}

/** The agents of one session as a JSON array, read through the session index. */
function sessionAgents(ledger: Ledger, sessionId: string): string | null {
  return prepared<[string], string | null>(
    ledger,
    `SELECT json_group_array(DISTINCT agent) FILTER (WHERE agent IS NOT NULL) FROM invocations WHERE session_id = ?`,
  )
    .pluck()
    .get(sessionId)!;
}

/** Totals for one session, or null when the filter selects none of its invocations. */
export function sessionSummary(
  ledger: Ledger,
  sessionId: string,
  filter: InvocationFilter = {},
  memo?: Map<string, IdRange>,
): SessionSummary | null {
  const { where, params } = orderedFilterSql(ledger, { ...filter, sessionId }, [], [], memo);
  const row = prepared<unknown[], SummarySqlRow>(
    ledger,
    `SELECT min(i.started_at) AS first_seen, max(i.started_at) AS last_seen, count(*) AS invocations,
       sum(i.decision = 'deny') AS denials, sum(i.decision = 'ask') AS asks, sum(i.modified_input_json IS NOT NULL) AS modified,
       sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'failed')) AS failures,
       sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'timed_out')) AS timeouts,
       json_group_array(DISTINCT i.agent) FILTER (WHERE i.agent IS NOT NULL) AS agents
     FROM invocations i ${where}`,
  ).get(...params)!;
  return row.invocations === 0 ? null : summaryFromRow(sessionId, row);
}

/**
 * Sessions, most recently active first. The newest invocations are walked backwards until
 * `limit` distinct sessions are found, which is far cheaper than grouping the whole ledger;
 * the cursor is the id where the walk stopped (and the newest id the first page saw). A
 * session that becomes active again after its page was read moves to the top: it is not shown
 * again on later pages; one first active again after the first page was read, but not listed
 * yet, still comes on its page.
 */
export function listSessions(ledger: Ledger, filter: InvocationFilter, page: PageRequest): SessionPage {
  const { limit, offset, after } = checkPage(page, 'sessions');
  const { sessionId: _ignored, ...rest } = filter;
  // Unfiltered, the summaries the triggers keep give the totals (and the first page's order) directly.
  const stored = selectsEverything(rest) && summariesReady(ledger);
  if (stored && after === null) return firstPageFromSummaries(ledger, limit, offset);
  const memo = new Map<string, IdRange>();
  const { where, params } = orderedFilterSql(ledger, rest, ['i.session_id IS NOT NULL', 'i.id < ?'], [], memo);
  const walk = prepared<unknown[], { id: number; session_id: string }>(
    ledger,
    `SELECT i.id, i.session_id FROM invocations i ${where} ORDER BY i.id DESC LIMIT ${WALK_BATCH}`,
  );
  const wanted = offset + limit + 1;
  const found: { id: number; sessionId: string }[] = [];
  const seen = new Set<string>();
  // The newest id the first page walked from: later pages skip sessions listed before (active
  // between the cursor and `top`), but not one whose only newer activity came after `top`.
  let top = after !== null && page.cursor ? decodeCursorParts('sessions', page.cursor).top : null;
  let below = after ?? Number.MAX_SAFE_INTEGER;
  while (found.length < wanted) {
    const batch = walk.all(...params, below);
    if (top === null && after === null && batch.length > 0) top = batch[0]!.id;
    for (const row of batch) {
      if (seen.has(row.session_id)) continue;
      seen.add(row.session_id);
      if (after !== null && activeSince(ledger, rest, row.session_id, after, top, memo)) continue;
      found.push({ id: row.id, sessionId: row.session_id });
      if (found.length >= wanted) break;
    }
    if (batch.length < WALK_BATCH) break;
    below = batch[batch.length - 1]!.id;
  }
  const selected = found.slice(offset);
  const more = selected.length > limit;
  const pageRows = more ? selected.slice(0, limit) : selected;
  return {
    rows: pageRows.map((f) => {
      const row = stored ? storedSummary(ledger, f.sessionId) : undefined;
      return row ? summaryFromRow(f.sessionId, row, ledger) : sessionSummary(ledger, f.sessionId, rest, memo)!;
    }),
    nextCursor: more ? encodeCursor('sessions', pageRows[pageRows.length - 1]!.id, top ?? undefined) : null,
  };
}

/**
 * The first page, unfiltered, from the stored summaries: the same sessions in the same order as
 * the walk (newest invocation id first), and the same cursor (the page's last session's newest
 * id, and the newest id of all), so later pages walk on from it.
 */
function firstPageFromSummaries(ledger: Ledger, limit: number, offset: number): SessionPage {
  const rows: StoredSummaryRow[] = newestSummaries(ledger, offset + limit + 1);
  const top = rows[0]?.last_id;
  const selected = rows.slice(offset);
  const more = selected.length > limit;
  const pageRows = more ? selected.slice(0, limit) : selected;
  return {
    rows: pageRows.map((r) => summaryFromRow(r.session_id, r, ledger)),
    nextCursor: more ? encodeCursor('sessions', pageRows[pageRows.length - 1]!.last_id, top) : null,
  };
}

/** Invocations read per step of the sessions walk. */
export const WALK_BATCH = 2000;

/** Whether the session has a matching invocation in [id, top] (the ids earlier pages walked); no `top`: at or above id. */
function activeSince(
  ledger: Ledger,
  filter: InvocationFilter,
  sessionId: string,
  id: number,
  top: number | null,
  memo: Map<string, IdRange>,
): boolean {
  const { where, params } = orderedFilterSql(
    ledger,
    { ...filter, sessionId },
    top === null ? ['i.id >= ?'] : ['i.id >= ?', 'i.id <= ?'],
    top === null ? [id] : [id, top],
    memo,
  );
  return (
    prepared<unknown[], number>(ledger, `SELECT 1 FROM invocations i ${where} LIMIT 1`)
      .pluck()
      .get(...params) !== undefined
  );
}

/** One event of a session timeline: what the agent did, what was decided, and by whom. */
export interface TimelineEvent {
  invocationId: number;
  startedAt: number;
  point: Point;
  eventName: string | null;
  turn: number | null;
  toolName: string | null;
  toolUseId: string | null;
  status: InvocationStatus;
  decision: Decision | null;
  decisiveHookId: string | null;
  reasonCode: ReasonCode | null;
  message: string | null;
  durationUs: number | null;
  /** A hook replaced the input: `modifiedInput` is what the agent went on with. */
  modified: boolean;
  /** The guardrails whose `modify` was applied, in execution order. */
  modifiedBy: string[];
  input: unknown;
  modifiedInput: unknown;
  /** Matched hooks, and how many of them failed or timed out. */
  hooks: number;
  failures: number;
  timeouts: number;
}

export interface SessionTimeline {
  session: SessionSummary;
  /** In recorded order (ascending invocation id). */
  events: TimelineEvent[];
  /** Pass as `cursor` for the following events; null when the timeline is complete. */
  nextCursor: string | null;
}

/** A timeline row: the invocation's columns (typed by the schema) and per-invocation counts. */
export type TimelineSqlRow = Pick<
  InvocationRow,
  | 'id'
  | 'started_at'
  | 'point'
  | 'event_name'
  | 'turn'
  | 'tool_name'
  | 'tool_use_id'
  | 'status'
  | 'decision'
  | 'decisive_hook_id'
  | 'reason_code'
  | 'message'
  | 'duration_us'
  | 'input_json'
  | 'modified_input_json'
> & { hooks: number; failures: number; timeouts: number; modified_by: string | null };

/**
 * One session as a timeline, in recorded order (invocation id, which is the order the
 * ledger received the events). `filter` narrows the events (e.g. a time window).
 */
export function sessionTimeline(ledger: Ledger, sessionId: string, page: PageRequest, filter: InvocationFilter = {}): SessionTimeline {
  const { limit, offset, after } = checkPage(page, 'timeline');
  const memo = new Map<string, IdRange>();
  const session = sessionSummary(ledger, sessionId, filter, memo);
  if (!session) throw new NotFoundError(`no invocations for session "${sessionId}" in ${ledger.path}`);
  const { where, params } = orderedFilterSql(
    ledger,
    { ...filter, sessionId },
    after === null ? [] : ['i.id > ?'],
    after === null ? [] : [after],
    memo,
  );
  const rows = prepared<unknown[], TimelineSqlRow>(
    ledger,
    `SELECT i.id, i.started_at, i.point, i.event_name, i.turn, i.tool_name, i.tool_use_id, i.status, i.decision,
       i.decisive_hook_id, i.reason_code, i.message, i.duration_us, i.input_json, i.modified_input_json,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id) AS hooks,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'failed') AS failures,
       (SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'timed_out') AS timeouts,
       CASE WHEN i.modified_input_json IS NOT NULL THEN (SELECT json_group_array(hook_id) FROM (SELECT o.hook_id FROM outcomes o
         WHERE o.invocation_id = i.id AND o.modified_input_json IS NOT NULL AND o.failure_reason IS NULL ORDER BY o.execution_order)) END AS modified_by
     FROM invocations i ${where} ORDER BY i.id LIMIT ? OFFSET ?`,
  ).all(...params, limit + 1, offset);
  return timelineFrom(session, rows, limit);
}

/** The timeline page from `limit + 1` rows (either engine): the cursor is the last event's id. */
export function timelineFrom(session: SessionSummary, rows: TimelineSqlRow[], limit: number): SessionTimeline {
  const more = rows.length > limit;
  const events = (more ? rows.slice(0, limit) : rows).map((r): TimelineEvent => ({
    invocationId: r.id,
    startedAt: r.started_at,
    point: r.point,
    eventName: r.event_name,
    turn: r.turn,
    toolName: r.tool_name,
    toolUseId: r.tool_use_id,
    status: r.status,
    decision: r.decision,
    decisiveHookId: r.decisive_hook_id,
    reasonCode: r.reason_code,
    message: r.message,
    durationUs: r.duration_us,
    modified: r.modified_input_json !== null,
    modifiedBy: r.modified_by === null ? [] : (JSON.parse(r.modified_by) as string[]),
    input: fromJsonText(r.input_json),
    modifiedInput: fromJsonText(r.modified_input_json),
    hooks: r.hooks,
    failures: r.failures,
    timeouts: r.timeouts,
  }));
  return { session, events, nextCursor: more ? encodeCursor('timeline', events[events.length - 1]!.invocationId) : null };
}
