import { describe, expect, it } from 'vitest';
import { deny } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { bash, setup, sleep, waitFor } from '../helpers.js';

describe('background hooks', () => {
  it('are recorded pending when the decision returns, then completed; the caller does not wait', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: unknown[] = [];
    const { runner, ledger } = setup([
      {
        id: 'metrics',
        point: 'post_tool_use',
        mode: 'background',
        run: async (inv) => {
          seen.push(inv.toolName);
          await gate;
        },
      },
      { id: 'fg', point: 'post_tool_use', run: () => undefined },
    ]);
    const report = await runner.run({ point: 'post_tool_use', toolName: 'Bash', toolInput: {}, toolResponse: { stdout: '' } });
    expect(report.outcomes.map((o) => [o.hookId, o.status])).toEqual([
      ['fg', 'completed'],
      ['metrics', 'pending'],
    ]);
    expect(explain(ledger, report.invocationId).outcomes.find((o) => o.hookId === 'metrics')?.status).toBe('pending');
    release();
    await waitFor(() => explain(ledger, report.invocationId).outcomes.find((o) => o.hookId === 'metrics')?.status === 'completed');
    const stored = explain(ledger, report.invocationId).outcomes.find((o) => o.hookId === 'metrics')!;
    expect(stored.executionOrder).toBe(1);
    expect(stored.durationUs).toBeGreaterThan(0);
    expect(seen).toEqual(['Bash']);
  });

  it('are not started after a deny and are recorded skipped naming the denier', async () => {
    let started = false;
    const { runner } = setup([
      { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => void (started = true) },
      { id: 'guard', point: 'pre_tool_use', capability: 'guardrail', run: () => deny('no') },
    ]);
    const report = await runner.run(bash('rm -rf /'));
    await sleep(20);
    expect(started).toBe(false);
    expect(report.outcomes.find((o) => o.hookId === 'bg')).toMatchObject({ status: 'skipped', skipReason: 'denied', skippedBy: 'guard' });
  });

  it('run at most backgroundConcurrency at once, the rest queued; close() drains them', async () => {
    let running = 0;
    let peak = 0;
    const { runner, ledger } = setup(
      [
        {
          id: 'slow-bg',
          point: 'post_tool_use',
          mode: 'background',
          run: async () => {
            running++;
            peak = Math.max(peak, running);
            await sleep(20);
            running--;
          },
        },
      ],
      { backgroundConcurrency: 2 },
    );
    const reports = [];
    for (let i = 0; i < 6; i++) reports.push(await runner.run({ point: 'post_tool_use', toolName: 'Read' }));
    await runner.close({ deadlineMs: 5000 });
    expect(peak).toBe(2);
    for (const r of reports) expect(explain(ledger, r.invocationId).outcomes[0]!.status).toBe('completed');
  });

  it('close() with a deadline records running hooks as timed out and queued ones as skipped (shutdown)', async () => {
    const { runner, ledger } = setup(
      [
        {
          id: 'forever',
          point: 'post_tool_use',
          mode: 'background',
          timeoutMs: 60_000,
          run: (_i, ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => r(undefined))),
        },
      ],
      { backgroundConcurrency: 1 },
    );
    const first = await runner.run({ point: 'post_tool_use', toolName: 'Read' });
    const second = await runner.run({ point: 'post_tool_use', toolName: 'Read' });
    await runner.close({ deadlineMs: 50 });
    expect(explain(ledger, first.invocationId).outcomes[0]).toMatchObject({ status: 'timed_out' });
    expect(explain(ledger, second.invocationId).outcomes[0]).toMatchObject({ status: 'skipped', skipReason: 'shutdown' });
  });

  it("a background hook's deny is recorded as observe_only_violation and changes nothing", async () => {
    const { runner, ledger } = setup([{ id: 'bg', point: 'post_tool_use', mode: 'background', run: () => deny('nope') }]);
    const report = await runner.run({ point: 'post_tool_use', toolName: 'Read' });
    await runner.close();
    expect(report.decision).toBe('none');
    expect(explain(ledger, report.invocationId).outcomes[0]).toMatchObject({
      status: 'completed',
      decision: 'deny',
      failureReason: 'observe_only_violation',
    });
  });
});
