import type { HookContext, ResolvedHook } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';

/**
 * A runtime turns (hook, invocation) into the hook's raw answer. The runner validates that
 * answer with `parseHookResult` and enforces the timeout: when `ctx.signal` fires the runtime
 * must release what it holds (kill the process group, abort the request) and may reject.
 *
 * A runtime reports problems by throwing `HookExecutionFailure`; anything else thrown is
 * treated as `execution_failed` with its message.
 */
export interface HookRuntime {
  execute(hook: ResolvedHook, invocation: Invocation, ctx: RuntimeContext): Promise<unknown>;
}

/** The hook context plus what out-of-process runtimes need to build the wire payload. */
export interface RuntimeContext extends HookContext {
  /** The ledger id of the invocation being decided; null during replay. */
  invocationId: number | null;
}

/** Why a hook's execution failed, as recorded in its outcome. */
export class HookExecutionFailure extends Error {
  constructor(
    readonly reason: 'execution_failed' | 'invalid_result',
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'HookExecutionFailure';
  }
}
