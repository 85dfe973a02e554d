import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import type { Outcome } from '../../src/domain/outcomes.js';
import { HOUR_MS } from '../../src/ledger/health-rollup.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { hookHealth } from '../../src/ledger/queries/health.js';
import { hookHealthSeries, seriesStep, type HealthSeries } from '../../src/ledger/queries/health-series.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { tempLedger } from '../helpers.js';
import { outcome } from '../reports/fixture.js';

/** `hours` hours of invocations (20 an hour) with spread durations, failures, timeouts and denials, through the real write path. */
function recordHours(ledger: SqliteLedger, start: number, hours: number): void {
  const writer = new LedgerWriter(ledger);
  const setId = writer.hookSetId(defineHooks({ name: 'series', hooks: [{ id: 'a', point: 'pre_tool_use', run: () => undefined }] }));
  let n = 0;
  for (let h = 0; h < hours; h++) {
    for (let i = 0; i < 20; i++) {
      const at = start + h * HOUR_MS + i * 170_000 + 11;
      const outcomes: Outcome[] = [
        outcome('a', {
          startedAt: at,
          durationUs: 40 + ((n++ * 7919) % 300_000),
          ...(i % 7 === 0
            ? { status: 'failed', decision: null, failureReason: 'execution_failed' }
            : i % 4 === 0
              ? { decision: 'deny', decisive: true }
              : {}),
        }),
        outcome('b', {
          startedAt: at + 3,
          durationUs: 5 + ((h * 13 + i) % 29),
          ...(i % 11 === 0 ? { status: 'timed_out', decision: null } : {}),
        }),
        outcome('c', { status: 'skipped', decision: null, skipReason: 'pass_ended', skippedBy: 'a' }),
      ];
      const id = writer.begin(setId, normaliseInvocation({ point: 'pre_tool_use', toolName: 'Bash' }), at);
      writer.finish(
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
    }
  }
}

/** What the console drew before the series query: one hookHealth per bucket, from the histograms. */
function perBucket(ledger: SqliteLedger, series: HealthSeries, now: number, hookId?: string) {
  return series.buckets.map((b) =>
    hookHealth(ledger, { since: b.start, until: b.end, now, exactPercentileLimit: 0, ...(hookId ? { hookId } : {}) })
      .hooks.filter((h) => h.runs > 0)
      .map((h) => ({
        hookId: h.hookId,
        runs: h.runs,
        denials: h.denials,
        failures: h.failures,
        timeouts: h.timeouts,
        p50Us: h.p50Us,
        p95Us: h.p95Us,
      }))
      .sort((x, y) => x.hookId.localeCompare(y.hookId)),
  );
}

describe('hookHealthSeries', () => {
  const start = Date.UTC(2026, 9, 1, 5, 0, 0);
  const since = start + 25 * 60_000; // mid-hour: the first bucket starts at the hour since falls in
  const until = start + 30 * HOUR_MS + 40 * 60_000;
  const now = until + 2 * HOUR_MS;

  it('answers every bucket in one read with what one hookHealth per bucket answers: counts exact, the same percentiles', () => {
    const { ledger } = tempLedger();
    recordHours(ledger, start, 32);
    const stepMs = seriesStep(since, until, 8);
    expect(stepMs).toBe(4 * HOUR_MS);
    // Before any rollup exists (all live), then with the closed hours rolled up by the first call.
    for (const pass of ['live', 'rolled up']) {
      const series = hookHealthSeries(ledger, { since, until, stepMs, now });
      expect(series.buckets.map((b) => b.start)).toEqual(Array.from({ length: 8 }, (_, k) => start + k * stepMs));
      expect(series.buckets.at(-1)!.end).toBe(until);
      expect(
        series.buckets.map((b) => b.hooks),
        pass,
      ).toEqual(perBucket(ledger, series, now));
      expect(series.buckets[0]!.hooks.map((h) => h.hookId)).toEqual(['a', 'b']); // the skipped hook has no runs
      const runs = series.buckets.reduce((n, b) => n + b.hooks.reduce((m, h) => m + h.runs, 0), 0);
      // 30 whole hours (the first in full, since it starts at the hour since falls in), then 40 minutes: 15 invocations of 2 runs.
      expect(runs).toBe(2 * 20 * 30 + 2 * 15);
    }
    expect(ledger.sqlite.prepare('SELECT count(*) FROM health_rollup_hours').pluck().get()).toBeGreaterThan(20);
    // Percentiles for some hooks only: theirs unchanged, the others' null, every count unchanged.
    const all = hookHealthSeries(ledger, { since, until, stepMs, now });
    const some = hookHealthSeries(ledger, { since, until, stepMs, now, percentilesOf: ['a'] });
    expect(some.buckets.map((b) => b.hooks)).toEqual(
      all.buckets.map((b) => b.hooks.map((h) => (h.hookId === 'a' ? h : { ...h, p50Us: null, p95Us: null }))),
    );
  });

  it('one hook only; empty buckets are listed; a window with nothing in it; bad windows refused in one line', () => {
    const { ledger } = tempLedger();
    recordHours(ledger, start, 6);
    const stepMs = HOUR_MS;
    const series = hookHealthSeries(ledger, { since: start - 3 * HOUR_MS, until: start + 9 * HOUR_MS, stepMs, now, hookId: 'b' });
    expect(series.buckets).toHaveLength(12);
    expect(series.buckets.map((b) => b.hooks.length)).toEqual([0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    expect(series.buckets.flatMap((b) => b.hooks.map((h) => h.hookId))).toEqual(Array(6).fill('b'));
    expect(series.buckets.map((b) => b.hooks)).toEqual(perBucket(ledger, series, now, 'b'));
    expect(hookHealthSeries(ledger, { since: 0, until: 2 * HOUR_MS, stepMs, now }).buckets.every((b) => b.hooks.length === 0)).toBe(true);
    expect(() => hookHealthSeries(ledger, { since: 10, until: 10, stepMs, now })).toThrow(/window is empty/);
    expect(() => hookHealthSeries(ledger, { since: 0, until: 10, stepMs: 1000, now })).toThrow(/not a whole number of hours/);
  });

  it('a ledger opened read-only: the same answer, all live, nothing written', () => {
    const { ledger, path } = tempLedger();
    recordHours(ledger, start, 8);
    const stepMs = 2 * HOUR_MS;
    const window = { since: start, until: start + 8 * HOUR_MS, stepMs, now };
    void ledger.close();
    const reader = SqliteLedger.open({ path, readonly: true });
    try {
      const series = hookHealthSeries(reader, window);
      expect(reader.sqlite.prepare('SELECT count(*) FROM health_rollup_hours').pluck().get()).toBe(0);
      const writable = SqliteLedger.open({ path });
      try {
        expect(hookHealthSeries(writable, window)).toEqual(series);
      } finally {
        void writable.close();
      }
      expect(series.buckets.every((b) => b.hooks.length === 2)).toBe(true);
    } finally {
      void reader.close();
    }
  });
});
