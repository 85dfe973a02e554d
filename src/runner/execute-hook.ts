import pTimeout, { TimeoutError } from 'p-timeout';
import type { ResolvedHook } from '../domain/hooks.js';
import { frozenCopy } from '../domain/frozen.js';
import type { Invocation } from '../domain/invocation.js';
import type { FailureReason } from '../domain/outcomes.js';
import { parseHookResult, replacementOf, type HookResult } from '../domain/results.js';
import { runtimeFor } from '../runtimes/index.js';
import { describeHostile, exceedsJsonLimit, RESULT_LIMIT_DETAIL } from '../runtimes/result-limit.js';
import { HookExecutionFailure, type RuntimeContext } from '../runtimes/types.js';

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
 * The context a hook receives. Its AbortController is created on first use of `signal`: a
 * synchronous guardrail that never looks at it should not pay for one (this runs for every hook
 * of every agent event). A class rather than an object literal with closures, for the same reason.
 */
class ExecutionContext implements RuntimeContext {
  readonly replay: boolean;
  readonly hookId: string;
  readonly timeoutMs: number;
  readonly invocationId: number | null;
  // Native private fields: a hook that spreads or logs its context sees only the documented ones.
  #controller: AbortController | undefined;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuterAbort: (() => void) | undefined;

  constructor(hook: ResolvedHook, options: ExecuteOptions) {
    this.replay = options.replay;
    this.hookId = hook.id;
    this.timeoutMs = hook.timeoutMs;
    this.invocationId = options.invocationId;
    const outer = options.signal;
    this.#outer = outer;
    if (outer) {
      this.#onOuterAbort = () => this.abort(outer.reason);
      outer.addEventListener('abort', this.#onOuterAbort, { once: true });
    }
  }

  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  /** True when the hook's own signal fired (its deadline, or the runner shutting down). */
  get aborted(): boolean {
    return this.#controller?.signal.aborted ?? false;
  }

  abort(reason: unknown): void {
    (this.#controller ??= new AbortController()).abort(reason);
  }

  /** Stops listening to the runner's signal once the hook is settled. */
  release(): void {
    if (this.#onOuterAbort) this.#outer?.removeEventListener('abort', this.#onOuterAbort);
  }
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
  const ctx = new ExecutionContext(hook, options);
  const startedAt = Date.now();
  const t0 = process.hrtime.bigint();
  let started: unknown;
  let thenable: boolean;
  try {
    // In-process functions are called directly: for a synchronous answer, arming a timer and
    // chaining promises would cost more than the hook itself. A synchronous hook cannot be
    // interrupted anyway (that needs worker isolation).
    started =
      hook.runtime.kind === 'in_process' && hook.runtime.isolation !== 'worker'
        ? hook.runtime.fn(invocation, ctx)
        : runtimeFor(hook).execute(hook, invocation, ctx);
    // Inside the try: reading `then` runs a hostile getter.
    thenable = isThenable(started);
  } catch (error) {
    ctx.release();
    return failed(hook, options, ctx, error, startedAt, t0);
  }
  if (!thenable) {
    ctx.release();
    return settled(hook, options, started, startedAt, t0);
  }
  // The runner's shutdown signal ends the wait too: close() must not outlast its deadline for a
  // hook that ignores ctx.signal. Through the hook's own signal (which the shutdown aborts), so
  // the shared signal carries one listener per running hook, not two.
  return pTimeout(Promise.resolve(started), { milliseconds: hook.timeoutMs, ...(options.signal ? { signal: ctx.signal } : {}) })
    .then(
      (value) => settled(hook, options, value, startedAt, t0),
      (error: unknown) => failed(hook, options, ctx, error, startedAt, t0),
    )
    .finally(() => ctx.release());
}

const elapsedUs = (t0: bigint): number => Number((process.hrtime.bigint() - t0) / 1000n);

/** A hook answered: validate what it returned. */
function settled(hook: ResolvedHook, options: ExecuteOptions, value: unknown, startedAt: number, t0: bigint): HookExecution {
  const durationUs = elapsedUs(t0);
  // A hook that returned because the runner shut down did not finish its work.
  if (options.signal?.aborted) return { ok: false, failureReason: 'timeout', detail: SHUTDOWN_DETAIL, startedAt, durationUs };
  // A synchronous hook (or one that blocked the event loop) could not be stopped at its
  // deadline, but its late answer is not obeyed: the timeout is the contract.
  if (durationUs > hook.timeoutMs * 1000) {
    const detail = `answered after ${Math.round(durationUs / 1000)} ms, past its ${hook.timeoutMs} ms timeout (it blocked the event loop, so it could not be stopped; isolation: "worker" can stop it)`;
    return { ok: false, failureReason: 'timeout', detail, startedAt, durationUs };
  }
  if (exceedsJsonLimit(value)) return { ok: false, failureReason: 'invalid_result', detail: RESULT_LIMIT_DETAIL, startedAt, durationUs };
  const parsed = safeParse(value);
  if (!parsed.ok) return { ok: false, failureReason: 'invalid_result', detail: parsed.issues, startedAt, durationUs };
  const replacement = replacementOf(parsed.result);
  if (replacement === undefined) return { ok: true, result: parsed.result, startedAt, durationUs };
  const unsendable = notJson(replacement);
  if (unsendable !== null) return { ok: false, failureReason: 'invalid_result', detail: `input: ${unsendable}`, startedAt, durationUs };
  // The hook keeps a reference to what it returned; the record and later hooks must not see it change.
  let input: typeof replacement;
  try {
    input = frozenCopy(replacement);
  } catch (error) {
    return {
      ok: false,
      failureReason: 'invalid_result',
      detail: `input: could not be read (${describeHostile(error)})`,
      startedAt,
      durationUs,
    };
  }
  // Only results with a replacement reach here (replacementOf), and those all have `input`.
  return { ok: true, result: { ...parsed.result, input } as HookResult, startedAt, durationUs };
}

/** A hook threw, rejected or ran out of time. */
function failed(
  hook: ResolvedHook,
  options: ExecuteOptions,
  ctx: ExecutionContext,
  error: unknown,
  startedAt: number,
  t0: bigint,
): HookExecution {
  const durationUs = elapsedUs(t0);
  if (error instanceof TimeoutError) {
    ctx.abort(error);
    return { ok: false, failureReason: 'timeout', detail: `did not finish within its ${hook.timeoutMs} ms timeout`, startedAt, durationUs };
  }
  if (error instanceof HookExecutionFailure) return { ok: false, failureReason: error.reason, detail: error.detail, startedAt, durationUs };
  if (ctx.aborted || options.signal?.aborted)
    return { ok: false, failureReason: 'timeout', detail: SHUTDOWN_DETAIL, startedAt, durationUs };
  return { ok: false, failureReason: 'execution_failed', detail: `threw: ${describeHostile(error)}`, startedAt, durationUs };
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
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
