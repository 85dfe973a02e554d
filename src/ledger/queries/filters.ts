import { z } from 'zod';
import { InputError } from '../../domain/errors.js';
import { pointSchema } from '../../domain/points.js';
import { DECISIONS, formatIssues, reasonCodeSchema } from '../../domain/results.js';

/**
 * The invocation selection shared by denials, sessions, export and replay (DESIGN sections 6
 * and 7). Every field narrows the selection; all are optional.
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

const RELATIVE = /^(\d+)\s*(ms|s|m|h|d|w)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * Parses a time bound: an ISO date or date-time (`2026-11-01`, `2026-11-01T12:00:00Z`), a
 * relative age (`7d`, `12h`, `30m`: that long before `now`), or ms since the epoch.
 */
export function parseTimeBound(text: string, flag: string, now = Date.now()): number {
  const trimmed = text.trim();
  const relative = RELATIVE.exec(trimmed);
  if (relative) return now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  if (/^\d{10,}$/.test(trimmed)) return Number(trimmed);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(trimmed)) {
    const ms = Date.parse(trimmed);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new InputError(`${flag}: "${text}" is not a date (use an ISO date like 2026-11-01, or a relative age like 7d, 12h, 30m)`);
}

/** A SQL condition over `invocations` aliased `i`, with its positional parameters. */
export interface SqlCondition {
  /** `WHERE ...`, or the empty string when the filter selects everything. */
  where: string;
  params: (string | number)[];
}

/** Builds the WHERE clause for a filter; every condition is on an indexed column or a small subquery. */
export function filterToSql(filter: InvocationFilter, extra: string[] = [], extraParams: (string | number)[] = []): SqlCondition {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  const add = (condition: string, ...values: (string | number)[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.sessionId !== undefined) add('i.session_id = ?', filter.sessionId);
  if (filter.toolName !== undefined) add('i.tool_name = ?', filter.toolName);
  if (filter.hookId !== undefined) add('i.decisive_hook_id = ?', filter.hookId);
  if (filter.reasonCode !== undefined) add('i.reason_code = ?', filter.reasonCode);
  if (filter.point !== undefined) add('i.point = ?', filter.point);
  if (filter.decision !== undefined) add('i.decision = ?', filter.decision);
  if (filter.since !== undefined) add('i.started_at >= ?', filter.since);
  if (filter.until !== undefined) add('i.started_at < ?', filter.until);
  if (filter.hookSet !== undefined) {
    add(
      `i.hook_set_id IN (SELECT id FROM hook_sets WHERE name = ? OR (length(?) >= 6 AND fingerprint LIKE ? || '%'))`,
      filter.hookSet,
      filter.hookSet,
      filter.hookSet.toLowerCase(),
    );
  }
  conditions.push(...extra);
  params.push(...extraParams);
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}
