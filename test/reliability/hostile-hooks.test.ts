import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HookDefinition } from '../../src/domain/hooks.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { closeIdleWorkers } from '../../src/runtimes/worker.js';
import { bash, setup, sleep, tempDir } from '../helpers.js';
import { eventually, fixture, groupGone, processGone } from '../runtimes/helpers.js';

afterAll(() => closeIdleWorkers());

/**
 * Records the longest gap between ticks of a 10 ms interval while `work` runs: if a hook
 * blocked the event loop, the gap would be as long as the block.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number; ticks: number }> {
  let last = Date.now();
  let stallMs = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
    ticks += 1;
  }, 10);
  try {
    const value = await work();
    stallMs = Math.max(stallMs, Date.now() - last);
    return { value, stallMs, ticks };
  } finally {
    clearInterval(timer);
  }
}

const observer = (id: string, run: HookDefinition['run'], extra: Partial<HookDefinition> = {}): HookDefinition => ({
  id,
  point: 'pre_tool_use',
  onFailure: 'allow',
  timeoutMs: 200,
  run,
  ...extra,
});

describe('hostile in-process hooks', () => {
  it('each is recorded with the right status, and the event loop keeps ticking throughout', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    let strayTicks = 0;
    const hostileMessage = new Error('x');
    Object.defineProperty(hostileMessage, 'message', {
      get: () => {
        throw new Error('gotcha');
      },
    });
    const { runner, ledger } = setup([
      observer(
        'throws-string',
        () => {
          throw 'just a string';
        },
        { priority: 1 },
      ),
      observer(
        'throws-number',
        () => {
          throw 42;
        },
        { priority: 2 },
      ),
      observer(
        'throws-null',
        () => {
          throw null;
        },
        { priority: 3 },
      ),
      observer(
        'throws-symbol',
        () => {
          throw Symbol('sym');
        },
        { priority: 4 },
      ),
      observer(
        'throws-unprintable',
        () => {
          throw {
            toJSON() {
              throw new Error('no json');
            },
            toString() {
              throw new Error('no string');
            },
          };
        },
        { priority: 5 },
      ),
      observer(
        'throws-hostile-error',
        () => {
          throw hostileMessage;
        },
        { priority: 6 },
      ),
      observer('rejects-late', () => new Promise((_r, reject) => setTimeout(() => reject(new Error('too late')), 400)), { priority: 7 }),
      observer('never-resolves', () => new Promise(() => {}), { priority: 8 }),
      observer(
        'ignores-abort',
        () =>
          new Promise(() => {
            // Keeps working after its timeout fired, as if the signal did not exist.
            const stray = setInterval(() => (strayTicks += 1), 5);
            setTimeout(() => clearInterval(stray), 600);
          }),
        { priority: 9 },
      ),
      observer('huge-result', () => ({ additionalContext: 'x'.repeat(2 * 1024 * 1024) }), { priority: 10 }),
      // 100,000 references to one small object: tiny in memory, 4 MB as JSON.
      observer('huge-payload', () => ({ decision: 'deny', message: 'm', payload: new Array(100_000).fill({ s: 'x'.repeat(30) }) }), {
        priority: 11,
      }),
      observer('cyclic-result', () => cyclic as never, { priority: 12 }),
      observer('cyclic-modify', () => ({ decision: 'modify', input: cyclic }), { priority: 13, capability: 'guardrail' }),
      observer('bigint-result', () => ({ decision: 'allow', message: 10n }) as never, { priority: 14 }),
      observer(
        'throwing-getter',
        () =>
          ({
            get decision(): string {
              throw new Error('getter says no');
            },
          }) as never,
        { priority: 15 },
      ),
      observer('fine', () => ({ decision: 'allow', message: 'still here' }), { priority: 16, capability: 'guardrail' }),
    ]);

    const t0 = Date.now();
    const { value: report, stallMs, ticks } = await longestStall(() => runner.run(bash('ls')));
    const elapsed = Date.now() - t0;
    const byId = Object.fromEntries(report.outcomes.map((o) => [o.hookId, o]));

    expect(byId['throws-string']).toMatchObject({
      status: 'failed',
      failureReason: 'execution_failed',
      failureDetail: 'threw: just a string',
    });
    expect(byId['throws-number']!.failureDetail).toContain('42');
    expect(byId['throws-null']!.failureDetail).toContain('null');
    expect(byId['throws-symbol']!.failureDetail).toContain('Symbol(sym)');
    expect(byId['throws-unprintable']).toMatchObject({ status: 'failed', failureDetail: expect.stringContaining('cannot be described') });
    expect(byId['throws-hostile-error']).toMatchObject({ status: 'failed', failureReason: 'execution_failed' });
    for (const id of ['rejects-late', 'never-resolves', 'ignores-abort']) {
      expect(byId[id]).toMatchObject({ status: 'timed_out', failureReason: 'timeout', timeoutMs: 200 });
      expect(byId[id]!.durationUs).toBeLessThan(400_000);
    }
    expect(byId['huge-result']).toMatchObject({
      status: 'failed',
      failureReason: 'invalid_result',
      failureDetail: expect.stringContaining('exceeds 1048576 bytes'),
    });
    expect(byId['huge-payload']).toMatchObject({ status: 'failed', failureReason: 'invalid_result' });
    expect(byId['cyclic-result']).toMatchObject({ status: 'failed', failureReason: 'invalid_result' });
    expect(byId['cyclic-modify']).toMatchObject({
      status: 'failed',
      failureReason: 'invalid_result',
      failureDetail: expect.stringMatching(/^input: .*not JSON-serialisable.*circular/),
    });
    expect(byId['bigint-result']).toMatchObject({ status: 'failed', failureReason: 'invalid_result' });
    expect(byId['throwing-getter']).toMatchObject({
      status: 'failed',
      failureReason: 'invalid_result',
      failureDetail: expect.stringContaining('getter says no'),
    });
    expect(report).toMatchObject({ decision: 'allow', decisiveHookId: 'fine' });

    // Three 200 ms timeouts in a row while the loop kept ticking. (The bounds leave room for a
    // busy CI machine; a hook that held the loop would stall it for the whole pass.)
    expect(elapsed).toBeLessThan(2000);
    expect(stallMs).toBeLessThan(Math.max(400, elapsed / 2));
    // At least one tick per 100 ms on average (10 ms timer; a loaded 2-core CI box was seen at 53 ms).
    expect(ticks).toBeGreaterThan(elapsed / 100);

    // Everything is in the ledger, and nothing there weighs megabytes.
    const stored = explain(ledger, report.invocationId);
    expect(stored.invocation).toMatchObject({ status: 'completed', decision: 'allow' });
    expect(stored.outcomes).toHaveLength(16);
    const biggest = ledger.sqlite
      .prepare(
        "SELECT max(length(coalesce(payload_json, '')) + length(coalesce(failure_detail, '')) + length(coalesce(additional_context, ''))) FROM outcomes",
      )
      .pluck()
      .get() as number;
    expect(biggest).toBeLessThan(10_000);

    // The runner answers the next invocation promptly while the stray work is still going.
    const quick = Date.now();
    const second = await runner.run({ point: 'stop' });
    expect(Date.now() - quick).toBeLessThan(100);
    expect(second.decision).toBe('none');
    await sleep(450); // let the late rejection fire: it must not surface as an unhandled rejection
    expect(strayTicks).toBeGreaterThan(0);
  });

  it('a hook that blocks the event loop is terminated at its timeout under worker isolation', async () => {
    const { runner, ledger } = setup([
      {
        id: 'spin',
        point: 'pre_tool_use',
        capability: 'guardrail',
        isolation: 'worker',
        timeoutMs: 1000,
        run: () => {
          for (;;) {
            // a synchronous loop: only terminating the thread stops it
          }
        },
      },
      {
        id: 'isolated-ok',
        point: 'stop',
        isolation: 'worker',
        capability: 'guardrail',
        run: (inv) => ({ decision: 'allow', message: `ok ${inv.point}` }),
      },
    ]);
    const { value: report, stallMs, ticks } = await longestStall(() => runner.run(bash('ls')));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'timeout', decisiveHookId: 'spin' });
    expect(report.outcomes[0]).toMatchObject({ status: 'timed_out', failureReason: 'timeout', timeoutMs: 1000, runtime: 'worker' });
    expect(report.outcomes[0]!.durationUs).toBeGreaterThanOrEqual(990_000);
    expect(report.outcomes[0]!.durationUs).toBeLessThan(5_000_000);
    // The thread spun for a whole second; the main loop never stopped for anything like that long
    // (the bound leaves room for a loaded CI machine, not for a blocked loop).
    expect(stallMs).toBeLessThan(900);
    expect(ticks).toBeGreaterThan(20);
    expect(explain(ledger, report.invocationId).invocation).toMatchObject({ status: 'completed', decision: 'deny' });

    // The terminated thread is not reused: a fresh worker answers the next invocation.
    const next = await runner.run({ point: 'stop' });
    expect(next).toMatchObject({ decision: 'allow', message: 'ok stop' });
  });
});

describe('hostile command hooks', () => {
  it('forking children and exiting, megabytes on stdout, never reading stdin: all bounded and recorded', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'bg.pid');
    const { runner } = setup([
      {
        id: 'fork-and-exit',
        point: 'pre_tool_use',
        priority: 1,
        command: { command: 'bash', args: [fixture('fork-bg.sh')], env: { PID_FILE: pidFile } },
      },
      { id: 'floods-stdout', point: 'pre_tool_use', priority: 2, command: { command: 'python3', args: [fixture('big-stdout.py')] } },
      { id: 'ignores-stdin', point: 'pre_tool_use', priority: 3, command: { command: 'bash', args: [fixture('no-stdin.sh')] } },
    ]);
    const t0 = Date.now();
    const report = await runner.run(bash('x'.repeat(2 * 1024 * 1024)));
    expect(Date.now() - t0).toBeLessThan(5000);
    const byId = Object.fromEntries(report.outcomes.map((o) => [o.hookId, o]));
    expect(byId['fork-and-exit']).toMatchObject({ status: 'completed' });
    expect(byId['floods-stdout']).toMatchObject({
      status: 'failed',
      failureReason: 'invalid_result',
      failureDetail: 'stdout exceeded 1 MiB',
    });
    expect(byId['ignores-stdin']).toMatchObject({ status: 'completed' });
    const leftover = Number(readFileSync(pidFile, 'utf8').trim());
    expect(await eventually(() => processGone(leftover), 2000)).toBe(true);
  });

  it('a hook that forks and hangs is timed out and its whole process group is gone', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'hang.pid');
    const { runner } = setup([
      {
        id: 'hangs',
        point: 'pre_tool_use',
        capability: 'guardrail',
        timeoutMs: 800,
        command: { command: 'python3', args: [fixture('hang.py')], env: { PID_FILE: pidFile } },
      },
    ]);
    const { value: report, stallMs } = await longestStall(() => runner.run(bash('ls')));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'timeout' });
    expect(report.outcomes[0]).toMatchObject({ status: 'timed_out', timeoutMs: 800 });
    expect(stallMs).toBeLessThan(500);
    expect(existsSync(pidFile)).toBe(true);
    const [, pgid, childPid] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number, number];
    expect(await eventually(() => groupGone(pgid), 2000)).toBe(true);
    expect(processGone(childPid)).toBe(true);
  });
});
