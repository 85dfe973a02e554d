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
  seriesStarts(options);
  const { buckets } = rollupBuckets(
    ledger,
    floorHour(options.since),
    options.until,
    options.hookId,
    options.now ?? Date.now(),
    seriesBucketOfHour(options),
  );
  return seriesFromBuckets(options, buckets);
}

/** The key of the bucket an hour falls in: its bucket's start (both engines' rollup reads take it). */
export function seriesBucketOfHour(options: HealthSeriesOptions): (hour: number) => number {
  const origin = floorHour(options.since);
  return (hour) => origin + Math.floor((hour - origin) / options.stepMs) * options.stepMs;
}

/** The series from the rollup's per-bucket totals (both engines). */
export function seriesFromBuckets(options: HealthSeriesOptions, buckets: Map<number, Map<string, HealthTotals>>): HealthSeries {
  const points = new Map<number, HealthPoint[]>();
  for (const [start, hooks] of buckets) {
    const list: HealthPoint[] = [];
    for (const [hookId, t] of hooks) {
      if (t.runs === 0) continue;
      list.push({
        hookId,
        runs: t.runs,
        denials: t.denials,
        failures: t.failures,
        timeouts: t.timeouts,
        p50Us: histogramPercentile(t, 0.5),
        p95Us: histogramPercentile(t, 0.95),
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
