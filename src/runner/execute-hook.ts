import pTimeout, { TimeoutError } from 'p-timeout';
import type { ResolvedHook } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import type { FailureReason } from '../domain/outcomes.js';
import { parseHookResult, type HookResult } from '../domain/results.js';
import { runtimeFor } from '../runtimes/index.js';
import { describeHostile, exceedsJsonLimit, RESULT_LIMIT_DETAIL } from '../runtimes/result-limit.js';
import { HookExecutionFailure } from '../runtimes/types.js';

const SHUTDOWN_DETAIL = 'stopped when the runner closed before it finished (close deadline reached)';

/** What happened when one hook ran. */
export type HookExecution =
  | { ok: true; result: HookResult; startedAt: number; durationUs: number }
  | { ok: false; failureReason: Exclude<FailureReason, 'observe_only_violation'>; detail: string; startedAt: number; durationUs: number };

export interface ExecuteOptions {
  replay: boolean;
  invocationId: number | null;
  /** Aborts the hook early (runner shutdown); the hook's own timeout is always enforced. */
  signal?: AbortSignal;
}

/**
 * Runs one hook under its timeout. p-timeout only stops the waiting, so each hook gets its
 * own AbortController, aborted at the deadline: command hooks kill their process group on it
 * and in-process hooks are expected to stop.
 *
 * Returns synchronously when an in-process hook answered synchronously (most guardrails do):
 * the foreground pass then continues without a microtask hop per hook.
 */
export function executeHook(hook: ResolvedHook, invocation: Invocation, options: ExecuteOptions): HookExecution | Promise<HookExecution> {
  // Created on first use: a synchronous guardrail that never looks at ctx.signal should not pay
  // for a controller (this runs for every hook of every agent event).
  let controller: AbortController | undefined;
  const control = () => (controller ??= new AbortController());
  const onOuterAbort = () => control().abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const cleanUp = () => options.signal?.removeEventListener('abort', onOuterAbort);
  const startedAt = Date.now();
  const t0 = process.hrtime.bigint();
  const elapsedUs = () => Number((process.hrtime.bigint() - t0) / 1000n);
  const ctx = {
    get signal() {
      return control().signal;
    },
    replay: options.replay,
    hookId: hook.id,
    timeoutMs: hook.timeoutMs,
    invocationId: options.invocationId,
  };

  const settle = (value: unknown): HookExecution => {
    const durationUs = elapsedUs();
    // A hook that returned because the runner shut down did not finish its work.
    if (options.signal?.aborted) return { ok: false, failureReason: 'timeout', detail: SHUTDOWN_DETAIL, startedAt, durationUs };
    if (exceedsJsonLimit(value)) return { ok: false, failureReason: 'invalid_result', detail: RESULT_LIMIT_DETAIL, startedAt, durationUs };
    const parsed = safeParse(value);
    if (!parsed.ok) return { ok: false, failureReason: 'invalid_result', detail: parsed.issues, startedAt, durationUs };
    const unsendable = parsed.result.decision === 'modify' ? notJson(parsed.result.input) : null;
    if (unsendable !== null) return { ok: false, failureReason: 'invalid_result', detail: `input: ${unsendable}`, startedAt, durationUs };
    return { ok: true, result: parsed.result, startedAt, durationUs };
  };
  const fail = (error: unknown): HookExecution => {
    const durationUs = elapsedUs();
    if (error instanceof TimeoutError) {
      control().abort(error);
      return { ok: false, failureReason: 'timeout', detail: `did not finish within its ${hook.timeoutMs} ms timeout`, startedAt, durationUs };
    }
    if (error instanceof HookExecutionFailure) return { ok: false, failureReason: error.reason, detail: error.detail, startedAt, durationUs };
    if (controller?.signal.aborted) return { ok: false, failureReason: 'timeout', detail: SHUTDOWN_DETAIL, startedAt, durationUs };
    return { ok: false, failureReason: 'execution_failed', detail: `threw: ${describeHostile(error)}`, startedAt, durationUs };
  };

  let started: unknown;
  try {
    // In-process functions are called directly: for a synchronous answer, arming a timer and
    // chaining promises would cost more than the hook itself. A synchronous hook cannot be
    // interrupted anyway (that needs worker isolation).
    started = hook.runtime.kind === 'in_process' && hook.runtime.isolation !== 'worker' ? hook.runtime.fn(invocation, ctx) : runtimeFor(hook).execute(hook, invocation, ctx);
  } catch (error) {
    cleanUp();
    return fail(error);
  }
  if (!isThenable(started)) {
    cleanUp();
    return settle(started);
  }
  return pTimeout(Promise.resolve(started), { milliseconds: hook.timeoutMs })
    .then(settle, fail)
    .finally(cleanUp);
}

/**
 * A modify's input goes to the next hooks and back to the agent as JSON, so it must be JSON
 * (a cycle or a BigInt would only fail later, far from the hook that caused it). Payloads
 * are only stored, where the ledger records an unserialisable one as a description.
 */
function notJson(value: unknown): string | null {
  try {
    return JSON.stringify(value) === undefined ? 'the replacement input is not a JSON value' : null;
  } catch (error) {
    return `the replacement input is not JSON-serialisable (${describeHostile(error)})`;
  }
}

/** Validation itself must not throw on a hostile value (a getter that throws, a revoked proxy). */
function safeParse(value: unknown): ReturnType<typeof parseHookResult> {
  try {
    return parseHookResult(value);
  } catch (error) {
    return { ok: false, issues: `result could not be read: ${describeHostile(error)}` };
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}
