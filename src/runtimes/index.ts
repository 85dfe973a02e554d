import type { ResolvedHook } from '../domain/hooks.js';
import { commandRuntime } from './command.js';
import { httpRuntime } from './http.js';
import { inProcessRuntime } from './in-process.js';
import { HookExecutionFailure, type HookRuntime } from './types.js';

export { HookExecutionFailure, type HookRuntime, type RuntimeContext } from './types.js';

/**
 * The runtime that executes a hook, by its runtime kind. Throws `HookExecutionFailure` for a
 * kind this build cannot run, so the runner records it like any other failed hook.
 */
export function runtimeFor(hook: ResolvedHook): HookRuntime {
  switch (hook.runtime.kind) {
    case 'in_process':
      return inProcessRuntime;
    case 'command':
      return commandRuntime;
    case 'http':
      return httpRuntime;
    case 'worker':
      throw new HookExecutionFailure('execution_failed', 'worker isolation is not available yet');
  }
}
