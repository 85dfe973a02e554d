import { InputError, UsageError } from '../domain/errors.js';
import { resolvePoint, POINTS } from '../domain/points.js';
import { DECISIONS, REASON_CODES } from '../domain/results.js';
import { parseInvocationFilter, type InvocationFilter } from '../ledger/queries/filters.js';
import { parseNamedTimeBound } from '../domain/time.js';
import { stringFlag, type CommandArgs } from './command.js';

/**
 * The invocation filter as command-line flags, shared by denials, sessions, export and
 * replay: `--session --tool --hook --reason-code --point --hook-set --agent --host --since --until --decision`.
 */
export const filterOptions = {
  session: { type: 'string' },
  tool: { type: 'string' },
  hook: { type: 'string' },
  'reason-code': { type: 'string' },
  point: { type: 'string' },
  'hook-set': { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  decision: { type: 'string' },
  agent: { type: 'string' },
  host: { type: 'string' },
  source: { type: 'string' },
} as const;

export type FilterFlag = keyof typeof filterOptions;

/** Help text for the filter flags, for a command's usage. */
export const FILTER_USAGE = `  --session ID         one session
  --tool NAME          one tool (Bash, Read, ...)
  --hook ID            the decisive hook
  --reason-code CODE   ${REASON_CODES.join(', ')}
  --point POINT        a point (pre_tool_use, user_prompt_submit, ...)
  --hook-set NAME|FP   a hook set name, or a fingerprint (6+ hex characters)
  --agent NAME         one agent (claude-code, codex, gemini-cli, meerkat, ...)
  --host NAME          the host that recorded it
  --source ID          the ship source it came from (a central ledger; docs/ship.md)
  --since WHEN         from (inclusive): an ISO date/time (UTC unless it names a zone),
                       or an age like 7d, 12h, 30m
  --until WHEN         before (exclusive): same forms`;

export const DECISION_USAGE = `  --decision D         ${DECISIONS.join(', ')}`;

/**
 * Builds the filter from the flags. Every flag is checked on its own so that a mistake is
 * one line naming the flag: `--reason-code: unknown reason code "polcy" (expected ...)`.
 */
export function filterFromFlags(args: CommandArgs, options: { now?: number; allow?: readonly FilterFlag[] } = {}): InvocationFilter {
  const now = options.now ?? Date.now();
  const allowed = new Set<FilterFlag>(options.allow ?? (Object.keys(filterOptions) as FilterFlag[]));
  const value = (flag: FilterFlag): string | undefined => {
    const v = stringFlag(args, flag);
    if (v === undefined) return undefined;
    if (!allowed.has(flag)) throw new UsageError(`--${flag} does not apply here`);
    if (v.trim() === '') throw new InputError(`--${flag}: must not be empty`);
    return v;
  };
  const filter: Record<string, unknown> = {};
  const session = value('session');
  if (session !== undefined) filter.sessionId = session;
  const tool = value('tool');
  if (tool !== undefined) filter.toolName = tool;
  const hook = value('hook');
  if (hook !== undefined) filter.hookId = hook;
  const reason = value('reason-code');
  if (reason !== undefined) {
    if (!(REASON_CODES as readonly string[]).includes(reason)) {
      throw new InputError(`--reason-code: unknown reason code "${reason}" (expected one of ${REASON_CODES.join(', ')})`);
    }
    filter.reasonCode = reason;
  }
  const point = value('point');
  if (point !== undefined) {
    const resolved = resolvePoint(point);
    if (resolved === undefined) throw new InputError(`--point: unknown point "${point}" (expected one of ${POINTS.join(', ')})`);
    filter.point = resolved;
  }
  const hookSet = value('hook-set');
  if (hookSet !== undefined) filter.hookSet = hookSet;
  const agent = value('agent');
  if (agent !== undefined) filter.agent = agent.trim();
  const host = value('host');
  if (host !== undefined) filter.host = host.trim();
  const source = value('source');
  if (source !== undefined) filter.source = source.trim();
  const decision = value('decision');
  if (decision !== undefined) {
    if (!(DECISIONS as readonly string[]).includes(decision)) {
      throw new InputError(`--decision: unknown decision "${decision}" (expected one of ${DECISIONS.join(', ')})`);
    }
    filter.decision = decision;
  }
  const since = value('since');
  if (since !== undefined) filter.since = parseNamedTimeBound('--since', since, now);
  const until = value('until');
  if (until !== undefined) filter.until = parseNamedTimeBound('--until', until, now);
  if (typeof filter.since === 'number' && typeof filter.until === 'number' && filter.since >= filter.until) {
    throw new InputError(`--since: ${since} is not before --until ${until}: the range is empty`);
  }
  return parseInvocationFilter(filter, 'filter');
}

/** Paging flags: `--limit N`, `--cursor C`, `--offset N`. */
export const pageOptions = {
  limit: { type: 'string' },
  cursor: { type: 'string' },
  offset: { type: 'string' },
} as const;

/** Reads `--limit` (default `fallback`), `--cursor` and `--offset`. */
export function pageFromFlags(args: CommandArgs, fallback: number): { limit: number; cursor: string | null; offset: number } {
  const limit = wholeNumber(args, 'limit', fallback, 1);
  const offset = wholeNumber(args, 'offset', 0, 0);
  const cursor = stringFlag(args, 'cursor') ?? null;
  if (cursor !== null && offset > 0) throw new UsageError('--cursor and --offset cannot be combined');
  return { limit, cursor, offset };
}

export function wholeNumber(args: CommandArgs, flag: string, fallback: number, min: number): number {
  const raw = stringFlag(args, flag);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > 10_000_000) {
    throw new InputError(`--${flag}: expected a whole number${min > 0 ? ` >= ${min}` : ''}, got "${raw}"`);
  }
  return Number(raw);
}
