import { describe, expect, it } from 'vitest';
import { createRunner } from '../../src/runner/runner.js';
import { groupDenials, listDenials, type DenialRow } from '../../src/ledger/queries/denials.js';
import type { InvocationFilter } from '../../src/ledger/queries/filters.js';
import { buildLedger, sessionEvents, type Recorded } from './fixture.js';

const denied = (recorded: Recorded[]) => recorded.filter((r) => r.report.decision === 'deny');
const ids = (rows: { invocationId: number }[]) => rows.map((r) => r.invocationId);
const newestFirst = (recorded: Recorded[]) => recorded.map((r) => r.report.invocationId).sort((a, b) => b - a);

describe('denials', () => {
  it('lists every denial newest first, naming the decisive hook, its reason and message, and the hook set', async () => {
    const { ledger, recorded } = await buildLedger();
    const expected = denied(recorded);
    expect(expected.length).toBeGreaterThan(20);
    const { rows, nextCursor } = listDenials(ledger, {}, { limit: 1000 });
    expect(nextCursor).toBeNull();
    expect(ids(rows)).toEqual(newestFirst(expected));
    for (const row of rows) {
      const r = expected.find((e) => e.report.invocationId === row.invocationId)!;
      expect(row).toMatchObject<Partial<DenialRow>>({
        sessionId: r.input.sessionId ?? null,
        point: r.report.point,
        toolName: r.input.toolName ?? null,
        decisiveHookId: r.report.decisiveHookId,
        reasonCode: r.report.reasonCode,
        message: r.report.message,
        startedAt: r.report.startedAt,
      });
      expect(row.hookSet).toMatchObject({ name: 'policy', version: r.hookSet.version, fingerprint: r.hookSet.fingerprint });
    }
    // Every kind of denial is present: guardrail denies, a fail-closed failure and a timeout.
    expect(new Set(rows.map((r) => r.reasonCode))).toEqual(
      new Set(['safety_violation', 'policy_violation', 'schema_violation', 'runtime_error', 'timeout']),
    );
  });

  it('each filter selects exactly the matching denials', async () => {
    const { ledger, recorded, sets } = await buildLedger();
    const all = denied(recorded);
    const boundary = all[Math.floor(all.length / 2)]!.report.startedAt;
    const cases: [InvocationFilter, (r: Recorded) => boolean][] = [
      [{ sessionId: 's-2' }, (r) => r.input.sessionId === 's-2'],
      [{ toolName: 'Bash' }, (r) => r.input.toolName === 'Bash'],
      [{ toolName: 'Read' }, (r) => r.input.toolName === 'Read'],
      [{ hookId: 'no-rm' }, (r) => r.report.decisiveHookId === 'no-rm'],
      [{ hookId: 'flaky' }, (r) => r.report.decisiveHookId === 'flaky'],
      [{ reasonCode: 'policy_violation' }, (r) => r.report.reasonCode === 'policy_violation'],
      [{ reasonCode: 'runtime_error' }, (r) => r.report.reasonCode === 'runtime_error'],
      [{ point: 'user_prompt_submit' }, (r) => r.report.point === 'user_prompt_submit'],
      [{ hookSet: 'policy' }, () => true],
      [{ hookSet: sets[1]!.fingerprint }, (r) => r.hookSet === sets[1]],
      [{ hookSet: sets[0]!.fingerprint.slice(0, 8) }, (r) => r.hookSet === sets[0]],
      [{ hookSet: sets[0]!.fingerprint.slice(0, 8).toUpperCase() }, (r) => r.hookSet === sets[0]],
      [{ hookSet: 'no-such-set' }, () => false],
      [{ since: boundary }, (r) => r.report.startedAt >= boundary],
      [{ until: boundary }, (r) => r.report.startedAt < boundary],
      [{ since: boundary, until: boundary + 1 }, (r) => r.report.startedAt === boundary],
      [
        { sessionId: 's-1', toolName: 'Bash', reasonCode: 'safety_violation' },
        (r) => r.input.sessionId === 's-1' && r.input.toolName === 'Bash' && r.report.reasonCode === 'safety_violation',
      ],
      [
        { decision: 'deny', point: 'pre_tool_use', since: boundary },
        (r) => r.report.point === 'pre_tool_use' && r.report.startedAt >= boundary,
      ],
    ];
    for (const [filter, match] of cases) {
      const expected = newestFirst(all.filter(match));
      expect(ids(listDenials(ledger, filter, { limit: 1000 }).rows), JSON.stringify(filter)).toEqual(expected);
    }
    // Sanity: the cases are not vacuous.
    expect(all.filter((r) => r.input.toolName === 'Read').length).toBeGreaterThan(0);
    expect(all.filter((r) => r.hookSet === sets[1]).length).toBeGreaterThan(0);
  });

  it('groups by hook, tool, reason, session and day, largest first, over the filter', async () => {
    const { ledger, recorded } = await buildLedger();
    const all = denied(recorded);
    const count = (key: (r: Recorded) => string | null, from = all) => {
      const m = new Map<string | null, number>();
      for (const r of from) m.set(key(r), (m.get(key(r)) ?? 0) + 1);
      return m;
    };
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const keys = {
      hook: (r: Recorded) => r.report.decisiveHookId,
      tool: (r: Recorded) => r.input.toolName ?? null,
      reason: (r: Recorded) => r.report.reasonCode,
      session: (r: Recorded) => r.input.sessionId ?? null,
      day: (r: Recorded) => day(r.report.startedAt),
    } as const;
    for (const [by, key] of Object.entries(keys) as [keyof typeof keys, (r: Recorded) => string | null][]) {
      const g = groupDenials(ledger, {}, by);
      expect(g.total).toBe(all.length);
      expect(new Map(g.groups.map((x) => [x.key, x.count]))).toEqual(count(key));
      if (by !== 'day') {
        const counts = g.groups.map((x) => x.count);
        expect(counts).toEqual([...counts].sort((a, b) => b - a));
      }
    }
    const bash = groupDenials(ledger, { toolName: 'Bash' }, 'hook');
    expect(new Map(bash.groups.map((x) => [x.key, x.count]))).toEqual(
      count(
        keys.hook,
        all.filter((r) => r.input.toolName === 'Bash'),
      ),
    );
    const top = groupDenials(ledger, {}, 'session', { limit: 2 });
    expect(top.groups).toHaveLength(2);
    expect(top.totalGroups).toBe(4);
  });

  it('keyset paging never repeats or drops a row when invocations arrive between pages', async () => {
    const { ledger, recorded, sets } = await buildLedger();
    const before = newestFirst(denied(recorded));
    const runner = createRunner({ hookSet: sets[0]!, ledger });
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = listDenials(ledger, { sessionId: undefined }, { limit: 4, cursor });
      seen.push(...ids(page.rows));
      cursor = page.nextCursor;
      pages += 1;
      // New denials (and other invocations) land between every two pages.
      for (const input of sessionEvents('s-live', 4)) await runner.run(input);
    } while (cursor !== null);
    await runner.close();
    expect(pages).toBe(Math.ceil(before.length / 4));
    expect(seen).toEqual(before);
    expect(listDenials(ledger, {}, { limit: 1000 }).rows.length).toBeGreaterThan(before.length);
  });

  it('offset paging works but is documented as unstable; bad pages are one clear error', async () => {
    const { ledger, recorded } = await buildLedger();
    const all = newestFirst(denied(recorded));
    expect(ids(listDenials(ledger, {}, { limit: 3, offset: 2 }).rows)).toEqual(all.slice(2, 5));
    expect(() => listDenials(ledger, {}, { limit: 0 })).toThrow(/^limit: expected a whole number from 1 to 10000, got 0$/);
    expect(() => listDenials(ledger, {}, { limit: 5, cursor: 'garbage' })).toThrow(
      /cursor: "garbage" is not a cursor from a previous page/,
    );
    const sessionsCursor = Buffer.from('sessions:5').toString('base64url');
    expect(() => listDenials(ledger, {}, { limit: 5, cursor: sessionsCursor })).toThrow(
      /not a cursor from a previous page of this listing/,
    );
    expect(() => listDenials(ledger, { decision: 'allow' }, { limit: 5 })).toThrow(/denials are invocations decided "deny"/);
  });
});
