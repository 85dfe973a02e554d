import type { ResolvedHook } from '../domain/hooks.js';
import { commandRuntime } from './command.js';
import { httpRuntime } from './http.js';
import { inProcessRuntime } from './in-process.js';
import type { HookRuntime } from './types.js';
import { workerRuntime } from './worker.js';

export { HookExecutionFailure, type HookRuntime, type RuntimeContext } from './types.js';

/** The runtime that executes a hook: by its runtime kind, and for in-process hooks by their isolation. */
export function runtimeFor(hook: ResolvedHook): HookRuntime {
  switch (hook.runtime.kind) {
    case 'in_process':
      return hook.runtime.isolation === 'worker' ? workerRuntime : inProcessRuntime;
    case 'command':
      return commandRuntime;
    case 'http':
      return httpRuntime;
    case 'worker':
      return workerRuntime;
  }
}
