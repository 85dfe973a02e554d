import { InputError } from '../../domain/errors.js';
import type { Point } from '../../domain/points.js';
import type { ReasonCode } from '../../domain/results.js';
import { fromJsonText } from '../json-text.js';
import type { Ledger } from '../open.js';
import type { InvocationRow } from '../rows.js';
import { prepared } from '../statements.js';
import { orderedFilterSql, type InvocationFilter } from './filters.js';
import { checkPage, encodeCursor, type PageRequest } from './paging.js';

/** One denied invocation: what was denied, by which hook, why, and the id to pass to `explain`. */
export interface DenialRow {
  /** The id `hookledger explain` takes. */
  invocationId: number;
  /** ms since the epoch. */
  startedAt: number;
  sessionId: string | null;
  turn: number | null;
  /** The agent that sent the event (`claude-code`, `codex`, `gemini-cli`, ...). */
  agent: string | null;
  point: Point;
  eventName: string | null;
  toolName: string | null;
  toolUseId: string | null;
  /** The hook whose deny decided (for a fail-closed failure, the hook that failed). */
  decisiveHookId: string | null;
  reasonCode: ReasonCode | null;
  message: string | null;
  hookSet: { id: number; name: string; version: string; fingerprint: string };
  /** The input as the agent sent it (tool input, or the prompt). */
  input: unknown;
}

export interface DenialPage {
  rows: DenialRow[];
  /** Pass as `cursor` for the next (older) page; null when this is the last page. */
  nextCursor: string | null;
}

/** A denial row: the invocation's columns (typed by the schema) and its hook set's. */
export type DenialSqlRow = Pick<
  InvocationRow,
  | 'id'
  | 'started_at'
  | 'session_id'
  | 'turn'
  | 'agent'
  | 'point'
  | 'event_name'
  | 'tool_name'
  | 'tool_use_id'
  | 'decisive_hook_id'
  | 'reason_code'
  | 'message'
  | 'input_json'
  | 'hook_set_id'
> & { hs_name: string; hs_version: string; hs_fingerprint: string };

/** `decision = 'deny'` is written as a literal so that the planner can use the partial indexes declared for denials. */
export const DENIED = `i.decision = 'deny'`;

/** The filter without its decision (denials are `deny`); InputError when it asks for another decision. */
export function denialSelection(filter: InvocationFilter): Omit<InvocationFilter, 'decision'> {
  if (filter.decision !== undefined && filter.decision !== 'deny') {
    throw new InputError(`decision: denials are invocations decided "deny"; the filter asks for "${filter.decision}"`);
  }
  const { decision: _decision, ...rest } = filter;
  return rest;
}

function denialFilter(ledger: Ledger, filter: InvocationFilter, extra: string[] = [], extraParams: (string | number)[] = []) {
  return orderedFilterSql(ledger, denialSelection(filter), [DENIED, ...extra], extraParams, undefined, { deniedOnly: true });
}

/** The conditions a denials page adds to its filter: below the cursor's id. */
export function denialPageConditions(after: number | null): { extra: string[]; extraParams: number[] } {
  return after === null ? { extra: [], extraParams: [] } : { extra: ['i.id < ?'], extraParams: [after] };
}

/** A denials page's query (`?` placeholders: the filter's, then limit + 1 and offset), on either engine. */
export function denialsPageSql(where: string): string {
  return `SELECT i.id, i.started_at, i.session_id, i.turn, i.agent, i.point, i.event_name, i.tool_name, i.tool_use_id, i.decisive_hook_id,
       i.reason_code, i.message, i.input_json, i.hook_set_id, h.name AS hs_name, h.version AS hs_version, h.fingerprint AS hs_fingerprint
     FROM invocations i JOIN hook_sets h ON h.id = i.hook_set_id
     ${where} ORDER BY i.id DESC LIMIT ? OFFSET ?`;
}

/** The page from `limit + 1` rows of `denialsPageSql`: the cursor is the last row's id. */
export function denialPageFrom(rows: DenialSqlRow[], limit: number): DenialPage {
  const more = rows.length > limit;
  const pageRows = (more ? rows.slice(0, limit) : rows).map(denialFromRow);
  return { rows: pageRows, nextCursor: more ? encodeCursor('denials', pageRows[pageRows.length - 1]!.invocationId) : null };
}

/**
 * Denied invocations, newest first (by id). Paging is keyset-based: the cursor holds the last
 * id returned, and the next page starts strictly below it, so invocations recorded between
 * pages never shift a row onto the next page or off it. `offset` exists for tools that need
 * it, but it is not stable while the ledger is being written.
 */
export function listDenials(ledger: Ledger, filter: InvocationFilter, page: PageRequest): DenialPage {
  const { limit, offset, after } = checkPage(page, 'denials');
  const { extra, extraParams } = denialPageConditions(after);
  const { where, params } = denialFilter(ledger, filter, extra, extraParams);
  return denialPageFrom(prepared<unknown[], DenialSqlRow>(ledger, denialsPageSql(where)).all(...params, limit + 1, offset), limit);
}

export function denialFromRow(r: DenialSqlRow): DenialRow {
  return {
    invocationId: r.id,
    startedAt: r.started_at,
    sessionId: r.session_id,
    turn: r.turn,
    agent: r.agent,
    point: r.point,
    eventName: r.event_name,
    toolName: r.tool_name,
    toolUseId: r.tool_use_id,
    decisiveHookId: r.decisive_hook_id,
    reasonCode: r.reason_code,
    message: r.message,
    hookSet: { id: r.hook_set_id, name: r.hs_name, version: r.hs_version, fingerprint: r.hs_fingerprint },
    input: fromJsonText(r.input_json),
  };
}

export const DENIAL_GROUPS = ['hook', 'tool', 'reason', 'session', 'agent', 'day'] as const;
export type DenialGroupBy = (typeof DENIAL_GROUPS)[number];

/** The SQL key of each grouping. Days are UTC calendar days. */
const GROUP_KEYS: Record<DenialGroupBy, string> = {
  hook: 'i.decisive_hook_id',
  tool: 'i.tool_name',
  reason: 'i.reason_code',
  session: 'i.session_id',
  agent: 'i.agent',
  day: `strftime('%Y-%m-%d', i.started_at / 1000, 'unixepoch')`,
};

export interface DenialGroup {
  /** The hook id, tool name, reason code, session id, agent or UTC day (`2026-11-01`); null when the invocation has none (e.g. no tool). */
  key: string | null;
  count: number;
  firstAt: number;
  lastAt: number;
}

export interface DenialGroups {
  groupBy: DenialGroupBy;
  /** Denials matching the filter, over all groups. */
  total: number;
  /** Groups in all; `groups` holds at most `limit` of them. */
  totalGroups: number;
  /** Largest first; days in calendar order (the most recent `limit` days). */
  groups: DenialGroup[];
}

/** InputError unless `groupBy` is one of DENIAL_GROUPS. */
export function checkGroupBy(groupBy: DenialGroupBy): void {
  if (!(DENIAL_GROUPS as readonly string[]).includes(groupBy)) {
    throw new InputError(`group-by: "${groupBy}" is not a grouping (expected one of ${DENIAL_GROUPS.join(', ')})`);
  }
}

/** A row of the grouping query, as each engine's query returns it. */
export type DenialGroupSqlRow = DenialGroup & { total: number; total_groups: number };

/** The result from the grouping query's rows (days are read newest first, shown in calendar order). */
export function denialGroupsFrom(groupBy: DenialGroupBy, rows: DenialGroupSqlRow[]): DenialGroups {
  return {
    groupBy,
    total: rows[0]?.total ?? 0,
    totalGroups: rows[0]?.total_groups ?? 0,
    groups: (groupBy === 'day' ? rows.reverse() : rows).map((r) => ({ key: r.key, count: r.count, firstAt: r.firstAt, lastAt: r.lastAt })),
  };
}

/** Counts denials per hook, tool, reason code, session or day. */
export function groupDenials(
  ledger: Ledger,
  filter: InvocationFilter,
  groupBy: DenialGroupBy,
  options: { limit?: number } = {},
): DenialGroups {
  checkGroupBy(groupBy);
  const limit = options.limit ?? 10_000;
  const { where, params } = denialFilter(ledger, filter);
  // Days: the most recent `limit` days, shown in calendar order.
  const order = groupBy === 'day' ? 'key DESC' : 'count DESC, key';
  const rows = prepared<unknown[], DenialGroupSqlRow>(
    ledger,
    `SELECT ${GROUP_KEYS[groupBy]} AS key, count(*) AS count, min(i.started_at) AS firstAt, max(i.started_at) AS lastAt,
       sum(count(*)) OVER () AS total, count(*) OVER () AS total_groups
     FROM invocations i ${where} GROUP BY key ORDER BY ${order} LIMIT ?`,
  ).all(...params, limit);
  return denialGroupsFrom(groupBy, rows);
}
