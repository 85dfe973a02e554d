import type pg from 'pg';
import {
  BUCKET_COUNT,
  bucketRange,
  ceilHour,
  decodeHistogramInto,
  emptyAcc,
  emptyTotals,
  histogramOf,
  rollupRowValues,
  floorHour,
  HOUR_MS,
  liveSpans,
  LOOKBACK_MS,
  mergeCounters,
  storableHours,
  type HealthAcc,
  type HealthTotals,
  type LiveSelection,
  type RollupStats,
} from '../health-rollup.js';
import { HEALTH_COUNTERS } from '../queries/health.js';
import type { StoredRow } from '../rows.js';
import type { healthRollups } from '../schema.js';

/** A stored rollup row (one hook, one hour). */
type RollupRow = StoredRow<typeof healthRollups>;

/** The counters of a stored rollup row (`pending` is never rolled up: an hour with one is not closed). */
function countersFromRow(r: RollupRow): Omit<HealthAcc, 'hist'> {
  return { ...r, violations: r.observe_only_violations, pending: 0, maxUs: r.max_us };
}

/**
 * The hook-health rollup on PostgreSQL: the same tables and the same rules as on SQLite
 * (ledger/health-rollup.ts; docs/reports.md "Hook health rollup"): a run counts in the UTC hour
 * its outcome started, a skip in its invocation's hour; an hour is rolled up once it ended
 * `SETTLE_MS` ago and no invocation in it (or the lookback before it) is still running or has a
 * pending outcome; hours recorded into after being built (an older start arriving late) are
 * dropped and rebuilt. What differs is where the live aggregation runs: SQLite streams the
 * outcome rows into JavaScript, which over a network would move every row; here PostgreSQL
 * groups them by hour, hook and histogram bucket (`width_bucket` over the bucket boundaries, so
 * a duration lands in exactly the bucket `bucketOf` gives it) and only the groups travel.
 *
 * Built incrementally: `hookHealth` builds the closed hours a window needs that are not built
 * yet and stores them, so each hour is aggregated once; `catchUpRollupPostgres` builds every
 * closed hour (a bulk writer's last step, e.g. the ledger generator).
 */

/**
 * Lowest duration of each bucket from 1 on: `width_bucket(d, these)` = `bucketOf(d)`. The last
 * bucket (2^53 µs and up) holds no safe integer and is left out: its range cannot be computed.
 */
const BUCKET_FLOORS = Array.from({ length: BUCKET_COUNT - 2 }, (_, b) => bucketRange(b + 1)[0]);
/** @internal for the test that checks `width_bucket` against `bucketOf` */
export const BUCKET_FLOORS_FOR_TEST: readonly number[] = BUCKET_FLOORS;

const runGroups = (
  only = '',
) => `SELECT started_at / ${HOUR_MS} * ${HOUR_MS} AS hour, hook_id, width_bucket(duration_us, $3::bigint[]) AS bucket,
    count(*) AS runs, ${HEALTH_COUNTERS.map(([name, condition]) => `count(*) FILTER (WHERE ${condition}) AS ${name}`).join(', ')},
    count(duration_us) AS timed, max(duration_us) AS max_us
  FROM (SELECT o.hook_id, o.started_at, o.duration_us, o.status, o.decision, o.failure_reason, o.decisive
    FROM invocations i JOIN outcomes o ON o.invocation_id = i.id
    WHERE i.started_at >= $1::bigint - ${LOOKBACK_MS} AND i.started_at < $2 AND o.started_at >= $1 AND o.started_at < $2${only}) o
  GROUP BY 1, 2, 3`;
const RUN_GROUPS = runGroups();
const skipGroups = (only = '') => `SELECT i.started_at / ${HOUR_MS} * ${HOUR_MS} AS hour, o.hook_id, count(*) AS skips
  FROM invocations i JOIN outcomes o ON o.invocation_id = i.id
  WHERE o.status = 'skipped' AND i.started_at >= $1 AND i.started_at < $2${only}
  GROUP BY 1, 2`;
const SKIP_GROUPS = skipGroups();

/** ` AND condition`, its `?` numbered from `$first` on (after the statement's own parameters). */
export function andCondition(only: LiveSelection | undefined, first: number): string {
  let n = first;
  return only ? ` AND ${only.condition.replace(/\?/g, () => `$${n++}`)}` : '';
}

type RunGroup = Record<(typeof HEALTH_COUNTERS)[number][0], number> & {
  hour: number;
  hook_id: string;
  bucket: number | null;
  runs: number;
  timed: number;
  max_us: number | null;
};

/**
 * Aggregates [from, to) live, per hour and hook (the counters `aggregateLive` computes on
 * SQLite, from the same rows: outcomes of the invocations that started in [from - LOOKBACK_MS, to)).
 */
export async function aggregateLivePostgres(
  db: pg.ClientBase | pg.Pool,
  from: number,
  to: number,
  only?: LiveSelection,
): Promise<Map<number, Map<string, HealthAcc>>> {
  // A selection (one machine's records) is a one-off statement: only the whole-ledger ones are named (prepared once per connection).
  const params = only?.params ?? [];
  const [runs, skips] = [
    await db.query<RunGroup>({
      ...(only ? {} : { name: 'hl_health_run_groups' }),
      text: only ? runGroups(andCondition(only, 4)) : RUN_GROUPS,
      values: [from, to, BUCKET_FLOORS, ...params],
    }),
    await db.query<{ hour: number; hook_id: string; skips: number }>({
      ...(only ? {} : { name: 'hl_health_skip_groups' }),
      text: only ? skipGroups(andCondition(only, 3)) : SKIP_GROUPS,
      values: [from, to, ...params],
    }),
  ];
  const hours = new Map<number, Map<string, HealthAcc>>();
  const acc = (hour: number, hookId: string): HealthAcc => {
    let byHook = hours.get(hour);
    if (!byHook) hours.set(hour, (byHook = new Map()));
    let a = byHook.get(hookId);
    if (!a) byHook.set(hookId, (a = emptyAcc()));
    return a;
  };
  for (const s of skips.rows) acc(s.hour, s.hook_id).skips += s.skips;
  for (const g of runs.rows) {
    const a = acc(g.hour, g.hook_id);
    mergeCounters(a, { ...g, skips: 0, maxUs: g.max_us });
    if (g.bucket !== null) a.hist.set(g.bucket, (a.hist.get(g.bucket) ?? 0) + g.timed);
  }
  return hours;
}

/** Starts of the invocations still running or with a pending outcome (few: partial indexes hold only them). */
export async function openStartsPostgres(db: pg.ClientBase | pg.Pool): Promise<number[]> {
  const rows = await db.query<{ started_at: number }>({
    name: 'hl_health_open_starts',
    text: `SELECT started_at FROM invocations WHERE status = 'running'
     UNION SELECT i.started_at FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE o.status = 'pending'`,
  });
  return rows.rows.map((r) => r.started_at);
}

/** What a read saw, so the hours it built are stored only if nothing invalidated them since. */
interface RollupSnapshot {
  lastSeen: number | null;
  maxId: number;
  pruneMark: number;
  staleFrom: number | null;
}

const one = async <T>(db: pg.ClientBase, name: string, text: string, values: unknown[] = []): Promise<T | null> =>
  ((await db.query<{ v: T | null }>({ name, text, values })).rows[0]?.v ?? null) as T | null;

/**
 * Per-hook totals over [since, until): closed hours from the rollup (building the missing ones
 * live and storing them), the rest live. Read in one REPEATABLE READ snapshot; the new hours are
 * stored afterwards in a short transaction of their own, unless a prune ran meanwhile. A role
 * that may not write the rollup still gets its report, live.
 */
export async function rollupTotalsPostgres(
  pool: pg.Pool,
  since: number,
  until: number,
  hookId: string | undefined,
  now: number,
): Promise<{ totals: Map<string, HealthTotals>; stats: RollupStats }> {
  const { buckets, stats } = await rollupBucketsPostgres(pool, since, until, hookId, now, () => 0);
  return { totals: buckets.get(0) ?? new Map(), stats };
}

/**
 * As `rollupTotalsPostgres`, kept apart per bucket of hours (`bucketOfHour` maps an hour's start
 * to its bucket's key), as `rollupBuckets` does on SQLite: a chart is one read of the rollup.
 */
export async function rollupBucketsPostgres(
  pool: pg.Pool,
  since: number,
  until: number,
  hookId: string | undefined,
  now: number,
  bucketOfHour: (hour: number) => number,
): Promise<{ buckets: Map<number, Map<string, HealthTotals>>; stats: RollupStats }> {
  const stats: RollupStats = { rolledUp: 0, built: 0, live: [], dropped: false };
  const buckets = new Map<number, Map<string, HealthTotals>>();
  const total = (hour: number, hook: string): HealthTotals | null => {
    if (hookId !== undefined && hook !== hookId) return null;
    const key = bucketOfHour(hour);
    let totals = buckets.get(key);
    if (!totals) buckets.set(key, (totals = new Map()));
    let t = totals.get(hook);
    if (!t) totals.set(hook, (t = emptyTotals()));
    return t;
  };
  let toStore: { hour: number; hooks: Map<string, HealthAcc> }[] = [];
  let snapshot: RollupSnapshot;

  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const lastSeen = await one<number>(
      client,
      'hl_health_last_seen',
      'SELECT last_invocation_id AS v FROM health_rollup_state WHERE id = 1',
    );
    const maxId = (await one<number>(client, 'hl_health_max_id', 'SELECT max(id) AS v FROM invocations')) ?? 0;
    const pruneMark = (await one<number>(client, 'hl_health_prune_mark', 'SELECT max(id) AS v FROM prune_checkpoints')) ?? 0;
    // Rows recorded since the last build: their earliest start is where built hours may have gone stale.
    const staleAt =
      lastSeen !== null && maxId > lastSeen
        ? await one<number>(client, 'hl_health_stale_at', 'SELECT min(started_at) AS v FROM invocations WHERE id > $1', [lastSeen])
        : null;
    const staleFrom = staleAt === null ? null : floorHour(staleAt);
    snapshot = { lastSeen, maxId, pruneMark, staleFrom };
    const firstStart = await one<number>(client, 'hl_health_first_start', 'SELECT min(started_at) AS v FROM invocations');
    // Nothing starts before the first invocation: the window need not reach further back.
    const from = firstStart === null ? until : Math.max(since, floorHour(firstStart));
    if (from < until) {
      const valid = (hour: number) => staleFrom === null || hour < staleFrom;
      const built = (
        await client.query<{ hour: number }>({
          name: 'hl_health_built_hours',
          text: 'SELECT hour FROM health_rollup_hours WHERE hour >= $1 AND hour < $2 ORDER BY hour',
          values: [ceilHour(from), floorHour(until)],
        })
      ).rows
        .map((r) => r.hour)
        .filter(valid);
      if (built.length > 0) {
        const builtSet = new Set(built);
        const rows = await client.query<RollupRow>({
          name: 'hl_health_rollup_rows',
          text: 'SELECT * FROM health_rollups WHERE hour >= $1 AND hour < $2 AND ($3::text IS NULL OR hook_id = $3)',
          values: [built[0]!, built[built.length - 1]! + HOUR_MS, hookId ?? null],
        });
        for (const r of rows.rows) {
          if (!builtSet.has(r.hour)) continue;
          const t = total(r.hour, r.hook_id);
          if (!t) continue;
          mergeCounters(t, countersFromRow(r));
          if (r.timed > 0) decodeHistogramInto(r.histogram, histogramOf(t));
        }
        stats.rolledUp = built.length;
      }
      const spans = liveSpans(from, until, built);
      stats.live = spans;
      const open = spans.length === 0 ? [] : await openStartsPostgres(client);
      toStore = [];
      for (const span of spans) {
        const live = await aggregateLivePostgres(client, span[0], span[1]);
        for (const [hour, byHook] of live) {
          for (const [hook, acc] of byHook) {
            const t = total(hour, hook);
            if (!t) continue;
            mergeCounters(t, acc);
            if (acc.hist.size === 0) continue;
            const hist = histogramOf(t);
            for (const [bucket, n] of acc.hist) hist[bucket] = hist[bucket]! + n;
          }
        }
        toStore.push(...storableHours(span, live, now, open));
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }

  if (toStore.length > 0 || snapshot.staleFrom !== null || snapshot.lastSeen !== snapshot.maxId) {
    try {
      const stored = await storeRollupHours(pool, toStore, snapshot);
      stats.built = stored.built;
      stats.dropped = stored.dropped;
    } catch (error) {
      // The rollup is a cache: a read-only role or database, or a lock held too long, still gets the report, live.
      const code = (error as { code?: unknown }).code;
      if (!['25006', '42501', '55P03', '57014', '40001', '40P01'].includes(String(code))) throw error;
    }
  }
  return { buckets, stats };
}

const INSERT_ROWS = `INSERT INTO health_rollups (hour, hook_id, runs, allows, denials, asks, modifies, decisive, failures, timeouts,
    observe_only_violations, skips, interrupted, timed, max_us, histogram)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
    $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[], $16::bytea[])
  ON CONFLICT (hour, hook_id) DO UPDATE SET runs = excluded.runs, allows = excluded.allows, denials = excluded.denials,
    asks = excluded.asks, modifies = excluded.modifies, decisive = excluded.decisive, failures = excluded.failures,
    timeouts = excluded.timeouts, observe_only_violations = excluded.observe_only_violations, skips = excluded.skips,
    interrupted = excluded.interrupted, timed = excluded.timed, max_us = excluded.max_us, histogram = excluded.histogram`;

/**
 * Stores the hours a read built, in one short transaction: drops hours gone stale, writes the
 * new ones (upserts: two reports building the same hour write the same rows) and the highest
 * invocation id seen. `health_rollup_hours` is locked first (SHARE ROW EXCLUSIVE: one rollup
 * writer at a time, and a prune that drops hours in its own transaction waits or is waited
 * for), then nothing is stored if a prune committed since the snapshot.
 */
async function storeRollupHours(
  pool: pg.Pool,
  toStore: { hour: number; hooks: Map<string, HealthAcc> }[],
  snapshot: RollupSnapshot,
): Promise<{ built: number; dropped: boolean }> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE health_rollup_hours IN SHARE ROW EXCLUSIVE MODE');
    const result = { built: 0, dropped: false };
    if (((await one<number>(client, 'hl_health_prune_mark', 'SELECT max(id) AS v FROM prune_checkpoints')) ?? 0) !== snapshot.pruneMark) {
      await client.query('ROLLBACK');
      return result;
    }
    if (snapshot.staleFrom !== null) {
      await client.query({
        name: 'hl_health_drop_rows',
        text: 'DELETE FROM health_rollups WHERE hour >= $1',
        values: [snapshot.staleFrom],
      });
      const dropped = await client.query({
        name: 'hl_health_drop_hours',
        text: 'DELETE FROM health_rollup_hours WHERE hour >= $1',
        values: [snapshot.staleFrom],
      });
      result.dropped = (dropped.rowCount ?? 0) > 0;
    }
    const columns: unknown[][] = Array.from({ length: 16 }, () => []);
    for (const { hour, hooks } of toStore) {
      for (const [hook, a] of hooks) {
        const values = rollupRowValues(hour, hook, a);
        values.forEach((v, k) => columns[k]!.push(v));
      }
    }
    if (columns[0]!.length > 0) await client.query({ name: 'hl_health_insert_rows', text: INSERT_ROWS, values: columns });
    if (toStore.length > 0) {
      await client.query({
        name: 'hl_health_insert_hours',
        text: `INSERT INTO health_rollup_hours (hour, built_at) SELECT unnest($1::bigint[]), $2
           ON CONFLICT (hour) DO UPDATE SET built_at = excluded.built_at`,
        values: [toStore.map((h) => h.hour), Date.now()],
      });
    }
    result.built = toStore.length;
    await client.query({
      name: 'hl_health_state',
      text: `INSERT INTO health_rollup_state (id, last_invocation_id) VALUES (1, $1)
         ON CONFLICT (id) DO UPDATE SET last_invocation_id = greatest(health_rollup_state.last_invocation_id, excluded.last_invocation_id)`,
      values: [snapshot.maxId],
    });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Builds every closed hour of the ledger (a bulk writer's last step: the first report then reads the rollup). */
export async function catchUpRollupPostgres(pool: pg.Pool, now = Date.now()): Promise<RollupStats> {
  const firstStart = (await pool.query<{ v: number | null }>('SELECT min(started_at) AS v FROM invocations')).rows[0]?.v ?? null;
  if (firstStart === null) return { rolledUp: 0, built: 0, live: [], dropped: false };
  return (await rollupTotalsPostgres(pool, floorHour(firstStart), floorHour(now), undefined, now)).stats;
}
