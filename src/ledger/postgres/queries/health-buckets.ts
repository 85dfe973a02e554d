import type pg from 'pg';
import { floorHour } from '../../health-rollup.js';
import { seriesFrom, seriesStarts, type HealthPoint, type HealthSeries, type HealthSeriesOptions } from '../../queries/health-series.js';

/**
 * Hook health over time on PostgreSQL: every bucket and hook from one GROUP BY over the
 * outcomes of the window. SQLite reads its hourly rollup instead (queries/health-series.ts);
 * here the server aggregates, and percentiles are exact (`percentile_disc`, nearest rank)
 * rather than read from a histogram, so they may differ from SQLite's by the histogram's
 * bucket width (about 1.1%). The counts are the same: a run is an outcome that started in the
 * window, counted in the bucket it started in.
 */
const TEXT = `SELECT $3::bigint + (o.started_at - $3::bigint) / $4::bigint * $4::bigint AS start, o.hook_id AS "hookId",
    count(*) AS runs,
    count(*) FILTER (WHERE o.decision = 'deny' AND o.failure_reason IS NULL) AS denials,
    count(*) FILTER (WHERE o.status = 'failed') AS failures,
    count(*) FILTER (WHERE o.status = 'timed_out') AS timeouts,
    CASE WHEN $6::text[] IS NULL OR o.hook_id = ANY ($6::text[]) THEN percentile_disc(0.5) WITHIN GROUP (ORDER BY o.duration_us) END AS "p50Us",
    CASE WHEN $6::text[] IS NULL OR o.hook_id = ANY ($6::text[]) THEN percentile_disc(0.95) WITHIN GROUP (ORDER BY o.duration_us) END AS "p95Us"
  FROM outcomes o
  WHERE o.started_at >= $1 AND o.started_at < $2 AND ($5::text IS NULL OR o.hook_id = $5)
  GROUP BY 1, 2`;

/** `hookHealthSeries` on PostgreSQL: the same buckets as SQLite (from the hour `since` falls in, every `stepMs`). */
export async function hookHealthSeriesPostgres(pool: pg.Pool, options: HealthSeriesOptions): Promise<HealthSeries> {
  seriesStarts(options);
  const origin = floorHour(options.since);
  const result = await pool.query<HealthPoint & { start: number }>({
    name: 'hl_health_series',
    text: TEXT,
    values: [origin, options.until, origin, options.stepMs, options.hookId ?? null, options.percentilesOf ?? null],
  });
  const points = new Map<number, HealthPoint[]>();
  for (const { start, ...point } of result.rows) {
    let list = points.get(start);
    if (!list) points.set(start, (list = []));
    list.push(point);
  }
  return seriesFrom(options, points);
}
