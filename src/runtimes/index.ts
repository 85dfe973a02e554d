import type { ResolvedHook } from '../domain/hooks.js';
import { inProcessRuntime } from './in-process.js';
import type { HookRuntime } from './types.js';

export { HookExecutionFailure, type HookRuntime, type RuntimeContext } from './types.js';

/**
 * A runtime whose module (and the Node built-ins it needs: child_process, worker_threads)
 * is loaded on first use. The Claude Code adapter starts a process per event, and most hook
 * sets use one or two runtimes.
 */
function onFirstUse(load: () => Promise<HookRuntime>): HookRuntime {
  let loaded: Promise<HookRuntime> | undefined;
  return {
    execute: async (hook, invocation, ctx) => (await (loaded ??= load())).execute(hook, invocation, ctx),
  };
}

const commandRuntime = onFirstUse(async () => (await import('./command.js')).commandRuntime);
const httpRuntime = onFirstUse(async () => (await import('./http.js')).httpRuntime);
const workerRuntime = onFirstUse(async () => (await import('./worker.js')).workerRuntime);

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
