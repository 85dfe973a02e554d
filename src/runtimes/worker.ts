import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import { HookExecutionFailure, type HookRuntime } from './types.js';
import { findWorkerProgram, startWorkerProgram, type WorkerProgram } from './worker-program.js';
import type { WorkerJob, WorkerReply, WorkerTarget } from './worker-protocol.js';

/** Idle workers kept for reuse; more than this are terminated when their job ends. */
const MAX_IDLE_WORKERS = 4;
/**
 * A worker's heap ceiling. Without one, a hook that allocates without bound takes the whole
 * process down; with it, only its thread dies and the hook is recorded as failed.
 */
const WORKER_HEAP_LIMIT_MB = 512;

/**
 * Runs a hook in a `worker_threads` Worker: a `worker` hook (a module's export) or an
 * in-process hook declared with `isolation: "worker"` (rebuilt there from its source text).
 * At the timeout, or when the runner shuts down, the worker is terminated, which stops even
 * a hook that blocks its event loop in a synchronous loop. Workers are reused between calls
 * (one job at a time each) so that the thread start-up (~30 ms compiled, more under tsx) is
 * paid once per process rather than per invocation; a terminated worker is never reused.
 */
export const workerRuntime: HookRuntime = {
  async execute(hook, invocation, ctx) {
    const target = targetFor(hook.runtime);
    if (ctx.signal.aborted) throw abortReason(ctx.signal);
    const job: WorkerJob = {
      id: nextJobId++,
      target,
      invocation,
      ctx: { replay: ctx.replay, hookId: ctx.hookId, timeoutMs: ctx.timeoutMs, invocationId: ctx.invocationId },
    };
    return runInWorker(job, ctx.signal);
  },
};

let nextJobId = 1;
const idle: Worker[] = [];

function targetFor(runtime: Parameters<HookRuntime['execute']>[0]['runtime']): WorkerTarget {
  if (runtime.kind === 'worker') {
    const url = runtime.module.startsWith('file:')
      ? runtime.module
      : pathToFileURL(isAbsolute(runtime.module) ? runtime.module : resolve(runtime.module)).href;
    return { kind: 'module', url, exportName: runtime.exportName };
  }
  if (runtime.kind === 'in_process') return { kind: 'source', source: runtime.fn.toString() };
  throw new Error(`worker runtime given a ${runtime.kind} hook`);
}

function runInWorker(job: WorkerJob, signal: AbortSignal): Promise<unknown> {
  let worker: Worker;
  try {
    worker = idle.pop() ?? spawnWorker();
  } catch (error) {
    return Promise.reject(new HookExecutionFailure('execution_failed', `could not start a worker thread: ${(error as Error).message}`));
  }
  worker.ref();
  return new Promise((resolvePromise, reject) => {
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
    };
    const onMessage = (reply: WorkerReply) => {
      if (reply.id !== job.id) return;
      cleanup();
      release(worker);
      if (reply.ok) resolvePromise(reply.value);
      else reject(new HookExecutionFailure(reply.reason, reply.detail));
    };
    // An uncaught exception in the thread (an async throw, running out of heap) ends the worker.
    const onError = (error: Error) => {
      cleanup();
      void worker.terminate();
      const oom = (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      reject(
        new HookExecutionFailure(
          'execution_failed',
          oom ? `worker thread ran out of memory (limit ${WORKER_HEAP_LIMIT_MB} MB)` : `worker thread crashed: ${error.message}`,
        ),
      );
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new HookExecutionFailure('execution_failed', `worker thread exited with code ${code} before answering`));
    };
    const onAbort = () => {
      cleanup();
      // Not awaited: the runner must not wait for the thread to unwind to record the timeout.
      void worker.terminate();
      reject(abortReason(signal));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      worker.postMessage(job);
    } catch (error) {
      cleanup();
      void worker.terminate();
      reject(
        new HookExecutionFailure('execution_failed', `could not send the invocation to the worker thread: ${(error as Error).message}`),
      );
    }
  });
}

/** An idle worker must not keep the process alive (the CLI would never exit). */
function release(worker: Worker): void {
  if (idle.length >= MAX_IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle.push(worker);
}

function spawnWorker(): Worker {
  // Loaded here, not at the top: most processes (one per agent event) never start a worker.
  const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
  const entry = entryFile();
  const options = {
    // The parent's flags (a tsx --import, inspector ports) are not the worker's business.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_LIMIT_MB },
  };
  const worker = startWorkerProgram(Worker, entry, options);
  // A worker that dies while idle is simply forgotten.
  worker.on('exit', () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  worker.on('error', () => {});
  return worker;
}

let program: WorkerProgram | undefined;

/** The worker program next to this file, or, when this code was bundled (dist/bundle/claude.cjs), the compiled one in dist/runtimes/. */
function entryFile(): WorkerProgram {
  return (program ??= findWorkerProgram(import.meta.url, {
    typescript: ['./worker-entry.ts'],
    javascript: ['./worker-entry.js', '../runtimes/worker-entry.js'],
  }));
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('worker hook aborted');
}

/** Terminates idle workers (tests, or a long-lived host that wants its threads back). */
export async function closeIdleWorkers(): Promise<void> {
  await Promise.all(idle.splice(0).map((w) => w.terminate()));
}
