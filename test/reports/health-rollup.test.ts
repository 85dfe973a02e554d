import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import type { Outcome } from '../../src/domain/outcomes.js';
import {
  bucketOf,
  bucketRange,
  bucketValue,
  decodeHistogramInto,
  encodeHistogram,
  BUCKET_COUNT,
  HOUR_MS,
} from '../../src/ledger/health-rollup.js';
import type { Ledger } from '../../src/ledger/open.js';
import { pruneLedger } from '../../src/ledger/prune.js';
import { exactHealth, hookHealth, type HealthReport } from '../../src/ledger/queries/health.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { tempLedger } from '../helpers.js';
import { buildLedger, outcome } from './fixture.js';

const COUNTS = [
  'runs',
  'allows',
  'denials',
  'asks',
  'modifies',
  'decisive',
  'failures',
  'timeouts',
  'observeOnlyViolations',
  'skips',
  'pending',
  'interrupted',
  'maxUs',
] as const;

function counts(report: HealthReport) {
  return Object.fromEntries(report.hooks.map((h) => [h.hookId, Object.fromEntries(COUNTS.map((k) => [k, h[k]]))]));
}

/** Percentiles from the histogram are within one bucket (2^(1/32) ≈ 2.2%) of the exact value. */
function expectWithinBucket(actual: number | null, exact: number | null, label: string) {
  if (exact === null) return expect(actual, label).toBeNull();
  expect(Math.abs(actual! - exact), `${label}: ${actual} vs exact ${exact}`).toBeLessThanOrEqual(exact * 0.022 + 1);
}

const builtHours = (ledger: Ledger) =>
  ledger.sqlite.prepare('SELECT hour FROM health_rollup_hours ORDER BY hour').pluck().all() as number[];

/** A ledger written through the real write path at chosen times: `hours` hours of invocations with spread durations. */
function timedLedger(start: number, hours: number) {
  const { ledger } = tempLedger();
  const writer = new LedgerWriter(ledger);
  const setId = writer.hookSetId(defineHooks({ name: 'timed', hooks: [{ id: 'a', point: 'pre_tool_use', run: () => undefined }] }));
  const record = (at: number, outcomes: Outcome[]) => {
    const id = writer.begin(setId, normaliseInvocation({ point: 'pre_tool_use', toolName: 'Bash' }), at);
    return writer.finish(
      id,
      {
        decision: 'none',
        decisiveHookId: null,
        reasonCode: null,
        message: null,
        modifiedInput: null,
        additionalContext: [],
        durationUs: 1,
      },
      outcomes,
    );
  };
  let n = 0;
  for (let h = 0; h < hours; h++) {
    for (let i = 0; i < 40; i++) {
      const at = start + h * HOUR_MS + i * 60_000 + 7;
      const d = 50 + ((n++ * 7919) % 400_000);
      record(at, [
        outcome('a', {
          startedAt: at,
          durationUs: d,
          ...(i % 9 === 0
            ? { status: 'failed', decision: null, failureReason: 'execution_failed' }
            : i % 5 === 0
              ? { decision: 'deny', decisive: true }
              : {}),
        }),
        outcome('b', { startedAt: at + 2, durationUs: 3 + (i % 17) }),
        outcome('c', { status: 'skipped', decision: null, skipReason: 'pass_ended', skippedBy: 'a' }),
      ]);
    }
  }
  return { ledger, writer, record };
}

describe('hook health rollup', () => {
  it('histogram buckets: every value falls in its bucket range; the reported value is within 2.2%; encoding round-trips', () => {
    for (let d = 0; d < 5000; d++) {
      const [lo, hi] = bucketRange(bucketOf(d));
      expect(d >= lo && d <= hi, `${d} in [${lo}, ${hi}]`).toBe(true);
    }
    for (const d of [12_345, 99_999, 1_000_000, 2 ** 31, 2 ** 40 + 3, 9_000_000_000]) {
      const b = bucketOf(d);
      const [lo, hi] = bucketRange(b);
      expect(d >= lo && d <= hi).toBe(true);
      expect(Math.abs(bucketValue(b) - d)).toBeLessThanOrEqual(d * 0.022);
      expect(b).toBeLessThan(BUCKET_COUNT);
    }
    const hist = new Map([
      [0, 3],
      [1, 1],
      [700, 300],
      [1500, 2 ** 33],
    ]);
    const out = new Float64Array(BUCKET_COUNT);
    decodeHistogramInto(encodeHistogram(hist), out);
    expect([...hist].every(([b, n]) => out[b] === n)).toBe(true);
    expect(out.reduce((a, n) => a + n, 0)).toBe([...hist.values()].reduce((a, n) => a + n, 0));
  });

  it('on a ledger built by the real runner: rollup counts equal the exact path, percentiles within a bucket, the open tail included', async () => {
    const { ledger, recorded } = await buildLedger();
    const starts = recorded.map((r) => r.report.startedAt);
    const since = Math.floor(Math.min(...starts) / HOUR_MS) * HOUR_MS - HOUR_MS;
    const until = Math.ceil((Math.max(...starts) + 1) / HOUR_MS) * HOUR_MS + HOUR_MS;
    const later = until + HOUR_MS;
    const exact = exactHealth(ledger, since, until, undefined);
    expect(exact.hooks.length).toBeGreaterThan(5);
    // First call builds the closed hours, the second reads them back; both agree with the exact path.
    const first = hookHealth(ledger, { since, until, now: later, exactPercentileLimit: 0 });
    expect(builtHours(ledger).length).toBeGreaterThanOrEqual(2);
    const second = hookHealth(ledger, { since, until, now: later, exactPercentileLimit: 0 });
    for (const report of [first, second]) {
      expect(counts(report)).toEqual(counts(exact));
      for (const h of report.hooks) {
        const e = exact.hooks.find((x) => x.hookId === h.hookId)!;
        expectWithinBucket(h.p50Us, e.p50Us, `${h.hookId} p50`);
        expectWithinBucket(h.p95Us, e.p95Us, `${h.hookId} p95`);
      }
    }
    // Few runs: exact percentiles, equal to the exact path, from the rollup too.
    expect(hookHealth(ledger, { since, until, now: later })).toEqual(exact);
    expect(hookHealth(ledger, { since, until, now: later, hookId: 'flaky' })).toEqual(exactHealth(ledger, since, until, 'flaky'));
    // Now, without a fake clock: the current hour is open, aggregated live, and included.
    const live = hookHealth(ledger, { since, until: Date.now() + 1000 });
    expect(counts(live)).toEqual(counts(exactHealth(ledger, since, Date.now() + 1000, undefined)));
  });

  it('rebuilds hours when an invocation with an older start is recorded after they were rolled up', () => {
    const start = Date.UTC(2026, 9, 1);
    const { ledger, record } = timedLedger(start, 6);
    const window = { since: start, until: start + 6 * HOUR_MS };
    hookHealth(ledger, window);
    expect(builtHours(ledger)).toHaveLength(6);
    // A late import into hour 3.
    record(start + 3 * HOUR_MS + 5, [outcome('a', { startedAt: start + 3 * HOUR_MS + 5, durationUs: 9_999_999 })]);
    const after = hookHealth(ledger, window);
    expect(after).toEqual(exactHealth(ledger, window.since, window.until, undefined));
    expect(after.hooks.find((h) => h.hookId === 'a')!.maxUs).toBe(9_999_999);
  });

  it('an hour with a pending background outcome is not rolled up until it completes', () => {
    const start = Date.UTC(2026, 9, 2);
    const { ledger, writer, record } = timedLedger(start, 3);
    const at = start + HOUR_MS + 30_000;
    const [pendingId] = record(at, [outcome('bg', { mode: 'background', status: 'pending', decision: null, executionOrder: null })]);
    const window = { since: start, until: start + 3 * HOUR_MS };
    expect(hookHealth(ledger, window).hooks.find((h) => h.hookId === 'bg')).toBeUndefined();
    // Its hour and the next (a background hook may start in the hour after its invocation) stay live.
    expect(builtHours(ledger)).toEqual([start]);
    writer.startBackground(pendingId!, at + 10, 1);
    const open = hookHealth(ledger, window);
    expect(open.hooks.find((h) => h.hookId === 'bg')).toMatchObject({ runs: 1, pending: 1 });
    writer.completeBackground(
      pendingId!,
      outcome('bg', { mode: 'background', status: 'completed', decision: 'deny', startedAt: at + 10, durationUs: 777 }),
    );
    const done = hookHealth(ledger, window);
    expect(done).toEqual(exactHealth(ledger, window.since, window.until, undefined));
    expect(done.hooks.find((h) => h.hookId === 'bg')).toMatchObject({ runs: 1, pending: 0, denials: 1, maxUs: 777 });
    expect(builtHours(ledger)).toEqual([start, start + HOUR_MS, start + 2 * HOUR_MS]);
  });

  it('prune drops the rollup hours it touched; they are rebuilt from what remains', async () => {
    const start = Date.UTC(2026, 9, 3);
    const { ledger } = timedLedger(start, 4);
    const window = { since: start, until: start + 4 * HOUR_MS };
    const before = hookHealth(ledger, window);
    expect(builtHours(ledger)).toHaveLength(4);
    // Remove the first hour and the first half of the second (40 + 30 invocations).
    const cutoff = start + HOUR_MS + HOUR_MS / 2;
    const pruned = await pruneLedger(ledger, { before: cutoff, pauseMs: 0 });
    expect(pruned.invocations).toBe(70);
    expect(builtHours(ledger)).toEqual([start + 2 * HOUR_MS, start + 3 * HOUR_MS]);
    const after = hookHealth(ledger, window);
    expect(after).toEqual(exactHealth(ledger, window.since, window.until, undefined));
    expect(after.hooks.find((h) => h.hookId === 'a')!.runs).toBe(before.hooks.find((h) => h.hookId === 'a')!.runs - 70);
    expect(builtHours(ledger)).toEqual([start + HOUR_MS, start + 2 * HOUR_MS, start + 3 * HOUR_MS]);
  });
});
