import { InputError } from '../../domain/errors.js';
import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';

/** The window hook health covers when none is given. */
export const DEFAULT_HEALTH_WINDOW_MS = 30 * 86_400_000;

export interface HealthOptions {
  /** ms since the epoch, inclusive; default 30 days before `until`. */
  since?: number;
  /** ms since the epoch, exclusive; default now. */
  until?: number;
  /** One hook only. */
  hookId?: string;
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
 * Per-hook runs, decisions, failures, timeouts, skips and p50/p95/max duration over a time
 * window. Everything is read from one covering index, `outcomes_health` on (hook_id,
 * duration_us, started_at, status, decision, ...): the counters are one pass over a hook's
 * index entries, and because the entries are ordered by duration a percentile is the k-th
 * entry that falls in the window (`ORDER BY duration_us LIMIT 1 OFFSET k-1`) with no sort;
 * p95 is read from the slow end, so it visits only the top 5%.
 */
export function hookHealth(ledger: Ledger, options: HealthOptions = {}): HealthReport {
  const until = options.until ?? Date.now();
  const since = options.since ?? until - DEFAULT_HEALTH_WINDOW_MS;
  if (since >= until) throw new InputError(`since: the window is empty (since ${new Date(since).toISOString()} is not before until ${new Date(until).toISOString()})`);
  const hookIds = options.hookId !== undefined ? [options.hookId] : allHookIds(ledger);
  const counts = prepared<[string, number, number], CountsRow>(
    ledger,
    `SELECT count(*) AS runs,
       sum(decision = 'allow') AS allows,
       sum(decision = 'deny' AND failure_reason IS NULL) AS denials,
       sum(decision = 'ask' AND failure_reason IS NULL) AS asks,
       sum(decision = 'modify' AND failure_reason IS NULL) AS modifies,
       sum(decisive) AS decisive,
       sum(status = 'failed') AS failures,
       sum(status = 'timed_out') AS timeouts,
       sum(failure_reason = 'observe_only_violation') AS violations,
       sum(status = 'pending') AS pending,
       sum(status = 'interrupted') AS interrupted,
       count(duration_us) AS timed,
       max(duration_us) AS max_us
     FROM outcomes INDEXED BY outcomes_health
     WHERE hook_id = ? AND started_at >= ? AND started_at < ?`,
  );
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
  const skips = skipCounts(ledger, since, until, options.hookId);
  const hooks: HookHealth[] = [];
  for (const hookId of hookIds) {
    const c = counts.get(hookId, since, until)!;
    const skipped = skips.get(hookId) ?? 0;
    if (c.runs === 0 && skipped === 0) continue;
    const percentile = (p: number): number | null => {
      if (c.timed === 0) return null;
      const rank = Math.max(1, Math.ceil(p * c.timed));
      // Read from whichever end is nearer to the rank.
      return rank <= c.timed / 2 ? nthFast.get(hookId, since, until, rank - 1)! : nthSlow.get(hookId, since, until, c.timed - rank)!;
    };
    const failures = c.failures ?? 0;
    const timeouts = c.timeouts ?? 0;
    hooks.push({
      hookId,
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
  hooks.sort((a, b) => b.failureRate - a.failureRate || (b.p95Us ?? 0) - (a.p95Us ?? 0) || a.hookId.localeCompare(b.hookId));
  return { since, until, hooks };
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
