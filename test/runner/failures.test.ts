import { describe, expect, it } from 'vitest';
import { allow } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { bash, setup, sleepUnlessAborted } from '../helpers.js';

describe('timeouts', () => {
  it('fail-closed: a timeout is recorded with its limit and becomes the decisive deny with reason code timeout', async () => {
    let aborted = false;
    const { runner, ledger } = setup([
      {
        id: 'slow-guard',
        point: 'pre_tool_use',
        capability: 'guardrail',
        timeoutMs: 150,
        run: async (_inv, ctx) => {
          ctx.signal.addEventListener('abort', () => (aborted = true));
          await sleepUnlessAborted(5000, ctx.signal);
          return allow();
        },
      },
      { id: 'after', point: 'pre_tool_use', priority: 200, run: () => undefined },
    ]);
    const report = await runner.run(bash('ls'));
    expect(aborted).toBe(true);
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'slow-guard', reasonCode: 'timeout' });
    const outcome = report.outcomes[0]!;
    expect(outcome).toMatchObject({ status: 'timed_out', failureReason: 'timeout', timeoutMs: 150, decisive: true });
    expect(outcome.failureDetail).toContain('150 ms');
    expect(outcome.durationUs).toBeGreaterThanOrEqual(140_000);
    expect(outcome.durationUs).toBeLessThan(1_000_000);
    expect(report.outcomes[1]).toMatchObject({ status: 'skipped', skippedBy: 'slow-guard' });
    expect(explain(ledger, report.invocationId).decisive).toMatchObject({ hookId: 'slow-guard', status: 'timed_out' });
  });

  it('fail-open: a timed-out hook is recorded and the pass goes on', async () => {
    const { runner } = setup([
      { id: 'slow', point: 'pre_tool_use', capability: 'guardrail', onFailure: 'allow', timeoutMs: 50, run: () => new Promise(() => {}) },
      { id: 'next', point: 'pre_tool_use', priority: 200, capability: 'guardrail', run: () => allow('ok') },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'allow', decisiveHookId: 'next' });
    expect(report.outcomes[0]).toMatchObject({ status: 'timed_out', failureReason: 'timeout', decisive: false });
  });

  it('observers fail open by default, guardrails fail closed by default', async () => {
    const { runner } = setup([
      { id: 'obs', point: 'pre_tool_use', priority: 1, timeoutMs: 30, run: () => new Promise(() => {}) },
      { id: 'guard', point: 'pre_tool_use', priority: 2, capability: 'guardrail', timeoutMs: 30, run: () => new Promise(() => {}) },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes.map((o) => [o.hookId, o.status, o.decisive])).toEqual([
      ['obs', 'timed_out', false],
      ['guard', 'timed_out', true],
    ]);
    expect(report.reasonCode).toBe('timeout');
  });
});

describe('hook context', () => {
  it('carries the documented fields only, and a signal that is live for a synchronous hook too', async () => {
    const seen: { keys: string[]; signal: AbortSignal; hookId: string; timeoutMs: number; replay: boolean }[] = [];
    const { runner } = setup([
      {
        id: 'looks',
        point: 'pre_tool_use',
        capability: 'guardrail',
        timeoutMs: 1234,
        run: (_inv, ctx) => {
          // Spreading or logging the context must not expose the runner's internals.
          seen.push({
            keys: Object.keys(ctx).sort(),
            signal: ctx.signal,
            hookId: ctx.hookId,
            timeoutMs: ctx.timeoutMs,
            replay: ctx.replay,
          });
          return allow();
        },
      },
    ]);
    await runner.run(bash('ls'));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.keys).toEqual(['hookId', 'invocationId', 'replay', 'timeoutMs']);
    expect(seen[0]).toMatchObject({ hookId: 'looks', timeoutMs: 1234, replay: false });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
    expect(seen[0]!.signal.aborted).toBe(false);
  });
});

describe('hook failures', () => {
  it('a throwing guardrail fails closed with reason code runtime_error and the message recorded', async () => {
    const { runner } = setup([
      {
        id: 'broken',
        point: 'pre_tool_use',
        capability: 'guardrail',
        run: () => {
          throw new Error('config file missing');
        },
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'runtime_error', decisiveHookId: 'broken' });
    expect(report.outcomes[0]).toMatchObject({ status: 'failed', failureReason: 'execution_failed' });
    expect(report.outcomes[0]!.failureDetail).toContain('config file missing');
    expect(report.message).toContain('fails closed');
  });

  it('non-Error throws and late rejections are recorded, not crashes', async () => {
    const { runner } = setup([
      {
        id: 'throws-string',
        point: 'pre_tool_use',
        priority: 1,
        run: () => {
          throw 'just a string';
        },
      },
      {
        id: 'throws-object',
        point: 'pre_tool_use',
        priority: 2,
        run: async () => {
          throw { code: 42 };
        },
      },
      {
        id: 'throws-undefined',
        point: 'pre_tool_use',
        priority: 3,
        run: () => {
          throw undefined;
        },
      },
      {
        id: 'rejects-late',
        point: 'pre_tool_use',
        priority: 4,
        timeoutMs: 20,
        run: () => new Promise((_r, reject) => setTimeout(() => reject(new Error('late')), 60)),
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes.map((o) => [o.status, o.failureReason])).toEqual([
      ['failed', 'execution_failed'],
      ['failed', 'execution_failed'],
      ['failed', 'execution_failed'],
      ['timed_out', 'timeout'],
    ]);
    expect(report.outcomes[0]!.failureDetail).toContain('just a string');
    expect(report.outcomes[1]!.failureDetail).toContain('"code":42');
    await new Promise((r) => setTimeout(r, 80));
  });

  it('an invalid result is the failure invalid_result with the validation issues', async () => {
    const { runner } = setup([
      {
        id: 'typo',
        point: 'pre_tool_use',
        priority: 1,
        capability: 'guardrail',
        onFailure: 'allow',
        run: () => ({ decision: 'deny', reason: 'x' }) as never,
      },
      { id: 'garbage', point: 'pre_tool_use', priority: 2, capability: 'guardrail', onFailure: 'allow', run: () => 42 as never },
      {
        id: 'bad-code',
        point: 'pre_tool_use',
        priority: 3,
        capability: 'guardrail',
        run: () => ({ decision: 'deny', message: 'm', reasonCode: 'because' }) as never,
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes.map((o) => o.failureReason)).toEqual(['invalid_result', 'invalid_result', 'invalid_result']);
    expect(report.outcomes[0]!.failureDetail).toMatch(/message|reason/);
    expect(report.outcomes[1]!.failureDetail).toContain('number 42');
    expect(report.outcomes[2]!.failureDetail).toContain('reasonCode');
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'bad-code', reasonCode: 'runtime_error' });
  });

  it('a cyclic payload is stored as a description instead of failing the commit', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const { runner, ledger } = setup([
      { id: 'cyclic', point: 'pre_tool_use', capability: 'guardrail', run: () => ({ decision: 'deny', message: 'no', payload: cyclic }) },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.decision).toBe('deny');
    expect(explain(ledger, report.invocationId).decisive?.payload).toMatchObject({ unserializable: expect.stringContaining('circular') });
  });
});
