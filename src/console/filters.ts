import { InputError } from '../domain/errors.js';
import { POINTS, resolvePoint } from '../domain/points.js';
import { DECISIONS, REASON_CODES } from '../domain/results.js';
import { parseNamedTimeBound } from '../domain/time.js';
import { parseInvocationFilter, type InvocationFilter } from '../ledger/queries/filters.js';

/**
 * The invocation filter as URL query parameters, named like the CLI flags (`session`, `tool`,
 * `hook`, `reason-code`, `point`, `hook-set`, `decision`, `agent`, `host`, `source`, `since`, `until`), so that a console
 * URL and a command line say the same thing. Times take the CLI's forms (ISO or `7d`).
 */
export const FILTER_PARAMS = [
  'session',
  'tool',
  'hook',
  'reason-code',
  'point',
  'hook-set',
  'decision',
  'agent',
  'host',
  'source',
  'since',
  'until',
] as const;
export type FilterParam = (typeof FILTER_PARAMS)[number];

/** The filter a query string asks for; a bad value is an InputError naming the parameter. */
export function filterFromQuery(query: URLSearchParams, allow: readonly FilterParam[] = FILTER_PARAMS, now = Date.now()): InvocationFilter {
  const value = (name: FilterParam): string | undefined => {
    const v = query.get(name);
    if (v === null || v.trim() === '' || !allow.includes(name)) return undefined;
    return v.trim();
  };
  const filter: Record<string, unknown> = {};
  const set = (name: FilterParam, field: string) => {
    const v = value(name);
    if (v !== undefined) filter[field] = v;
  };
  set('session', 'sessionId');
  set('tool', 'toolName');
  set('hook', 'hookId');
  set('hook-set', 'hookSet');
  set('agent', 'agent');
  set('host', 'host');
  set('source', 'source');
  const reason = value('reason-code');
  if (reason !== undefined) {
    if (!(REASON_CODES as readonly string[]).includes(reason)) throw new InputError(`reason-code: unknown reason code "${reason}"`);
    filter.reasonCode = reason;
  }
  const point = value('point');
  if (point !== undefined) {
    const resolved = resolvePoint(point);
    if (resolved === undefined) throw new InputError(`point: unknown point "${point}" (expected one of ${POINTS.join(', ')})`);
    filter.point = resolved;
  }
  const decision = value('decision');
  if (decision !== undefined) {
    if (!(DECISIONS as readonly string[]).includes(decision)) throw new InputError(`decision: unknown decision "${decision}"`);
    filter.decision = decision;
  }
  const since = value('since');
  if (since !== undefined) filter.since = parseNamedTimeBound('since', since, now);
  const until = value('until');
  if (until !== undefined) filter.until = parseNamedTimeBound('until', until, now);
  if (typeof filter.since === 'number' && typeof filter.until === 'number' && filter.since >= filter.until) {
    throw new InputError(`since: ${since} is not before until ${until}: the range is empty`);
  }
  return parseInvocationFilter(filter, 'filter');
}

/** The filter parameters of a query string, to carry into links (paging, downloads). */
export function filterParams(query: URLSearchParams, allow: readonly FilterParam[] = FILTER_PARAMS): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of allow) {
    const v = query.get(name);
    if (v !== null && v.trim() !== '') out[name] = v;
  }
  return out;
}
