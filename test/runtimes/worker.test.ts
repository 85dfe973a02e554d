import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { parseHookResult } from '../../src/domain/results.js';
import { HookExecutionFailure } from '../../src/runtimes/types.js';
import { closeIdleWorkers, workerRuntime } from '../../src/runtimes/worker.js';
import { makeContext, makeHook, makeInvocation, rejectionOf } from './helpers.js';

const fixtures = join(import.meta.dirname, '../fixtures/workers');
const module = join(fixtures, 'hooks.mjs');
afterAll(() => closeIdleWorkers());

function run(definition: Parameters<typeof makeHook>[0], invocation = makeInvocation()) {
  const hook = makeHook(definition);
  const { ctx, controller } = makeContext(hook);
  return { promise: workerRuntime.execute(hook, invocation, ctx), controller };
}

async function failure(definition: Parameters<typeof makeHook>[0]): Promise<HookExecutionFailure> {
  const error = await rejectionOf(run(definition).promise);
  expect(error).toBeInstanceOf(HookExecutionFailure);
  return error as HookExecutionFailure;
}

describe('workerRuntime: worker hooks (a module export)', () => {
  it('runs the default export in a worker thread and returns its answer', async () => {
    const result = await run({ worker: { module } }, makeInvocation({ toolInput: { command: 'rm -rf /' } })).promise;
    expect(parseHookResult(result)).toMatchObject({
      ok: true,
      result: { decision: 'deny', reasonCode: 'safety_violation', message: 'no: rm -rf /' },
    });
    expect(await run({ worker: { module } }).promise).toBeUndefined();
  });

  it('passes the invocation and the context (hookId, replay, timeoutMs, invocationId, a signal)', async () => {
    const result = (await run({ worker: { module, export: 'echoContext' }, timeoutMs: 4000 }).promise) as { message: string };
    expect(JSON.parse(result.message)).toEqual({
      hookId: 'h1',
      replay: false,
      timeoutMs: 4000,
      invocationId: 42,
      signal: true,
      point: 'pre_tool_use',
    });
  });

  it('loads a TypeScript module through tsx', async () => {
    expect(await run({ worker: { module: join(fixtures, 'typed.ts') } }).promise).toEqual({ decision: 'ask', message: 'typed: ls' });
  });

  it('reuses an idle worker between calls', async () => {
    const first = (await run({ worker: { module, export: 'whichThread' } }).promise) as { message: string };
    const second = (await run({ worker: { module, export: 'whichThread' } }).promise) as { message: string };
    expect(Number(first.message)).toBeGreaterThan(0);
    expect(second.message).toBe(first.message);
  });

  it('a module that does not exist, or an export that is not a function, is execution_failed naming it', async () => {
    expect((await failure({ worker: { module: join(fixtures, 'missing.mjs') } })).detail).toMatch(
      /could not load worker module .*missing\.mjs/,
    );
    const notFn = await failure({ worker: { module, export: 'notAFunction' } });
    expect(notFn).toMatchObject({ reason: 'execution_failed' });
    expect(notFn.detail).toContain('has no function export "notAFunction" (found number)');
  });

  it('throws, process.exit and uncaught async errors are execution_failed; the next call still works', async () => {
    expect(await failure({ worker: { module, export: 'throwsString' } })).toMatchObject({
      reason: 'execution_failed',
      detail: 'threw: a plain string',
    });
    expect((await failure({ worker: { module, export: 'exits' } })).detail).toBe('worker thread exited with code 7 before answering');
    expect((await failure({ worker: { module, export: 'asyncCrash' } })).detail).toContain('boom from a timer');
    expect(await run({ worker: { module } }).promise).toBeUndefined();
  });

  it('an answer that cannot cross threads, or is over 1 MiB, is invalid_result', async () => {
    const fn = await failure({ worker: { module, export: 'returnsFunction' } });
    expect(fn.reason).toBe('invalid_result');
    expect(fn.detail).toContain('cannot be sent from the worker thread');
    expect(await failure({ worker: { module, export: 'huge' } })).toMatchObject({
      reason: 'invalid_result',
      detail: expect.stringContaining('exceeds 1048576 bytes'),
    });
  });

  it('on abort, terminates a worker stuck in a synchronous loop and rejects at once', async () => {
    const { promise, controller } = run({ worker: { module, export: 'spin' } });
    const rejection = rejectionOf(promise);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    controller.abort(new Error('deadline'));
    expect((await rejection).message).toBe('deadline');
    expect(Date.now() - t0).toBeLessThan(100);
    // A fresh worker answers afterwards.
    expect(await run({ worker: { module } }).promise).toBeUndefined();
  });
});

describe('workerRuntime: in-process hooks with isolation "worker"', () => {
  it('rebuilds arrow functions, function expressions and method shorthand from their source', async () => {
    const arrow = await run({ isolation: 'worker', run: (inv) => ({ decision: 'ask', message: `arrow ${inv.toolName}` }) }).promise;
    expect(arrow).toEqual({ decision: 'ask', message: 'arrow Bash' });
    const asyncFn = await run({
      isolation: 'worker',
      run: async function named(inv) {
        const helper = (s: string) => s.toUpperCase();
        return { decision: 'allow', message: helper(String(inv.toolName)) };
      },
    }).promise;
    expect(asyncFn).toEqual({ decision: 'allow', message: 'BASH' });
    const set = defineHooks({
      name: 'methods',
      hooks: [
        {
          id: 'm',
          point: 'pre_tool_use',
          isolation: 'worker',
          run(inv) {
            return { decision: 'allow', message: `method ${inv.point}` };
          },
        },
      ],
    });
    const hook = set.hooks[0]!;
    expect(await workerRuntime.execute(hook, makeInvocation(), makeContext(hook).ctx)).toEqual({
      decision: 'allow',
      message: 'method pre_tool_use',
    });
  });

  it('a function closing over an outer variable fails with the ReferenceError, recorded not thrown', async () => {
    const outer = 'captured';
    const error = await failure({ isolation: 'worker', run: () => ({ decision: 'allow', message: outer }) });
    expect(error.detail).toMatch(/threw: outer is not defined/);
  });

  it('is part of the fingerprint, and refused for bound functions and non-run hooks', () => {
    const fn = () => undefined;
    const plain = defineHooks({ name: 's', hooks: [{ id: 'a', point: 'stop', run: fn }] });
    const isolated = defineHooks({ name: 's', hooks: [{ id: 'a', point: 'stop', run: fn, isolation: 'worker' }] });
    const main = defineHooks({ name: 's', hooks: [{ id: 'a', point: 'stop', run: fn, isolation: 'main' }] });
    expect(isolated.fingerprint).not.toBe(plain.fingerprint);
    expect(main.fingerprint).toBe(plain.fingerprint);
    expect(() => defineHooks({ name: 's', hooks: [{ id: 'a', point: 'stop', run: fn.bind(null), isolation: 'worker' }] })).toThrow(
      /native or bound/,
    );
    expect(() => defineHooks({ name: 's', hooks: [{ id: 'a', point: 'stop', command: 'true', isolation: 'worker' }] })).toThrow(
      /only an in-process hook/,
    );
  });
});

describe('exceedsJsonLimit', () => {
  it('counts shared subtrees each time, stops at cycles, and stays quiet on hostile values', async () => {
    const { exceedsJsonLimit } = await import('../../src/runtimes/result-limit.js');
    const shared = { s: 'x'.repeat(100) };
    expect(exceedsJsonLimit(new Array(20_000).fill(shared))).toBe(true);
    expect(exceedsJsonLimit(new Array(100).fill(shared))).toBe(false);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    cyclic.list = [cyclic, { back: cyclic }];
    expect(exceedsJsonLimit(cyclic)).toBe(false);
    expect(exceedsJsonLimit('y'.repeat(2 * 1024 * 1024))).toBe(true);
    expect(exceedsJsonLimit({ nested: { deeper: 'y'.repeat(2 * 1024 * 1024) } })).toBe(true);
    // A flat answer (every value a primitive) is sized without the walk, to the same count.
    expect(exceedsJsonLimit({ decision: 'deny', message: 'y'.repeat(2 * 1024 * 1024) })).toBe(true);
    expect(exceedsJsonLimit({ decision: 'allow', n: 1, ok: true, none: null })).toBe(false);
    expect(exceedsJsonLimit({ message: 'y'.repeat(1000) }, 2 + 'message'.length + 4 + 1000 + 2)).toBe(false);
    expect(exceedsJsonLimit({ message: 'y'.repeat(1000) }, 2 + 'message'.length + 4 + 1000 + 1)).toBe(true);
    const throwing = {
      decision: 'allow',
      get message(): string {
        throw new Error('getter');
      },
    };
    expect(exceedsJsonLimit(throwing)).toBe(false);
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys');
        },
      },
    );
    expect(exceedsJsonLimit(hostile)).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(exceedsJsonLimit(deep)).toBe(false);
  });
});
