import type { HookRuntime } from './types.js';

/** Calls the hook's function in this thread. A hook that blocks the event loop cannot be stopped here: use `worker`. */
export const inProcessRuntime: HookRuntime = {
  async execute(hook, invocation, ctx) {
    if (hook.runtime.kind !== 'in_process') throw new Error(`in-process runtime given a ${hook.runtime.kind} hook`);
    return hook.runtime.fn(invocation, ctx);
  },
};
