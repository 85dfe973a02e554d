/** The messages between `worker.ts` (main thread) and `worker-entry.ts` (worker thread). */

/** What the worker should call: a module's export, or an in-process hook rebuilt from its source. */
export type WorkerTarget = { kind: 'module'; url: string; exportName: string } | { kind: 'source'; source: string };

/** One hook call. `ctx` is the hook context minus the signal, which cannot cross threads. */
export interface WorkerJob {
  id: number;
  target: WorkerTarget;
  invocation: unknown;
  ctx: { replay: boolean; hookId: string; timeoutMs: number; invocationId: number | null };
}

/** The hook's raw answer (validated by the runner), or why there is none. */
export type WorkerReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; reason: 'execution_failed' | 'invalid_result'; detail: string };
