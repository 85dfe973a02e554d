import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { openLedger, type Ledger } from '../../src/ledger/open.js';
import { pruneLedger } from '../../src/ledger/prune.js';
import { listSessions, sessionSummary, type SessionSummary } from '../../src/ledger/queries/sessions.js';
import { createRunner } from '../../src/runner/runner.js';
import { sleep } from '../helpers.js';
import { buildLedger, sessionEvents } from './fixture.js';

/** Every session as the stored summaries give it, and as aggregating its invocations gives it. */
function bothWays(ledger: Ledger): { stored: SessionSummary[]; aggregated: SessionSummary[] } {
  const stored = listSessions(ledger, {}, { limit: 1000 }).rows;
  const ids = ledger.sqlite.prepare('SELECT DISTINCT session_id FROM invocations WHERE session_id IS NOT NULL').pluck().all() as string[];
  const aggregated = ids.map((id) => sessionSummary(ledger, id)!);
  return { stored: [...stored].sort(bySession), aggregated: aggregated.sort(bySession) };
}
const bySession = (a: SessionSummary, b: SessionSummary) => a.sessionId.localeCompare(b.sessionId);

describe('stored session summaries', () => {
  it('equal the aggregated totals through runs, background outcomes, prune and edits', async () => {
    const { ledger, path, recorded } = await buildLedger();
    let { stored, aggregated } = bothWays(ledger);
    expect(stored).toEqual(aggregated);
    expect(stored.some((s) => s.failures > 0)).toBe(true);
    expect(stored.some((s) => s.timeouts > 0)).toBe(true);

    // Background hooks that fail and time out after the decision was committed.
    const background = defineHooks({
      name: 'late',
      hooks: [
        { id: 'bg-fail', point: 'pre_tool_use', mode: 'background', run: () => Promise.reject(new Error('late failure')) },
        {
          id: 'bg-slow',
          point: 'pre_tool_use',
          mode: 'background',
          timeoutMs: 20,
          run: async () => {
            await sleep(500);
          },
        },
      ],
    });
    const runner = createRunner({ hookSet: background, ledger });
    for (const input of sessionEvents('s-bg', 4)) await runner.run(input);
    await runner.close({ deadlineMs: 5_000 });
    ({ stored, aggregated } = bothWays(ledger));
    expect(stored).toEqual(aggregated);
    const late = stored.find((s) => s.sessionId === 's-bg')!;
    expect(late.failures).toBeGreaterThan(0);
    expect(late.timeouts).toBe(late.failures);

    // An edit made with plain SQL that moves an invocation to another session.
    ledger.sqlite
      .prepare(`UPDATE invocations SET session_id = 's-moved' WHERE id = (SELECT max(id) FROM invocations WHERE session_id = 's-1')`)
      .run();
    ({ stored, aggregated } = bothWays(ledger));
    expect(stored).toEqual(aggregated);
    expect(stored.find((s) => s.sessionId === 's-moved')!.invocations).toBe(1);

    // Prune removes the oldest invocations; the sessions it touched are recomputed on the next list.
    const starts = recorded.map((r) => r.report.startedAt).sort((a, b) => a - b);
    await pruneLedger(ledger, { before: starts[Math.floor(starts.length / 2)]!, pauseMs: 0 });
    ({ stored, aggregated } = bothWays(ledger));
    expect(stored).toEqual(aggregated);
    ledger.close();

    // A read-only open of a ledger with stale summaries aggregates instead.
    const writable = openLedger({ path });
    writable.sqlite.prepare(`DELETE FROM invocations WHERE id = (SELECT max(id) FROM invocations WHERE session_id = 's-2')`).run();
    writable.close();
    const readonly = openLedger({ path, readonly: true });
    ({ stored, aggregated } = bothWays(readonly));
    expect(stored).toEqual(aggregated);
    readonly.close();
  });

  it('the first page from the summaries is the walk’s first page, with the same cursor', async () => {
    const { ledger } = await buildLedger();
    for (const limit of [1, 2, 3, 10]) {
      const stored = listSessions(ledger, {}, { limit });
      // A filter that selects everything but is not empty takes the walk.
      const walked = listSessions(ledger, { since: 0 }, { limit });
      expect(stored.rows).toEqual(walked.rows);
      expect(stored.nextCursor).toBe(walked.nextCursor);
      const offset = listSessions(ledger, {}, { limit, offset: 1 });
      expect(offset.rows).toEqual(listSessions(ledger, { since: 0 }, { limit, offset: 1 }).rows);
    }
    // Paging through every session from the first (stored) page lists each once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = listSessions(ledger, {}, { limit: 1, cursor });
      seen.push(...page.rows.map((r) => r.sessionId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(listSessions(ledger, { since: 0 }, { limit: 100 }).rows.map((r) => r.sessionId));
    ledger.close();
  });
});
