import type pg from 'pg';
import { bucketRange, LOOKBACK_MS, totalsOfHours, type HealthTotals } from '../../health-rollup.js';
import {
  healthWindow,
  histogramPercentile,
  hookHealthFrom,
  machineSelection,
  percentileTarget,
  sortHooks,
  wantsExactPercentiles,
  type HealthOptions,
  type HealthReport,
  type HookHealth,
} from '../../queries/health.js';
import { aggregateLivePostgres, andCondition, rollupTotalsPostgres } from '../health-rollup.js';
import { POSTGRES_DIALECT } from './filters.js';
import { pgRead } from './read.js';

/** The rank-th duration of a hook's runs in one histogram bucket (outcomes_health: hook, start, duration: the window's entries only). */
const NTH_IN_BUCKET = {
  name: 'hl_health_nth_in_bucket',
  text: `SELECT duration_us FROM outcomes
     WHERE hook_id = $1 AND duration_us >= $2 AND duration_us <= $3 AND started_at >= $4 AND started_at < $5
     ORDER BY duration_us LIMIT 1 OFFSET $6`,
};
/** The rank-th duration of a hook's runs in the window, from the nearer end. */
const NTH_FAST = {
  name: 'hl_health_nth_fast',
  text: `SELECT duration_us FROM outcomes WHERE hook_id = $1 AND duration_us IS NOT NULL AND started_at >= $2 AND started_at < $3
     ORDER BY duration_us LIMIT 1 OFFSET $4`,
};
const NTH_SLOW = {
  name: 'hl_health_nth_slow',
  text: `SELECT duration_us FROM outcomes WHERE hook_id = $1 AND duration_us IS NOT NULL AND started_at >= $2 AND started_at < $3
     ORDER BY duration_us DESC LIMIT 1 OFFSET $4`,
};

/**
 * Hook health on PostgreSQL: the report `hookHealth` gives on SQLite (ledger/queries/health.ts),
 * from the same rollup (postgres/health-rollup.ts: closed hours read, missing ones built and
 * stored, the rest live) and the same assembly (`hookHealthFrom`, `percentileTarget`,
 * `sortHooks`). Percentiles are exact for windows of at most `EXACT_PERCENTILE_LIMIT` runs (the
 * histogram names the bucket; `outcomes_health` gives the hook's window, filtered to that bucket's range), else the
 * histogram's.
 */
export async function hookHealthPostgres(pool: pg.Pool, location: string, options: HealthOptions = {}): Promise<HealthReport> {
  const { since, until } = healthWindow(options);
  const only = machineSelection(options, POSTGRES_DIALECT);
  return pgRead(location, 'report hook health', async () => {
    // Some machines' records (hooks --host/--source): the rollup counts every machine together, so aggregated live (see `hookHealth`).
    const totals: Map<string, HealthTotals> = only
      ? totalsOfHours(await aggregateLivePostgres(pool, since, until, only), options.hookId)
      : (await rollupTotalsPostgres(pool, since, until, options.hookId, options.now ?? Date.now())).totals;
    const exact = wantsExactPercentiles(totals, options);
    const nth = async (query: pg.QueryConfig): Promise<number | null> =>
      (await pool.query<{ duration_us: number }>(query)).rows[0]?.duration_us ?? null;
    const hooks = await Promise.all(
      [...totals]
        .filter(([, a]) => a.runs > 0 || a.skips > 0)
        .map(async ([hookId, a]): Promise<HookHealth> => {
          const percentile = async (p: number): Promise<number | null> => {
            const target = percentileTarget(a, p);
            if (target === null) return null;
            if (!exact) return histogramPercentile(a, target);
            if (only) {
              const fromStart = target.rank <= a.timed / 2;
              return nth({
                text: `SELECT o.duration_us FROM invocations i JOIN outcomes o ON o.invocation_id = i.id
                  WHERE i.started_at >= $1 AND i.started_at < $2 AND o.hook_id = $3 AND o.duration_us IS NOT NULL
                    AND o.started_at >= $4 AND o.started_at < $5${andCondition(only, 7)}
                  ORDER BY o.duration_us${fromStart ? '' : ' DESC'} LIMIT 1 OFFSET $6`,
                values: [
                  since - LOOKBACK_MS,
                  until,
                  hookId,
                  since,
                  until,
                  fromStart ? target.rank - 1 : a.timed - target.rank,
                  ...only.params,
                ],
              });
            }
            const [lo, hi] = bucketRange(target.bucket);
            const value = await nth({ ...NTH_IN_BUCKET, values: [hookId, lo, hi, since, until, target.rank - target.below - 1] });
            if (value !== null) return value;
            // As on SQLite: an outcome that started long after its invocation can leave the bucket short; read the whole hook.
            return target.rank <= a.timed / 2
              ? nth({ ...NTH_FAST, values: [hookId, since, until, target.rank - 1] })
              : nth({ ...NTH_SLOW, values: [hookId, since, until, a.timed - target.rank] });
          };
          const [p50, p95] = await Promise.all([percentile(0.5), percentile(0.95)]);
          return hookHealthFrom(hookId, a, p50, p95);
        }),
    );
    return { since, until, hooks: sortHooks(hooks) };
  });
}
