import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker, WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread's program: the compiled `.js` in dist/ (also reached from a bundle in
 * dist/bundle/), or the `.ts` source under tsx and vitest. A plain Worker cannot load
 * TypeScript, and `--import tsx` in a worker's execArgv does not cover it on Node 20, so a
 * TypeScript program is started through a tiny bootstrap that loads it with tsx's `tsImport`.
 */
export type WorkerProgram = { kind: 'js'; url: URL } | { kind: 'ts'; url: URL; tsxApi: string };

const TS_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((api) => api.tsImport(workerData.entry, workerData.entry));
`;

/**
 * Finds a worker program relative to the calling module (`import.meta.url`): the first of
 * `typescript` that exists when the caller is itself TypeScript, else the first of `javascript`.
 */
export function findWorkerProgram(callerUrl: string, candidates: { typescript: string[]; javascript: string[] }): WorkerProgram {
  const typescript = callerUrl.endsWith('.ts');
  const names = typescript ? candidates.typescript : candidates.javascript;
  const url = names.map((c) => new URL(c, callerUrl)).find((u) => existsSync(u));
  if (url === undefined) throw new Error(`the worker program is missing (looked for ${names.join(', ')} next to ${callerUrl})`);
  return typescript ? { kind: 'ts', url, tsxApi: tsxEsmApi() } : { kind: 'js', url };
}

/**
 * Starts `program` with `workerData`. The Worker class is passed in so that callers on the
 * per-event path can load node:worker_threads only when they really start a thread.
 */
export function startWorkerProgram(
  WorkerClass: typeof Worker,
  program: WorkerProgram,
  options: WorkerOptions,
  workerData?: object,
): Worker {
  return program.kind === 'js'
    ? new WorkerClass(program.url, { ...options, workerData })
    : new WorkerClass(TS_BOOTSTRAP, {
        ...options,
        eval: true,
        workerData: { ...workerData, tsxApi: program.tsxApi, entry: program.url.href },
      });
}

/** tsx's ESM API file (its CommonJS build cannot be imported from a worker's eval code). */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const exports = (require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(resolve(dirname(manifest), exports['./esm/api']!.import.default)).href;
}
