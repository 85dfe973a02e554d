import * as z from 'zod';
import { InputError } from '../../domain/errors.js';
import { parseNamedTimeBound } from '../../domain/time.js';
import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';
import { pointSchema } from '../../domain/points.js';
import { DECISIONS, formatIssues, reasonCodeSchema } from '../../domain/results.js';

/**
 * The invocation selection shared by denials, sessions, export and replay (docs/design.md §6
 * and §7). Every field narrows the selection; all are optional.
 */
export const invocationFilterSchema = z.strictObject({
  sessionId: z.string().min(1).optional(),
  toolName: z.string().min(1).optional(),
  /** The decisive hook. */
  hookId: z.string().min(1).optional(),
  reasonCode: reasonCodeSchema.optional(),
  point: pointSchema.optional(),
  /** A hook set name, or a fingerprint (or a prefix of at least 6 hex characters). */
  hookSet: z.string().min(1).optional(),
  decision: z.enum(DECISIONS).optional(),
  /**
   * The agent that sent the event (`claude-code`, `codex`, `gemini-cli`, `meerkat`, ...). It also
   * selects that agent's subagents, which are recorded as `agent/subagent-type`.
   */
  agent: z.string().min(1).optional(),
  /** The host that recorded the invocation (its hostname). */
  host: z.string().min(1).optional(),
  /**
   * The ship source the invocation came from (docs/ship.md): on a central ledger, the machine's
   * source id; on a SQLite ledger, its own source id selects everything and any other nothing.
   */
  source: z.string().min(1).optional(),
  /** ms since the epoch, inclusive. */
  since: z.number().int().optional(),
  /** ms since the epoch, exclusive. */
  until: z.number().int().optional(),
});

export type InvocationFilter = z.output<typeof invocationFilterSchema>;

/** Validates a filter from any source, with a one-line error naming the field. */
export function parseInvocationFilter(input: unknown, where = 'filter'): InvocationFilter {
  const parsed = invocationFilterSchema.safeParse(input);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * @deprecated The one time parser is `parseTimeBound` / `parseNamedTimeBound` in domain/time.ts;
 * this forwards to it so that code written against the old location still builds.
 */
export function parseTimeBound(text: string, name: string, now: number = Date.now()): number {
  return parseNamedTimeBound(name, text, now);
}

/** A SQL condition over `invocations` aliased `i`, with its positional parameters. */
export interface SqlCondition {
  /** `WHERE ...`, or the empty string when the filter selects everything. */
  where: string;
  params: (string | number)[];
}

/**
 * The WHERE clause for a filter, for queries that walk invocations in id order (paging newest first,
 * timelines, export, replay): the same rows, written so that SQLite reads them through an
 * index ending in id instead of sorting. Three rewrites, each measured on a 1M ledger:
 * - a time bound alone would let SQLite pick the `started_at` index and then sort the whole
 *   range by id; instead the bounds become the exact id range holding the matching rows
 *   (min and max id over the `started_at` index range, a covering read), and the time
 *   condition stays, with `+` so that it filters without choosing an index;
 * - a session is the narrowest selection there is (hundreds of rows), so with a session the
 *   other columns filter with `+` and cannot pull the plan onto a million-row index;
 * - a hook-set name or fingerprint is resolved to ids first; one id is an indexed equality,
 *   several (versions of one name) filter rows read in id order, never `IN (...)` + sort.
 */
export function orderedFilterSql(
  ledger: Ledger,
  filter: InvocationFilter,
  extra: string[] = [],
  extraParams: (string | number)[] = [],
  /** Reuse the id range of a time window across the queries of one report (e.g. 50 session summaries). */
  memo?: Map<string, IdRange>,
  /**
   * The caller selects denials only (`extra` holds `i.decision = 'deny'`): the id range of a
   * time window is then read from the denials' own `started_at` index, a few percent of the
   * window's entries, instead of every invocation in it.
   */
  options: { deniedOnly?: boolean } = {},
): SqlCondition {
  const lookups: FilterLookups = {};
  if (filter.hookSet !== undefined) lookups.hookSetIds = hookSetIds(ledger, filter.hookSet);
  if (lookups.hookSetIds?.length !== 0 && (filter.since !== undefined || filter.until !== undefined)) {
    const key = idRangeKey(filter, options);
    let bounds = memo?.get(key);
    if (!bounds) {
      bounds = prepared<[number, number], IdRange>(ledger, idRangeSql(options, 'INDEXED BY invocations_deny_started_at')).get(
        ...idRangeParams(filter),
      )!;
      memo?.set(key, bounds);
    }
    lookups.idRange = bounds;
  }
  return filterConditions(filter, lookups, extra, extraParams, SQLITE_DIALECT);
}

/** How filter SQL is spelt on one engine (the rest is the same SQL). */
export interface FilterDialect {
  /**
   * A column the condition filters on without choosing an index for it: SQLite's unary `+`
   * keeps its planner on the index the query walks. PostgreSQL has no such hint (and no unary
   * `+` on text); its planner weighs the conditions itself.
   */
  unindexed(column: string): string;
  /** The condition (one `?`: the source id) selecting a ship source's invocations (docs/ship.md). */
  source: string;
}

export const SQLITE_DIALECT: FilterDialect = {
  unindexed: (column) => `+${column}`,
  // A SQLite ledger is one source: its own id (created by its first ship) selects it whole, any other nothing.
  source: '? = (SELECT source_id FROM ship_source WHERE id = 1)',
};

/** What a filter needs read from the ledger before its SQL can be written (see orderedFilterSql). */
export interface FilterLookups {
  /** The hook sets a `hookSet` filter names (empty: none, so nothing matches). */
  hookSetIds?: number[];
  /** The id range of the invocations in the filter's time window. */
  idRange?: IdRange;
}

/** The memo key of a time window's id range. */
export function idRangeKey(filter: InvocationFilter, options: { deniedOnly?: boolean } = {}): string {
  return `${options.deniedOnly ? 'deny:' : ''}${filter.since}:${filter.until}`;
}

/**
 * The min and max id of the invocations in a time window (`?` placeholders: since, until; see
 * `idRangeParams`): min/max over the whole range, not the first and last entry, since ids need
 * not follow start times. `indexHint` names the denials' own index where the engine takes one.
 */
export function idRangeSql(options: { deniedOnly?: boolean }, indexHint = ''): string {
  return options.deniedOnly
    ? `SELECT min(id) AS lo, max(id) AS hi FROM invocations ${indexHint} WHERE decision = 'deny' AND started_at >= ? AND started_at < ?`
    : 'SELECT min(id) AS lo, max(id) AS hi FROM invocations WHERE started_at >= ? AND started_at < ?';
}

/** The parameters of `idRangeSql`: an open bound is the widest there is. */
export function idRangeParams(filter: InvocationFilter): [number, number] {
  return [filter.since ?? Number.MIN_SAFE_INTEGER, filter.until ?? Number.MAX_SAFE_INTEGER];
}

/**
 * The WHERE clause of `orderedFilterSql` once its lookups are done, with `?` placeholders: the
 * same conditions on every engine, spelt by `dialect`.
 */
export function filterConditions(
  filter: InvocationFilter,
  lookups: FilterLookups,
  extra: string[],
  extraParams: (string | number)[],
  dialect: FilterDialect,
): SqlCondition {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  const add = (condition: string, ...values: (string | number)[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  // Matches nothing, as a primary-key range (reads nothing, and a plan check sees no scan).
  // The caller's own conditions stay: their parameters are bound whatever the filter selects.
  const empty = { where: `WHERE ${['i.id < 0', ...extra].join(' AND ')}`, params: [...extraParams] };
  const bySession = filter.sessionId !== undefined;
  const { unindexed } = dialect;
  const other = (column: string) => (bySession ? unindexed(column) : column);
  if (filter.sessionId !== undefined) add('i.session_id = ?', filter.sessionId);
  if (filter.toolName !== undefined) add(`${other('i.tool_name')} = ?`, filter.toolName);
  if (filter.hookId !== undefined) add(`${other('i.decisive_hook_id')} = ?`, filter.hookId);
  if (filter.reasonCode !== undefined) add(`${other('i.reason_code')} = ?`, filter.reasonCode);
  if (filter.point !== undefined) add(`${other('i.point')} = ?`, filter.point);
  if (filter.decision !== undefined) add(`${other('i.decision')} = ?`, filter.decision);
  // No index on agent or host: both filter rows read in id order through another index or the primary key.
  if (filter.agent !== undefined) {
    // `name/` up to (excluding) `name0` ('0' follows '/') holds exactly the subagents `name/...`.
    const agent = unindexed('i.agent');
    add(`(${agent} = ? OR (${agent} >= ? AND ${agent} < ?))`, filter.agent, `${filter.agent}/`, `${filter.agent}0`);
  }
  if (filter.host !== undefined) add(`${unindexed('i.host')} = ?`, filter.host);
  if (filter.source !== undefined) add(dialect.source, filter.source);
  if (filter.hookSet !== undefined) {
    const ids = lookups.hookSetIds ?? [];
    if (ids.length === 0) return empty;
    if (ids.length === 1) add(`${other('i.hook_set_id')} = ?`, ids[0]!);
    else add(`${unindexed('i.hook_set_id')} IN (${ids.map(() => '?').join(', ')})`, ...ids);
  }
  if (filter.since !== undefined || filter.until !== undefined) {
    const bounds = lookups.idRange;
    if (!bounds || bounds.lo === null || bounds.hi === null) return empty;
    add('i.id >= ? AND i.id <= ?', bounds.lo, bounds.hi);
    if (filter.since !== undefined) add(`${unindexed('i.started_at')} >= ?`, filter.since);
    if (filter.until !== undefined) add(`${unindexed('i.started_at')} < ?`, filter.until);
  }
  conditions.push(...extra);
  params.push(...extraParams);
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** The ids of the invocations that started in a time window (null when none did). */
export interface IdRange {
  lo: number | null;
  hi: number | null;
}

/** The ids of the hook sets a `hookSet` filter names: by name, or by fingerprint (prefix of 6+ hex characters). */
export function hookSetIds(ledger: Ledger, nameOrFingerprint: string): number[] {
  const prefix = nameOrFingerprint.toLowerCase();
  const byFingerprint = /^[0-9a-f]{6,64}$/.test(prefix);
  return prepared<[string, number, string, string], number>(
    ledger,
    `SELECT id FROM hook_sets WHERE name = ? OR (? AND fingerprint >= ? AND fingerprint < ? || 'g') ORDER BY id`,
  )
    .pluck()
    .all(nameOrFingerprint, byFingerprint ? 1 : 0, prefix, prefix);
}
