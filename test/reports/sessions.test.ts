import { describe, expect, it } from 'vitest';
import { listSessions, sessionSummary, sessionTimeline } from '../../src/ledger/queries/sessions.js';
import { defineHooks } from '../../src/domain/hooks.js';
import { createRunner } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';
import { buildLedger, sessionEvents, type Recorded } from './fixture.js';

const of = (recorded: Recorded[], session: string) => recorded.filter((r) => r.input.sessionId === session);

describe('sessions', () => {
  it('lists sessions most recently active first with first/last seen, invocations, denials, failures and timeouts', async () => {
    const { ledger, recorded } = await buildLedger();
    const { rows, nextCursor } = listSessions(ledger, {}, { limit: 50 });
    expect(nextCursor).toBeNull();
    expect(rows.map((s) => s.sessionId)).toEqual(['s-4', 's-1', 's-2', 's-3']);
    for (const s of rows) {
      const mine = of(recorded, s.sessionId);
      const outcomes = mine.flatMap((r) => r.report.outcomes);
      expect(s).toEqual({
        sessionId: s.sessionId,
        firstSeen: Math.min(...mine.map((r) => r.report.startedAt)),
        lastSeen: Math.max(...mine.map((r) => r.report.startedAt)),
        invocations: mine.length,
        denials: mine.filter((r) => r.report.decision === 'deny').length,
        asks: mine.filter((r) => r.report.decision === 'ask').length,
        modified: mine.filter((r) => r.report.modifiedInput !== null).length,
        failures: outcomes.filter((o) => o.status === 'failed').length,
        timeouts: outcomes.filter((o) => o.status === 'timed_out').length,
        agents: [...new Set(mine.map((r) => r.input.agent).filter((a) => typeof a === 'string'))].sort(),
      });
    }
    expect(rows.find((s) => s.sessionId === 's-1')!.failures).toBeGreaterThan(0);
    expect(rows.find((s) => s.sessionId === 's-4')!.timeouts).toBe(1);
  });

  it('pages sessions with a cursor, and counts only what the filter selects', async () => {
    const { ledger, recorded } = await buildLedger();
    const bash = listSessions(ledger, { toolName: 'Bash', decision: 'deny' }, { limit: 10 });
    for (const s of bash.rows) {
      expect(s.invocations).toBe(
        of(recorded, s.sessionId).filter((r) => r.input.toolName === 'Bash' && r.report.decision === 'deny').length,
      );
    }
    expect(bash.rows.length).toBe(3);
    const first = listSessions(ledger, {}, { limit: 3 });
    expect(first.rows.map((s) => s.sessionId)).toEqual(['s-4', 's-1', 's-2']);
    // A listed session becoming active again does not reappear on the next page.
    const runner = createRunner({ hookSet: recorded[0]!.hookSet, ledger });
    for (const input of sessionEvents('s-1', 2)) await runner.run(input);
    await runner.close();
    const second = listSessions(ledger, {}, { limit: 3, cursor: first.nextCursor });
    expect(second.rows.map((s) => s.sessionId)).toEqual(['s-3']);
    expect(second.nextCursor).toBeNull();
  });

  it('a timeline is the session in recorded order, with decisions, decisive hooks and modified inputs marked', async () => {
    const { ledger, recorded } = await buildLedger();
    const mine = of(recorded, 's-2');
    const t = sessionTimeline(ledger, 's-2', { limit: 1000 });
    expect(t.nextCursor).toBeNull();
    expect(t.session.invocations).toBe(mine.length);
    // The order the runner recorded them (the sessions were interleaved, so ids are not contiguous).
    expect(t.events.map((e) => e.invocationId)).toEqual(mine.map((r) => r.report.invocationId));
    expect(t.events.map((e) => e.invocationId).some((id, i, a) => i > 0 && id !== a[i - 1]! + 1)).toBe(true);
    t.events.forEach((e, i) => {
      const r = mine[i]!.report;
      expect(e).toMatchObject({
        point: r.point,
        decision: r.decision,
        decisiveHookId: r.decisiveHookId,
        reasonCode: r.reasonCode,
        modified: r.modifiedInput !== null,
      });
      expect(e.hooks).toBe(r.outcomes.length);
    });
    const modified = t.events.find((e) => e.modified)!;
    expect(modified.input).toEqual({ command: 'ls' });
    expect(modified.modifiedInput).toEqual({ command: 'ls -a' });
    expect(modified.modifiedBy).toEqual(['rewrite']);
    expect(t.events.filter((e) => !e.modified).every((e) => e.modifiedBy.length === 0)).toBe(true);
    expect(t.events.some((e) => e.failures > 0)).toBe(true);
  });

  it('pages a timeline forward without gaps, and an unknown session is a clear not-found', async () => {
    const { ledger, recorded } = await buildLedger();
    const expected = of(recorded, 's-1').map((r) => r.report.invocationId);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page = sessionTimeline(ledger, 's-1', { limit: 5, cursor });
      seen.push(...page.events.map((e) => e.invocationId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(() => sessionTimeline(ledger, 'nope', { limit: 5 })).toThrow(/^no invocations for session "nope" in /);
    expect(sessionSummary(ledger, 'nope')).toBeNull();
  });
});

describe('sessions paging under concurrent writes', () => {
  it('never drops a session that became active after the first page, and never repeats one already listed', async () => {
    const { ledger } = tempLedger();
    const runner = createRunner({
      ledger,
      hookSet: defineHooks({ name: 'p', hooks: [{ id: 'watch', point: 'pre_tool_use', run: () => undefined }] }),
    });
    const event = (sessionId: string) => runner.run({ point: 'pre_tool_use', sessionId, toolName: 'Bash', toolInput: { command: 'ls' } });
    for (const s of ['S1', 'S2', 'S3', 'S4', 'S5']) await event(s);
    const first = listSessions(ledger, {}, { limit: 2 });
    expect(first.rows.map((s) => s.sessionId)).toEqual(['S5', 'S4']);
    await event('S2'); // not listed yet: must still come
    await event('S5'); // listed already: must not come again
    const second = listSessions(ledger, {}, { limit: 2, cursor: first.nextCursor });
    const third = second.nextCursor ? listSessions(ledger, {}, { limit: 2, cursor: second.nextCursor }) : { rows: [], nextCursor: null };
    expect([...second.rows, ...third.rows].map((s) => s.sessionId)).toEqual(['S3', 'S2', 'S1']);
    await runner.close();
  });
});
