import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import type { Outcome } from '../../src/domain/outcomes.js';
import { hookHealth } from '../../src/ledger/queries/health.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { tempLedger } from '../helpers.js';
import { buildLedger, outcome } from './fixture.js';

const DAY = 86_400_000;

describe('hook health', () => {
  it('percentiles, counts and skips on known durations, over the window only', () => {
    const { ledger } = tempLedger();
    const writer = new LedgerWriter(ledger);
    const hookSet = defineHooks({ name: 'known', hooks: [{ id: 'timed', point: 'pre_tool_use', run: () => undefined }] });
    const setId = writer.hookSetId(hookSet);
    const now = Date.UTC(2026, 10, 1);
    const record = (at: number, outcomes: Outcome[]) => {
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
    };
    // Durations 1..100 ms, shuffled, inside the window; outliers outside it must not count.
    const durations = Array.from({ length: 100 }, (_, i) => (i + 1) * 1000).sort(() => Math.random() - 0.5);
    durations.forEach((d, i) => {
      const at = now - DAY + i;
      const fields: Partial<Outcome> =
        i < 3
          ? { status: 'failed', decision: null, failureReason: 'execution_failed' }
          : i < 5
            ? { status: 'timed_out', decision: null, failureReason: 'timeout' }
            : i < 15
              ? { decision: 'deny', decisive: true, reasonCode: 'policy_violation' }
              : i < 18
                ? { decision: 'allow' }
                : i < 20
                  ? { decision: 'modify' }
                  : i < 21
                    ? { decision: 'ask' }
                    : {};
      record(at, [
        outcome('timed', { startedAt: at, durationUs: d, ...fields }),
        outcome('other', { startedAt: at, durationUs: 5 }),
        outcome('late', { status: 'skipped', decision: null, skipReason: 'pass_ended', skippedBy: 'timed' }),
      ]);
    });
    record(now - 40 * DAY, [
      outcome('timed', { startedAt: now - 40 * DAY, durationUs: 9_000_000 }),
      outcome('late', { status: 'skipped', decision: null, skipReason: 'pass_ended' }),
    ]);
    record(now + 1, [outcome('timed', { startedAt: now + 1, durationUs: 9_000_000 })]);
    record(now - DAY + 500, [
      outcome('obs', {
        capability: 'observe',
        decision: 'deny',
        failureReason: 'observe_only_violation',
        startedAt: now - DAY + 500,
        durationUs: 7,
      }),
    ]);

    const report = hookHealth(ledger, { since: now - 30 * DAY, until: now });
    const timed = report.hooks.find((h) => h.hookId === 'timed')!;
    expect(timed).toEqual({
      hookId: 'timed',
      runs: 100,
      allows: 3,
      denials: 10,
      asks: 1,
      modifies: 2,
      decisive: 10,
      failures: 3,
      timeouts: 2,
      observeOnlyViolations: 0,
      skips: 0,
      pending: 0,
      interrupted: 0,
      p50Us: 50_000,
      p95Us: 95_000,
      maxUs: 100_000,
      failureRate: 0.05,
    });
    expect(report.hooks.find((h) => h.hookId === 'late')).toMatchObject({ runs: 0, skips: 100, p50Us: null, p95Us: null, maxUs: null });
    expect(report.hooks.find((h) => h.hookId === 'other')).toMatchObject({ runs: 100, p50Us: 5, p95Us: 5, maxUs: 5 });
    expect(report.hooks.find((h) => h.hookId === 'obs')).toMatchObject({ runs: 1, denials: 0, observeOnlyViolations: 1 });
    // Worst first: the failing hook leads.
    expect(report.hooks[0]!.hookId).toBe('timed');
    // One hook only; and a window with the outliers.
    expect(hookHealth(ledger, { since: now - 30 * DAY, until: now, hookId: 'timed' }).hooks.map((h) => h.hookId)).toEqual(['timed']);
    const wide = hookHealth(ledger, { since: now - 50 * DAY, until: now + 10, hookId: 'timed' }).hooks[0]!;
    expect(wide).toMatchObject({ runs: 102, maxUs: 9_000_000, p50Us: 51_000 });
    expect(() => hookHealth(ledger, { since: now, until: now })).toThrow(/the window is empty/);
  });

  it('matches the outcomes of real invocations', async () => {
    const { ledger, recorded } = await buildLedger();
    const report = hookHealth(ledger, { since: 0, until: Date.now() + 1000 });
    const outcomes = recorded.flatMap((r) => r.report.outcomes);
    for (const h of report.hooks) {
      const mine = outcomes.filter((o) => o.hookId === h.hookId);
      const ran = mine.filter((o) => o.status !== 'skipped');
      expect(h.runs, h.hookId).toBe(ran.length);
      expect(h.skips, h.hookId).toBe(mine.length - ran.length);
      expect(h.failures, h.hookId).toBe(mine.filter((o) => o.status === 'failed').length);
      expect(h.timeouts, h.hookId).toBe(mine.filter((o) => o.status === 'timed_out').length);
      expect(h.maxUs, h.hookId).toBe(Math.max(...ran.map((o) => o.durationUs!)));
    }
    expect(report.hooks.find((h) => h.hookId === 'watch')!.observeOnlyViolations).toBeGreaterThan(0);
    expect(report.hooks.find((h) => h.hookId === 'flaky')).toMatchObject({ failures: expect.any(Number), timeouts: 1 });
  });
});
