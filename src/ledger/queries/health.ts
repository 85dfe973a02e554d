import { InputError } from '../../domain/errors.js';
import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';
import {
  aggregateLive,
  bucketRange,
  bucketValue,
  hasRollups,
  LOOKBACK_MS,
  rollupTotals,
  totalsOfHours,
  type HealthTotals,
  type LiveSelection,
} from '../health-rollup.js';
import { filterConditions, SQLITE_DIALECT, type FilterDialect, type InvocationFilter } from './filters.js';

/** The window hook health covers when none is given. */
export const DEFAULT_HEALTH_WINDOW_MS = 30 * 86_400_000;

export interface HealthOptions {
  /** ms since the epoch, inclusive; default 30 days before `until`. */
  since?: number;
  /** ms since the epoch, exclusive; default now. */
  until?: number;
  /** One hook only. */
  hookId?: string;
  /** Only invocations recorded on this host (its hostname). */
  host?: string;
  /** Only invocations of this ship source (docs/ship.md; the filters' `source`). */
  source?: string;
  /** The time hours are judged closed against (rolled up only once they ended 10 minutes before it); default now. */
  now?: number;
  /**
   * Percentiles are exact when the window holds at most this many runs (default
   * `EXACT_PERCENTILE_LIMIT`), else read from the rollup histogram. 0 forces the histogram.
   */
  exactPercentileLimit?: number;
}

/** One hook's record over the window. Durations in µs. */
export interface HookHealth {
  hookId: string;
  /** Outcomes of the hook that started in the window (everything but skips). */
  runs: number;
  /** What the hook returned (observers' ignored answers are counted as violations instead). */
  allows: number;
  denials: number;
  asks: number;
  modifies: number;
  /** Times its outcome decided the invocation. */
  decisive: number;
  /** Threw, crashed, exited non-zero or returned an invalid result. */
  failures: number;
  timeouts: number;
  /** An observer returned deny, ask or modify (not obeyed). */
  observeOnlyViolations: number;
  /** Matched but not run (the pass ended, or a deny stopped background hooks), for invocations in the window. */
  skips: number;
  /** Still running, or cut off by a process that died. */
  pending: number;
  interrupted: number;
  /** Nearest-rank percentiles over the runs that have a duration; null without any. */
  p50Us: number | null;
  p95Us: number | null;
  maxUs: number | null;
  /** (failures + timeouts) / runs; 0 without runs. */
  failureRate: number;
}

export interface HealthReport {
  since: number;
  until: number;
  /** Worst first: by failure rate, then p95. */
  hooks: HookHealth[];
}

interface CountsRow {
  runs: number;
  allows: number | null;
  denials: number | null;
  asks: number | null;
  modifies: number | null;
  decisive: number | null;
  failures: number | null;
  timeouts: number | null;
  violations: number | null;
  pending: number | null;
  interrupted: number | null;
  timed: number;
  max_us: number | null;
}

/**
 * What each counter of a run counts, as an SQL condition over an outcome row: written once for
 * both engines (SQLite sums the conditions, PostgreSQL counts with FILTER) and the same rules as
 * the rollup's live aggregation (health-rollup.ts).
 */
export const HEALTH_COUNTERS = [
  ['allows', `decision = 'allow'`],
  ['denials', `decision = 'deny' AND failure_reason IS NULL`],
  ['asks', `decision = 'ask' AND failure_reason IS NULL`],
  ['modifies', `decision = 'modify' AND failure_reason IS NULL`],
  ['decisive', 'decisive'],
  ['failures', `status = 'failed'`],
  ['timeouts', `status = 'timed_out'`],
  ['violations', `failure_reason = 'observe_only_violation'`],
  ['pending', `status = 'pending'`],
  ['interrupted', `status = 'interrupted'`],
] as const satisfies readonly (readonly [keyof CountsRow, string])[];

/** Windows holding at most this many runs get exact percentiles; larger ones, the rollup histogram's. */
export const EXACT_PERCENTILE_LIMIT = 200_000;

/**
 * Per-hook runs, decisions, failures, timeouts, skips and p50/p95/max duration over a time
 * window. Closed hours come from the hourly rollup (ledger/health-rollup.ts: built on first
 * use, stored, rebuilt only when prune or a late-recorded invocation invalidates them); open
 * hours and the partial hours at the window's edges are aggregated live, then merged. Counts
 * and max are exact. Percentiles come from the merged duration histogram (buckets 2^(1/32),
 * about 2.2%, wide; the bucket's geometric middle is reported, so within about 1.1% of the
 * exact value); when the window holds at most `EXACT_PERCENTILE_LIMIT` runs they are exact: the
 * histogram names the bucket holding the rank, and `outcomes_health` is read over that bucket's
 * duration range only.
 */
export function hookHealth(ledger: Ledger, options: HealthOptions = {}): HealthReport {
  const { since, until } = healthWindow(options);
  const machines = machineSelection(options, SQLITE_DIALECT);
  if (machines) return selectedHealth(ledger, since, until, options, machines);
  if (!hasRollups(ledger)) return exactHealth(ledger, since, until, options.hookId);
  const { totals } = rollupTotals(ledger, since, until, options.hookId, options.now ?? Date.now());
  const exact = wantsExactPercentiles(totals, options);
  return healthFromTotals(totals, since, until, exact, (hookId, a, target) => {
    const [lo, hi] = bucketRange(target.bucket);
    const value = prepared<[string, number, number, number, number, number], number>(
      ledger,
      `SELECT duration_us FROM outcomes INDEXED BY outcomes_health
         WHERE hook_id = ? AND duration_us >= ? AND duration_us <= ? AND started_at >= ? AND started_at < ?
         ORDER BY duration_us LIMIT 1 OFFSET ?`,
    )
      .pluck()
      .get(hookId, lo, hi, since, until, target.rank - target.below - 1);
    // The bucket's entries differ from the histogram's only for an outcome that started long after its invocation (see health-rollup.ts): read the whole hook then.
    return value ?? exactPercentile(ledger, hookId, since, until, a.timed, target.rank);
  });
}

/**
 * The report of `totals`: p50 and p95 read from each hook's histogram, or, when `exact`, by
 * `exactValue` (the rollup path reads inside the histogram's bucket, the live path by rank).
 */
function healthFromTotals(
  totals: Map<string, HealthTotals>,
  since: number,
  until: number,
  exact: boolean,
  exactValue: (hookId: string, a: HealthTotals, target: PercentileTarget) => number | null,
): HealthReport {
  const hooks: HookHealth[] = [];
  for (const [hookId, a] of totals) {
    if (a.runs === 0 && a.skips === 0) continue;
    const percentile = (p: number): number | null => {
      const target = percentileTarget(a, p);
      if (target === null) return null;
      return exact ? exactValue(hookId, a, target) : histogramPercentile(a, target);
    };
    hooks.push(hookHealthFrom(hookId, a, percentile(0.5), percentile(0.95)));
  }
  return { since, until, hooks: sortHooks(hooks) };
}

/**
 * The invocation condition of a report on some machines' records (`host`, `source`), written by
 * the shared filter (queries/filters.ts) in an engine's dialect; undefined for the whole ledger.
 */
export function machineSelection(options: Pick<HealthOptions, 'host' | 'source'>, dialect: FilterDialect): LiveSelection | undefined {
  if (options.host === undefined && options.source === undefined) return undefined;
  const filter: InvocationFilter = {
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.source !== undefined ? { source: options.source } : {}),
  };
  const { where, params } = filterConditions(filter, {}, [], [], dialect);
  return { condition: where.slice('WHERE '.length), params };
}

/**
 * Hook health of some machines' records (hooks --host/--source). The hourly rollup counts every
 * machine together, so this is aggregated live over the window (cost grows with the window's
 * invocations, not only the selected ones'); the counters are the rollup's, from the same live
 * aggregation, and percentiles exact up to `EXACT_PERCENTILE_LIMIT` runs as the whole report's.
 */
function selectedHealth(ledger: Ledger, since: number, until: number, options: HealthOptions, only: LiveSelection): HealthReport {
  const totals = totalsOfHours(aggregateLive(ledger, since, until, only), options.hookId);
  const exact = wantsExactPercentiles(totals, options);
  const nth = (descending: boolean) =>
    prepared<(string | number)[], number>(
      ledger,
      `SELECT o.duration_us FROM invocations i INDEXED BY invocations_started_at JOIN outcomes o INDEXED BY outcomes_invocation ON o.invocation_id = i.id
       WHERE i.started_at >= ? AND i.started_at < ? AND ${only.condition}
         AND o.hook_id = ? AND o.duration_us IS NOT NULL AND o.started_at >= ? AND o.started_at < ?
       ORDER BY o.duration_us${descending ? ' DESC' : ''} LIMIT 1 OFFSET ?`,
    ).pluck();
  return healthFromTotals(totals, since, until, exact, (hookId, a, target) => {
    const fromStart = target.rank <= a.timed / 2;
    const offset = fromStart ? target.rank - 1 : a.timed - target.rank;
    return nth(!fromStart).get(since - LOOKBACK_MS, until, ...only.params, hookId, since, until, offset) ?? null;
  });
}

/** The window a report covers, [since, until): `until` defaults to now, `since` to 30 days before it. InputError when empty. */
export function healthWindow(options: Pick<HealthOptions, 'since' | 'until'>): { since: number; until: number } {
  const until = options.until ?? Date.now();
  const since = options.since ?? until - DEFAULT_HEALTH_WINDOW_MS;
  if (since >= until)
    throw new InputError(
      `since: the window is empty (since ${new Date(since).toISOString()} is not before until ${new Date(until).toISOString()})`,
    );
  return { since, until };
}

/** Whether a window's percentiles are read exactly (few runs) or from the histogram (see `EXACT_PERCENTILE_LIMIT`). */
export function wantsExactPercentiles(totals: Map<string, HealthTotals>, options: Pick<HealthOptions, 'exactPercentileLimit'>): boolean {
  let windowRuns = 0;
  for (const a of totals.values()) windowRuns += a.runs;
  return windowRuns <= (options.exactPercentileLimit ?? EXACT_PERCENTILE_LIMIT);
}

/** Where a nearest-rank percentile lies in a hook's histogram: the rank, its bucket, and the runs in lower buckets. */
export interface PercentileTarget {
  rank: number;
  bucket: number;
  below: number;
}

/** The histogram bucket holding percentile `p` of a hook's timed runs; null when none has a duration. */
export function percentileTarget(a: HealthTotals, p: number): PercentileTarget | null {
  if (a.timed === 0) return null;
  const rank = Math.max(1, Math.ceil(p * a.timed));
  const [bucket, below] = bucketAtRank(a.hist, rank);
  return { rank, bucket, below };
}

/** A percentile as the histogram gives it: the bucket's middle, never above the exact max. */
export function histogramPercentile(a: HealthTotals, target: PercentileTarget): number {
  return Math.min(bucketValue(target.bucket), a.maxUs ?? Number.MAX_SAFE_INTEGER);
}

/** One hook's line of the report from its totals over the window and its percentiles (both engines). */
export function hookHealthFrom(hookId: string, a: HealthTotals, p50Us: number | null, p95Us: number | null): HookHealth {
  return {
    hookId,
    runs: a.runs,
    allows: a.allows,
    denials: a.denials,
    asks: a.asks,
    modifies: a.modifies,
    decisive: a.decisive,
    failures: a.failures,
    timeouts: a.timeouts,
    observeOnlyViolations: a.violations,
    skips: a.skips,
    pending: a.pending,
    interrupted: a.interrupted,
    p50Us,
    p95Us,
    maxUs: a.maxUs,
    failureRate: a.runs === 0 ? 0 : (a.failures + a.timeouts) / a.runs,
  };
}

/** Worst first: by failure rate, then p95, then id (both engines). */
export function sortHooks(hooks: HookHealth[]): HookHealth[] {
  return hooks.sort((a, b) => b.failureRate - a.failureRate || (b.p95Us ?? 0) - (a.p95Us ?? 0) || a.hookId.localeCompare(b.hookId));
}

/** The bucket holding the rank-th smallest duration, and how many durations lie in lower buckets. */
export function bucketAtRank(hist: Float64Array, rank: number): [number, number] {
  let below = 0;
  for (let b = 0; b < hist.length; b++) {
    const n = hist[b]!;
    if (below + n >= rank) return [b, below];
    below += n;
  }
  // Unreachable: rank <= timed, the histogram's total.
  return [hist.length - 1, below];
}

/** Nearest-rank percentile over a hook's `outcomes_health` entries in the window, read from the nearer end. */
function exactPercentile(ledger: Ledger, hookId: string, since: number, until: number, timed: number, rank: number): number | null {
  const nthFast = prepared<[string, number, number, number], number>(
    ledger,
    `SELECT duration_us FROM outcomes INDEXED BY outcomes_health
     WHERE hook_id = ? AND duration_us IS NOT NULL AND started_at >= ? AND started_at < ?
     ORDER BY duration_us LIMIT 1 OFFSET ?`,
  ).pluck();
  const nthSlow = prepared<[string, number, number, number], number>(
    ledger,
    `SELECT duration_us FROM outcomes INDEXED BY outcomes_health
     WHERE hook_id = ? AND duration_us IS NOT NULL AND started_at >= ? AND started_at < ?
     ORDER BY duration_us DESC LIMIT 1 OFFSET ?`,
  ).pluck();
  return (rank <= timed / 2 ? nthFast.get(hookId, since, until, rank - 1) : nthSlow.get(hookId, since, until, timed - rank)) ?? null;
}

/**
 * The report without the rollup, for a ledger opened read-only before the rollup existed:
 * everything from one covering index, `outcomes_health` on (hook_id, duration_us, started_at,
 * status, decision, ...): the counters are one pass over a hook's index entries, and because
 * the entries are ordered by duration a percentile is the k-th entry that falls in the window.
 */
/** @internal The reference implementation the rollup path is tested against. */
export function exactHealth(ledger: Ledger, since: number, until: number, hookId: string | undefined): HealthReport {
  const hookIds = hookId !== undefined ? [hookId] : allHookIds(ledger);
  const counts = prepared<[string, number, number], CountsRow>(
    ledger,
    `SELECT count(*) AS runs, ${HEALTH_COUNTERS.map(([name, condition]) => `sum(${condition}) AS ${name}`).join(', ')},
       count(duration_us) AS timed, max(duration_us) AS max_us
     FROM outcomes INDEXED BY outcomes_health
     WHERE hook_id = ? AND started_at >= ? AND started_at < ?`,
  );
  const skips = skipCounts(ledger, since, until, hookId);
  const hooks: HookHealth[] = [];
  for (const id of hookIds) {
    const c = counts.get(id, since, until)!;
    const skipped = skips.get(id) ?? 0;
    if (c.runs === 0 && skipped === 0) continue;
    const percentile = (p: number): number | null =>
      c.timed === 0 ? null : exactPercentile(ledger, id, since, until, c.timed, Math.max(1, Math.ceil(p * c.timed)));
    const failures = c.failures ?? 0;
    const timeouts = c.timeouts ?? 0;
    hooks.push({
      hookId: id,
      runs: c.runs,
      allows: c.allows ?? 0,
      denials: c.denials ?? 0,
      asks: c.asks ?? 0,
      modifies: c.modifies ?? 0,
      decisive: c.decisive ?? 0,
      failures,
      timeouts,
      observeOnlyViolations: c.violations ?? 0,
      skips: skipped,
      pending: c.pending ?? 0,
      interrupted: c.interrupted ?? 0,
      p50Us: percentile(0.5),
      p95Us: percentile(0.95),
      maxUs: c.max_us,
      failureRate: c.runs === 0 ? 0 : (failures + timeouts) / c.runs,
    });
  }
  return { since, until, hooks: sortHooks(hooks) };
}

/** Distinct hook ids, by hopping through the index (a loose index scan): one seek per hook, not one step per outcome. */
function allHookIds(ledger: Ledger): string[] {
  const next = prepared<[string], string | null>(ledger, 'SELECT min(hook_id) FROM outcomes WHERE hook_id > ?').pluck();
  const ids: string[] = [];
  for (let last = next.get(''); typeof last === 'string'; last = next.get(last)) ids.push(last);
  return ids;
}

/**
 * Skipped outcomes have no start time of their own; they count in the window of their
 * invocation. The partial index `outcomes_skipped` holds only skips, so this reads a few
 * percent of the outcomes.
 */
function skipCounts(ledger: Ledger, since: number, until: number, hookId: string | undefined): Map<string, number> {
  const rows = prepared<[number, number, string | null, string | null], { hook_id: string; n: number }>(
    ledger,
    `SELECT o.hook_id, count(*) AS n FROM outcomes o INDEXED BY outcomes_skipped JOIN invocations i ON i.id = o.invocation_id
     WHERE o.status = 'skipped' AND i.started_at >= ? AND i.started_at < ? AND (? IS NULL OR o.hook_id = ?)
     GROUP BY o.hook_id`,
  ).all(since, until, hookId ?? null, hookId ?? null);
  return new Map(rows.map((r) => [r.hook_id, r.n]));
}
