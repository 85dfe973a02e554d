import { InputError } from '../../domain/errors.js';
import { bucketValue, floorHour, HOUR_MS, rollupBuckets, type HealthTotals } from '../health-rollup.js';
import type { Ledger } from '../open.js';
import { bucketAtRank } from './health.js';

/** What `hookHealthSeries` is asked: a window cut into buckets of whole hours. */
export interface HealthSeriesOptions {
  /** ms since the epoch; the first bucket starts at the UTC hour this falls in. */
  since: number;
  /** ms since the epoch, exclusive. */
  until: number;
  /** Bucket width, a whole number of hours (so that closed hours are read from the hourly rollup). */
  stepMs: number;
  /** One hook only. */
  hookId?: string;
  /** The time hours are judged closed against; default now. */
  now?: number;
  /**
   * Only these hooks get p50/p95 (the others' are null): reading duration histograms is most of
   * the cost, and a chart draws the latency of a few hooks. Default: every hook.
   */
  percentilesOf?: readonly string[];
}

/** One hook in one bucket: what the over-time charts draw. Durations in µs. */
export interface HealthPoint {
  hookId: string;
  runs: number;
  denials: number;
  failures: number;
  timeouts: number;
  p50Us: number | null;
  p95Us: number | null;
}

/** One bucket [start, end) and the hooks that ran in it (none: an empty bucket). */
export interface HealthBucket {
  start: number;
  end: number;
  hooks: HealthPoint[];
}

/** Every bucket of the window, oldest first, empty ones included. */
export interface HealthSeries {
  since: number;
  until: number;
  stepMs: number;
  buckets: HealthBucket[];
}

/** A bucket width of whole hours that cuts [since, until) into at most `points` buckets. */
export function seriesStep(since: number, until: number, points: number): number {
  return Math.max(1, Math.ceil((until - since) / points / HOUR_MS)) * HOUR_MS;
}

/**
 * The buckets' starts: from the hour `since` falls in, every `stepMs`, while before `until`.
 * Both engines cut a window the same way. InputError for an empty window or a step that is not whole hours.
 */
export function seriesStarts(options: HealthSeriesOptions): number[] {
  const { since, until, stepMs } = options;
  if (since >= until)
    throw new InputError(
      `since: the window is empty (since ${new Date(since).toISOString()} is not before until ${new Date(until).toISOString()})`,
    );
  if (!Number.isInteger(stepMs / HOUR_MS) || stepMs <= 0) throw new InputError(`step: ${stepMs} ms is not a whole number of hours`);
  const starts: number[] = [];
  for (let t = floorHour(since); t < until; t += stepMs) starts.push(t);
  return starts;
}

/** Buckets of the window with their hooks, from per-bucket points keyed by bucket start. */
export function seriesFrom(options: HealthSeriesOptions, points: Map<number, HealthPoint[]>): HealthSeries {
  const buckets = seriesStarts(options).map((start) => ({
    start,
    end: Math.min(options.until, start + options.stepMs),
    hooks: (points.get(start) ?? []).sort((a, b) => a.hookId.localeCompare(b.hookId)),
  }));
  return { since: options.since, until: options.until, stepMs: options.stepMs, buckets };
}

/**
 * Hook health over time on SQLite, for the console's charts: one read of the hourly rollup for
 * the whole window (closed hours from `health_rollups`, the rest aggregated live, as
 * `hookHealth` does), kept apart per bucket. Counts are exact; percentiles come from each
 * bucket's merged duration histogram (within about 1.1% of the exact value, see health.ts).
 */
export function hookHealthSeries(ledger: Ledger, options: HealthSeriesOptions): HealthSeries {
  const origin = floorHour(options.since);
  seriesStarts(options);
  const { buckets } = rollupBuckets(ledger, origin, options.until, options.hookId, options.now ?? Date.now(), {
    origin,
    stepMs: options.stepMs,
    ...(options.percentilesOf ? { histogramsOf: options.percentilesOf } : {}),
  });
  const wanted = options.percentilesOf ? new Set(options.percentilesOf) : null;
  const points = new Map<number, HealthPoint[]>();
  for (const [start, hooks] of buckets) {
    const list: HealthPoint[] = [];
    for (const [hookId, t] of hooks) {
      if (t.runs === 0) continue;
      const timed = wanted === null || wanted.has(hookId);
      list.push({
        hookId,
        runs: t.runs,
        denials: t.denials,
        failures: t.failures,
        timeouts: t.timeouts,
        p50Us: timed ? histogramPercentile(t, 0.5) : null,
        p95Us: timed ? histogramPercentile(t, 0.95) : null,
      });
    }
    points.set(start, list);
  }
  return seriesFrom(options, points);
}

/** Nearest-rank percentile from a histogram: the bucket's middle, never above the exact maximum. */
function histogramPercentile(t: HealthTotals, p: number): number | null {
  if (t.timed === 0) return null;
  const [bucket] = bucketAtRank(t.hist, Math.max(1, Math.ceil(p * t.timed)));
  return Math.min(bucketValue(bucket), t.maxUs ?? Number.MAX_SAFE_INTEGER);
}
