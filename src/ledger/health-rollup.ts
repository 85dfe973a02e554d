import type Database from 'better-sqlite3';
import type { Ledger } from './open.js';
import { prepared } from './statements.js';

/**
 * Hourly hook-health rollups (`health_rollups`), built lazily by `hookHealth` and never on the
 * per-event write path.
 *
 * Rules (docs/reports.md, "Hook health rollup"):
 * - A run counts in the UTC hour its outcome started; a skip in the hour its invocation started.
 * - An hour's outcomes are found through the invocations that started in it or up to
 *   `LOOKBACK_MS` before it: a hook runs inside its invocation, or in the background just after
 *   it, so its start is never earlier than its invocation's and, in practice, minutes later at most.
 * - An hour is *closed*, and rolled up once, when it ended `SETTLE_MS` ago and no invocation that
 *   started in it or in the lookback before it is still `running` or has a `pending` outcome
 *   (a background hook that completes late would change the hour's counts). Hours that are not
 *   closed, and the partial hours at the window's edges, are aggregated live on every query.
 * - Invocations recorded after a build with an older start (an import, a clock step) are
 *   noticed through `health_rollup_state.last_invocation_id`: the hours from their start on are
 *   dropped and rebuilt. Prune drops the hours it touches (`rollupInvalidator`).
 */

export const HOUR_MS = 3_600_000;
/** How long after an hour ends before it may be rolled up. */
export const SETTLE_MS = 10 * 60_000;
/** How far before an hour the invocations whose outcomes may start in it are looked for. */
export const LOOKBACK_MS = HOUR_MS;
/** Histogram resolution: buckets per doubling (each bucket is 2^(1/32) ≈ 2.2% wide). */
export const BUCKETS_PER_OCTAVE = 32;

/** Counters of one hook over some span, with its duration histogram (bucket → count). */
export interface HealthAcc {
  runs: number;
  allows: number;
  denials: number;
  asks: number;
  modifies: number;
  decisive: number;
  failures: number;
  timeouts: number;
  violations: number;
  skips: number;
  pending: number;
  interrupted: number;
  timed: number;
  maxUs: number | null;
  hist: Map<number, number>;
}

export function emptyAcc(): HealthAcc {
  return {
    runs: 0,
    allows: 0,
    denials: 0,
    asks: 0,
    modifies: 0,
    decisive: 0,
    failures: 0,
    timeouts: 0,
    violations: 0,
    skips: 0,
    pending: 0,
    interrupted: 0,
    timed: 0,
    maxUs: null,
    hist: new Map(),
  };
}

/** A hook's totals over a window: the counters of `HealthAcc`, the histogram as a dense array (merging thousands of hours). */
export type HealthTotals = Omit<HealthAcc, 'hist'> & { hist: Float64Array };

/** Buckets of the dense histogram: every duration up to 2^53 µs. */
export const BUCKET_COUNT = 2 + 53 * BUCKETS_PER_OCTAVE;

/** No histogram yet: totals get their dense array (13.6 KB) only when a duration is merged in. */
const NO_HISTOGRAM = new Float64Array(0);

export function emptyTotals(): HealthTotals {
  return { ...emptyAcc(), hist: NO_HISTOGRAM };
}

/** The totals' dense histogram, allocated on first use. */
export function histogramOf(t: HealthTotals): Float64Array {
  if (t.hist === NO_HISTOGRAM) t.hist = new Float64Array(BUCKET_COUNT);
  return t.hist;
}

/** Adds one span's counters to another's (max for the max). */
export function mergeCounters(into: Omit<HealthAcc, 'hist'>, from: Omit<HealthAcc, 'hist'>): void {
  into.runs += from.runs;
  into.allows += from.allows;
  into.denials += from.denials;
  into.asks += from.asks;
  into.modifies += from.modifies;
  into.decisive += from.decisive;
  into.failures += from.failures;
  into.timeouts += from.timeouts;
  into.violations += from.violations;
  into.skips += from.skips;
  into.pending += from.pending;
  into.interrupted += from.interrupted;
  into.timed += from.timed;
  if (from.maxUs !== null && (into.maxUs === null || from.maxUs > into.maxUs)) into.maxUs = from.maxUs;
}

/** The histogram bucket of a duration: 0 for 0 µs, else 1 + floor(32 · log2(µs)). */
export function bucketOf(us: number): number {
  return us <= 0 ? 0 : 1 + Math.floor(Math.log2(us) * BUCKETS_PER_OCTAVE);
}

const rangeCache = new Map<number, [number, number]>();

/**
 * The whole µs values a bucket holds, [lo, hi] (hi < lo when it holds none). Derived from
 * `bucketOf` itself, so that a SQL range over durations selects exactly the bucket's entries.
 */
export function bucketRange(b: number): [number, number] {
  let r = rangeCache.get(b);
  if (!r) {
    r = [lowestIn(b), lowestIn(b + 1) - 1];
    rangeCache.set(b, r);
  }
  return r;
}

function lowestIn(b: number): number {
  if (b <= 0) return 0;
  let c = Math.ceil(2 ** ((b - 1) / BUCKETS_PER_OCTAVE));
  while (bucketOf(c) < b) c++;
  while (c > 1 && bucketOf(c - 1) >= b) c--;
  return c;
}

/** The value reported for a bucket: its geometric middle, as a whole µs inside the bucket. */
export function bucketValue(b: number): number {
  const [lo, hi] = bucketRange(b);
  if (hi <= lo) return lo;
  return Math.min(hi, Math.max(lo, Math.round(2 ** ((b - 0.5) / BUCKETS_PER_OCTAVE))));
}

/** Sparse histogram as unsigned LEB128 pairs (bucket delta, count), buckets ascending. */
export function encodeHistogram(hist: Map<number, number>): Buffer {
  const bytes: number[] = [];
  const put = (n: number) => {
    while (n >= 0x80) {
      bytes.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    bytes.push(n);
  };
  let last = 0;
  for (const b of [...hist.keys()].sort((x, y) => x - y)) {
    put(b - last);
    put(hist.get(b)!);
    last = b;
  }
  return Buffer.from(bytes);
}

export function decodeHistogramInto(buf: Uint8Array, into: Float64Array): void {
  let i = 0;
  let bucket = 0;
  const next = () => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const byte = buf[i++]!;
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 0x80;
    }
  };
  while (i < buf.length) {
    bucket += next();
    const count = next();
    into[bucket] = into[bucket]! + count;
  }
}

/** One stored rollup row's values, in the column order of `health_rollups` (both engines insert these). */
export function rollupRowValues(hour: number, hook: string, a: HealthAcc): unknown[] {
  return [
    hour,
    hook,
    a.runs,
    a.allows,
    a.denials,
    a.asks,
    a.modifies,
    a.decisive,
    a.failures,
    a.timeouts,
    a.violations,
    a.skips,
    a.interrupted,
    a.timed,
    a.maxUs,
    encodeHistogram(a.hist),
  ];
}

export const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;
export const ceilHour = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS;

type LiveRow = [
  invStartedAt: number,
  hookId: string,
  startedAt: number | null,
  status: string,
  decision: string | null,
  failureReason: string | null,
  decisive: number,
  durationUs: number | null,
];

/** A condition over the invocations (`i`) a live aggregation keeps, e.g. one host's (hooks --host/--source), with its parameters. */
export interface LiveSelection {
  condition: string;
  params: (string | number)[];
}

/** Per-hook totals of a live aggregation's hours (`hookId`: that hook only). */
export function totalsOfHours(hours: Map<number, Map<string, HealthAcc>>, hookId?: string): Map<string, HealthTotals> {
  const totals = new Map<string, HealthTotals>();
  for (const byHook of hours.values())
    for (const [hook, a] of byHook) {
      if (hookId !== undefined && hook !== hookId) continue;
      let t = totals.get(hook);
      if (!t) totals.set(hook, (t = emptyTotals()));
      mergeCounters(t, a);
      if (a.hist.size === 0) continue;
      const hist = histogramOf(t);
      for (const [b, n] of a.hist) hist[b] = hist[b]! + n;
    }
  return totals;
}

/**
 * Aggregates [from, to) live, per hour and hook: the outcomes of the invocations that started
 * in [from - LOOKBACK_MS, to), read through `invocations_started_at` and `outcomes_invocation`.
 * The counters are the ones `hookHealth`'s exact path computes with SQL. `only` narrows the
 * invocations (a report on one machine's records; not used for the stored rollup).
 */
export function aggregateLive(ledger: Ledger, from: number, to: number, only?: LiveSelection): Map<number, Map<string, HealthAcc>> {
  const rows = prepared<(string | number)[], LiveRow>(
    ledger,
    `SELECT i.started_at, o.hook_id, o.started_at, o.status, o.decision, o.failure_reason, o.decisive, o.duration_us
     FROM invocations i INDEXED BY invocations_started_at JOIN outcomes o INDEXED BY outcomes_invocation ON o.invocation_id = i.id
     WHERE i.started_at >= ? AND i.started_at < ?${only ? ` AND ${only.condition}` : ''}`,
  ).raw();
  const hours = new Map<number, Map<string, HealthAcc>>();
  const acc = (hour: number, hookId: string): HealthAcc => {
    let byHook = hours.get(hour);
    if (!byHook) hours.set(hour, (byHook = new Map()));
    let a = byHook.get(hookId);
    if (!a) byHook.set(hookId, (a = emptyAcc()));
    return a;
  };
  for (const [invAt, hookId, at, status, decision, failureReason, decisive, durationUs] of rows.iterate(
    from - LOOKBACK_MS,
    to,
    ...(only?.params ?? []),
  )) {
    if (status === 'skipped' && invAt >= from) acc(floorHour(invAt), hookId).skips++;
    if (at === null || at < from || at >= to) continue;
    const a = acc(floorHour(at), hookId);
    a.runs++;
    if (decision === 'allow') a.allows++;
    else if (failureReason === null) {
      if (decision === 'deny') a.denials++;
      else if (decision === 'ask') a.asks++;
      else if (decision === 'modify') a.modifies++;
    }
    if (decisive) a.decisive++;
    if (status === 'failed') a.failures++;
    else if (status === 'timed_out') a.timeouts++;
    else if (status === 'pending') a.pending++;
    else if (status === 'interrupted') a.interrupted++;
    if (failureReason === 'observe_only_violation') a.violations++;
    if (durationUs !== null) {
      a.timed++;
      if (a.maxUs === null || durationUs > a.maxUs) a.maxUs = durationUs;
      const b = bucketOf(durationUs);
      a.hist.set(b, (a.hist.get(b) ?? 0) + 1);
    }
  }
  return hours;
}

/** The bucket key's origin and step (twice each), the hour range twice, the hook (twice, or nulls). */
type RollupArgs = [number, number, number, number, number, number, number, number, string | null, string | null];
/** A bucket's and hook's stored hours, summed. */
type RollupSums = Omit<HealthAcc, 'hist' | 'pending'> & { bucket: number; hook_id: string };

/** Whether this ledger has the rollup tables (a read-only open of an older ledger does not). */
export function hasRollups(ledger: Ledger): boolean {
  return prepared(ledger, `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'health_rollups'`).get() !== undefined;
}

/** What `rollupTotals` did, for tests and the benchmark. */
export interface RollupStats {
  /** Hours read from the rollup. */
  rolledUp: number;
  /** Hours rolled up by this call. */
  built: number;
  /** Spans aggregated live. */
  live: [number, number][];
  /** Hours dropped because invocations with an older start were recorded after they were built. */
  dropped: boolean;
}

/**
 * Per-hook totals over [since, until): closed hours from the rollup (building the missing ones
 * from the live aggregation and storing them), the rest live. Read under one snapshot; the
 * new hours are stored in a short IMMEDIATE transaction afterwards, unless a prune ran meanwhile.
 */
export function rollupTotals(
  ledger: Ledger,
  since: number,
  until: number,
  hookId: string | undefined,
  now: number,
): { totals: Map<string, HealthTotals>; stats: RollupStats } {
  // One bucket: every hour's key is 0 (origin 0, a step longer than any time since the epoch).
  const { buckets, stats } = rollupBuckets(ledger, since, until, hookId, now, { origin: 0, stepMs: ONE_BUCKET });
  return { totals: buckets.get(0) ?? new Map(), stats };
}

/** A bucket width no hour reaches: one bucket for the whole window. */
const ONE_BUCKET = 2 ** 52;

/** How hours are grouped: an hour falls in the bucket keyed `origin + floor((hour - origin) / stepMs) * stepMs`. */
export interface HourBuckets {
  /** A bucket start at or before every hour grouped (the hours are ≥ origin). */
  origin: number;
  /** A whole number of hours. */
  stepMs: number;
  /** Only these hooks' duration histograms are merged (the others' stay empty); default every hook's. */
  histogramsOf?: readonly string[];
}

/**
 * As `rollupTotals`, but kept apart per bucket of hours (a chart's points), so that a whole
 * chart is one read of the rollup instead of one read per point. The stored hours' counters
 * are summed per bucket and hook by SQLite; only their histograms come back row by row
 * (measured: materialising every counter of every stored hour cost more than the rest).
 */
export function rollupBuckets(
  ledger: Ledger,
  since: number,
  until: number,
  hookId: string | undefined,
  now: number,
  grouping: HourBuckets,
): { buckets: Map<number, Map<string, HealthTotals>>; stats: RollupStats } {
  const { origin, stepMs } = grouping;
  const histogramsOf = grouping.histogramsOf ? JSON.stringify(grouping.histogramsOf) : null;
  const bucketOfHour = (hour: number) => origin + Math.floor((hour - origin) / stepMs) * stepMs;
  const s = ledger.sqlite;
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
  const add = (hour: number, hook: string, a: HealthAcc) => {
    const t = total(hour, hook);
    if (!t) return;
    mergeCounters(t, a);
    if (a.hist.size === 0) return;
    const hist = histogramOf(t);
    for (const [b, n] of a.hist) hist[b] = hist[b]! + n;
  };
  if (!hasRollups(ledger)) {
    // A ledger opened read-only before the rollup tables existed: the whole window live.
    for (const [hour, byHook] of aggregateLive(ledger, since, until)) for (const [hook, acc] of byHook) add(hour, hook, acc);
    stats.live = [[since, until]];
    return { buckets, stats };
  }
  let toStore: { hour: number; hooks: Map<string, HealthAcc> }[] = [];
  let snapshot: RollupSnapshot = { lastSeen: null, maxId: 0, pruneMark: 0, staleFrom: null };

  s.transaction(() => {
    const lastSeen = prepared<[], number>(ledger, 'SELECT last_invocation_id FROM health_rollup_state WHERE id = 1').pluck().get() ?? null;
    const maxId = prepared<[], number | null>(ledger, 'SELECT max(id) FROM invocations').pluck().get() ?? 0;
    const pruneMark = prepared<[], number | null>(ledger, 'SELECT max(id) FROM prune_checkpoints').pluck().get() ?? 0;
    // Rows recorded since the last build: their earliest start is where built hours may have gone stale.
    const staleAt =
      lastSeen !== null && maxId > lastSeen
        ? (prepared<[number], number | null>(ledger, 'SELECT min(started_at) FROM invocations WHERE id > ?').pluck().get(lastSeen) ?? null)
        : null;
    const staleFrom = staleAt === null ? null : floorHour(staleAt);
    snapshot = { lastSeen, maxId, pruneMark, staleFrom };
    const firstStart = prepared<[], number | null>(ledger, 'SELECT min(started_at) FROM invocations').pluck().get() ?? null;
    if (firstStart === null) return;
    // Nothing starts before the first invocation: the window need not reach further back (no empty hours to mark).
    const from = Math.max(since, floorHour(firstStart));
    if (from >= until) return;
    const valid = (hour: number) => staleFrom === null || hour < staleFrom;
    const built = prepared<[number, number], number>(
      ledger,
      'SELECT hour FROM health_rollup_hours WHERE hour >= ? AND hour < ? ORDER BY hour',
    )
      .pluck()
      .all(ceilHour(from), floorHour(until))
      .filter(valid);
    if (built.length > 0) {
      // The built hours, as SQL: those of health_rollup_hours in [first, end) (the stale ones lie after end).
      const first = built[0]!;
      const end = built[built.length - 1]! + HOUR_MS;
      const where = `hour >= ? AND hour < ? AND hour IN (SELECT hour FROM health_rollup_hours WHERE hour >= ? AND hour < ?) AND (? IS NULL OR hook_id = ?)`;
      // better-sqlite3 binds numbers as REAL: CAST makes the division whole (hours are ≥ origin, so it floors).
      const key = `? + CAST((hour - ?) / ? AS INTEGER) * ?`;
      const args: RollupArgs = [origin, origin, stepMs, stepMs, first, end, first, end, hookId ?? null, hookId ?? null];
      const counters = prepared<RollupArgs, RollupSums>(
        ledger,
        `SELECT ${key} AS bucket, hook_id, sum(runs) AS runs, sum(allows) AS allows, sum(denials) AS denials, sum(asks) AS asks,
           sum(modifies) AS modifies, sum(decisive) AS decisive, sum(failures) AS failures, sum(timeouts) AS timeouts,
           sum(observe_only_violations) AS violations, sum(skips) AS skips, sum(interrupted) AS interrupted, sum(timed) AS timed,
           max(max_us) AS maxUs
         FROM health_rollups WHERE ${where} GROUP BY 1, 2`,
      ).all(...args);
      for (const { bucket, hook_id, ...sums } of counters) mergeCounters(total(bucket, hook_id)!, { ...sums, pending: 0 });
      const histograms = prepared<[...RollupArgs, string | null, string | null], [number, string, Uint8Array]>(
        ledger,
        `SELECT ${key} AS bucket, hook_id, histogram FROM health_rollups
         WHERE ${where} AND timed > 0 AND (? IS NULL OR hook_id IN (SELECT value FROM json_each(?)))`,
      ).raw();
      for (const [bucket, hook, histogram] of histograms.iterate(...args, histogramsOf, histogramsOf))
        decodeHistogramInto(histogram, histogramOf(total(bucket, hook)!));
      stats.rolledUp = built.length;
    }
    const spans = liveSpans(from, until, built);
    stats.live = spans;
    const open = spans.length === 0 ? [] : openStarts(ledger);
    toStore = [];
    for (const span of spans) {
      const live = aggregateLive(ledger, span[0], span[1]);
      for (const [hour, byHook] of live) for (const [hook, acc] of byHook) add(hour, hook, acc);
      if (!s.readonly) toStore.push(...storableHours(span, live, now, open));
    }
  })();

  if (!s.readonly && (toStore.length > 0 || snapshot.staleFrom !== null || snapshot.lastSeen !== snapshot.maxId)) {
    try {
      const stored = storeRollupHours(ledger, toStore, snapshot);
      stats.built = stored.built;
      stats.dropped = stored.dropped;
    } catch (error) {
      // The rollup is a cache: a ledger busy beyond busy_timeout (or read-only on disk) is still reported on, live.
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !/^SQLITE_(BUSY|READONLY)/.test(code)) throw error;
    }
  }
  return { buckets, stats };
}

/** The parts of [from, until) that no built hour covers: those are aggregated live. */
export function liveSpans(from: number, until: number, built: readonly number[]): [number, number][] {
  const spans: [number, number][] = [];
  let cursor = from;
  for (const hour of built) {
    if (cursor < hour) spans.push([cursor, hour]);
    cursor = hour + HOUR_MS;
  }
  if (cursor < until) spans.push([cursor, until]);
  return spans;
}

/**
 * The hours of a live span worth storing: whole hours closed at least SETTLE_MS ago (stale
 * hours included: they are replaced) that no open invocation may still add to.
 */
export function storableHours(
  [from, to]: [number, number],
  live: Map<number, Map<string, HealthAcc>>,
  now: number,
  openStartedAt: readonly number[],
): { hour: number; hooks: Map<string, HealthAcc> }[] {
  const closedBefore = floorHour(now - SETTLE_MS);
  const blocked = (hour: number) => openStartedAt.some((at) => at >= hour - LOOKBACK_MS && at < hour + HOUR_MS);
  const hours: { hour: number; hooks: Map<string, HealthAcc> }[] = [];
  for (let hour = ceilHour(from); hour + HOUR_MS <= Math.min(to, closedBefore); hour += HOUR_MS) {
    if (!blocked(hour)) hours.push({ hour, hooks: live.get(hour) ?? new Map() });
  }
  return hours;
}

/** What a rollupTotals read saw, so the hours it built are stored only if nothing invalidated them since. */
interface RollupSnapshot {
  lastSeen: number | null;
  maxId: number;
  pruneMark: number;
  staleFrom: number | null;
}

/**
 * Stores the hours a read built, in a short IMMEDIATE transaction of its own (the read ran
 * under a snapshot): drops hours gone stale, writes the new ones and the highest invocation id
 * seen. Stores nothing when a prune ran since the snapshot (it may have removed rows these
 * hours counted).
 */
function storeRollupHours(
  ledger: Ledger,
  toStore: { hour: number; hooks: Map<string, HealthAcc> }[],
  snapshot: RollupSnapshot,
): { built: number; dropped: boolean } {
  return ledger.sqlite
    .transaction(() => {
      const result = { built: 0, dropped: false };
      if ((prepared<[], number | null>(ledger, 'SELECT max(id) FROM prune_checkpoints').pluck().get() ?? 0) !== snapshot.pruneMark)
        return result;
      if (snapshot.staleFrom !== null) {
        prepared(ledger, 'DELETE FROM health_rollups WHERE hour >= ?').run(snapshot.staleFrom);
        result.dropped = prepared(ledger, 'DELETE FROM health_rollup_hours WHERE hour >= ?').run(snapshot.staleFrom).changes > 0;
      }
      const insertHour = prepared(ledger, 'INSERT OR REPLACE INTO health_rollup_hours (hour, built_at) VALUES (?, ?)');
      const insertRow = prepared(
        ledger,
        `INSERT OR REPLACE INTO health_rollups (hour, hook_id, runs, allows, denials, asks, modifies, decisive, failures, timeouts,
           observe_only_violations, skips, interrupted, timed, max_us, histogram) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const at = Date.now();
      for (const { hour, hooks } of toStore) {
        for (const [hook, a] of hooks) {
          insertRow.run(...rollupRowValues(hour, hook, a));
        }
        insertHour.run(hour, at);
      }
      result.built = toStore.length;
      prepared(
        ledger,
        'INSERT INTO health_rollup_state (id, last_invocation_id) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET last_invocation_id = max(last_invocation_id, excluded.last_invocation_id)',
      ).run(snapshot.maxId);
      return result;
    })
    .immediate();
}

/** Starts of the invocations still running or with a pending outcome (few: the partial indexes hold only them). */
export function openStarts(ledger: Ledger): number[] {
  return prepared<[], number>(
    ledger,
    `SELECT started_at FROM invocations INDEXED BY invocations_running WHERE status = 'running'
     UNION SELECT i.started_at FROM outcomes o INDEXED BY outcomes_pending JOIN invocations i ON i.id = o.invocation_id WHERE o.status = 'pending'`,
  )
    .pluck()
    .all();
}

/**
 * For prune: drops the rollup hours a batch of invocations (a JSON array of ids) touches, before
 * they are deleted, in the same transaction. Those hours are rebuilt from what remains.
 */
export function rollupInvalidator(s: Database.Database): (idsJson: string) => void {
  const hours = s
    .prepare(
      `SELECT started_at / ${HOUR_MS} * ${HOUR_MS} FROM invocations WHERE id IN (SELECT value FROM json_each(?))
       UNION SELECT started_at / ${HOUR_MS} * ${HOUR_MS} FROM outcomes WHERE invocation_id IN (SELECT value FROM json_each(?)) AND started_at IS NOT NULL`,
    )
    .pluck() as Database.Statement<[string, string], number>;
  const dropRows = s.prepare('DELETE FROM health_rollups WHERE hour IN (SELECT value FROM json_each(?))');
  const dropHours = s.prepare('DELETE FROM health_rollup_hours WHERE hour IN (SELECT value FROM json_each(?))');
  return (idsJson) => {
    const touched = JSON.stringify(hours.all(idsJson, idsJson));
    dropRows.run(touched);
    dropHours.run(touched);
  };
}
