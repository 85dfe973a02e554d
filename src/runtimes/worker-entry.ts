/**
 * The program a worker thread runs for `worker` hooks and for in-process hooks declared with
 * `isolation: "worker"`. It receives one job at a time from `worker.ts`, calls the hook and
 * posts back its raw answer; the main thread validates the answer and enforces the timeout
 * by terminating this thread, which stops even a hook stuck in a synchronous loop.
 *
 * Kept free of zod and the ledger so that a worker starts quickly.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { describeHostile, exceedsJsonLimit, RESULT_LIMIT_DETAIL } from './result-limit.js';
import type { WorkerJob, WorkerReply } from './worker-protocol.js';

type HookFn = (invocation: unknown, ctx: unknown) => unknown;

/** Loaded hook functions by module URL + export, or by source text: a reused worker loads each once. */
const loaded = new Map<string, Promise<HookFn>>();

// A hook's console output must never reach the agent through our stdout, where the Claude Code
// adapter answers: the worker's stdout goes to stderr. (Piping the worker's streams to the
// main thread instead would keep an idle worker, and so the CLI process, alive.)
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

const port = parentPort;
if (port === null) throw new Error('worker-entry.ts must run in a worker thread');

port.on('message', (job: WorkerJob) => {
  void runJob(job).then((reply) => send(reply));
});

async function runJob(job: WorkerJob): Promise<WorkerReply> {
  let fn: HookFn;
  try {
    fn = await load(job);
  } catch (error) {
    return { id: job.id, ok: false, reason: 'execution_failed', detail: describeHostile(error) };
  }
  // The thread is terminated at the timeout, so this signal never fires; it is here so that
  // the same function runs unchanged in-process or isolated.
  const ctx = { ...job.ctx, signal: new AbortController().signal };
  try {
    const value = await fn(job.invocation, ctx);
    if (exceedsJsonLimit(value)) return { id: job.id, ok: false, reason: 'invalid_result', detail: RESULT_LIMIT_DETAIL };
    return { id: job.id, ok: true, value };
  } catch (error) {
    return { id: job.id, ok: false, reason: 'execution_failed', detail: `threw: ${describeHostile(error)}` };
  }
}

/** Functions, symbols and class instances with private state cannot cross threads: say so instead of crashing. */
function send(reply: WorkerReply): void {
  try {
    port!.postMessage(reply);
  } catch (error) {
    port!.postMessage({
      id: reply.id,
      ok: false,
      reason: 'invalid_result',
      detail: `result cannot be sent from the worker thread: ${describeHostile(error)}`,
    } satisfies WorkerReply);
  }
}

function load(job: WorkerJob): Promise<HookFn> {
  const key = job.target.kind === 'module' ? `module:${job.target.url}#${job.target.exportName}` : `source:${job.target.source}`;
  let fn = loaded.get(key);
  if (fn === undefined) {
    fn =
      job.target.kind === 'module' ? loadModule(job.target.url, job.target.exportName) : Promise.resolve(compileSource(job.target.source));
    // A failed load is retried next time (the file may have been fixed), not cached.
    fn.catch(() => loaded.delete(key));
    loaded.set(key, fn);
  }
  return fn;
}

async function loadModule(url: string, exportName: string): Promise<HookFn> {
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  let mod: Record<string, unknown>;
  try {
    if (['.ts', '.mts', '.cts'].includes(extname(path))) {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    } else {
      mod = (await import(url)) as Record<string, unknown>;
    }
  } catch (error) {
    throw new Error(`could not load worker module ${path}: ${describeHostile(error)}`, { cause: error });
  }
  let fn = mod[exportName];
  // A CommonJS module (or a .ts file outside an ESM package) nests the default export once more.
  if (exportName === 'default' && typeof fn === 'object' && fn !== null && typeof (fn as { default?: unknown }).default === 'function') {
    fn = (fn as { default: unknown }).default;
  }
  if (typeof fn !== 'function') {
    throw new Error(`worker module ${path} has no function export "${exportName}" (found ${fn === undefined ? 'nothing' : typeof fn})`);
  }
  return fn as HookFn;
}

/**
 * Rebuilds an in-process hook from its source text, in this thread's global scope: it sees
 * globals and nothing it closed over where it was written. esbuild (tsx, vitest) may wrap
 * nested named functions in `__name(fn, "name")` calls, so that helper is provided.
 * Method shorthand (`run(inv) { ... }`) is not an expression; it is read as an object member.
 */
function compileSource(source: string): HookFn {
  const keepName = (f: unknown) => f;
  let value: unknown;
  try {
    value = new Function('__name', `return (${source}\n);`)(keepName);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const holder = new Function('__name', `return ({ ${source}\n });`)(keepName) as Record<string, unknown>;
    value = Object.values(holder)[0];
  }
  if (typeof value !== 'function') throw new Error('the hook source did not evaluate to a function');
  return value as HookFn;
}
