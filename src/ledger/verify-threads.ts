import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import type { MessagePort, Worker } from 'node:worker_threads';
import { findWorkerProgram, startWorkerProgram, type WorkerProgram } from '../runtimes/worker-program.js';
import type { RangeResult } from './verify.js';

/**
 * Splits verify's walk of the chain across threads. The chain is cut into chunks of seqs; this
 * thread and the workers claim chunks one at a time from a shared counter (so a worker that
 * starts late, or a busy core, just takes fewer) and the results are added up in chunk order,
 * which gives exactly the report of one walk: each link stores its prev_hash, so a chunk only
 * needs the link before it to check its own links.
 *
 * Snapshots: this thread holds the read transaction the report describes; a worker's own
 * connection opens a later one. Links committed after the head this thread read are out of
 * the walk, and new invocation links change nothing a walked link covers; anything else
 * committed in between (a prune's checkpoint, a background completion) might, so a worker that
 * sees such a link, or a different head, claims nothing and this thread walks the rest itself.
 *
 * Verify is synchronous (one transaction on the caller's connection, which no other work may
 * enter meanwhile), so this thread does not return to the event loop: it waits on shared
 * memory (Atomics.wait) and reads the workers' results with receiveMessageOnPort.
 */

/** What a worker thread is given. */
export interface VerifyWorkerData {
  path: string;
  /** The head this thread's snapshot has: a worker whose snapshot differs in what a walk sees claims nothing. */
  head: { seq: number; hash: string };
  chunks: [number, number][];
  prunedRuns: readonly (readonly [number, number, string])[];
  batchSize: number;
  maxProblems: number;
  /** The claim counter, the count of messages sent and each chunk's owner (see the slots below). */
  shared: SharedArrayBuffer;
  port: MessagePort;
  /** This worker's owner number (this thread is 0). */
  id: number;
}

type WorkerMessage = { chunk: number; result: RangeResult } | { failed: string };

// Slots of the shared Int32Array; each chunk's owner follows them.
const NEXT = 0;
const SENT = 1;
const OWNERS = 2;

/** How the last split walk went: its chunks, and how many worker threads walked (the rest this thread did). */
export const lastSplit = { chunks: 0, byWorkers: 0 };

/** No message from any worker for this long: this thread walks the chunks still missing itself. */
const STALL_MS = 60_000;

/** The chain split as `walk` says, walked by this thread (`walkHere`) and `workers` worker threads; the results in chunk order. */
export function walkChunks(walk: {
  path: string;
  head: { seq: number; hash: string };
  chunks: [number, number][];
  workers: number;
  prunedRuns: readonly (readonly [number, number, string])[];
  batchSize: number;
  maxProblems: number;
  walkHere: (chunk: [number, number]) => RangeResult;
  /** This thread walks only what the workers could not (tests use it to make workers walk a small chain). */
  workersOnly?: boolean;
}): RangeResult[] {
  const n = walk.chunks.length;
  const shared = new SharedArrayBuffer((OWNERS + n) * 4);
  const slots = new Int32Array(shared);
  slots.fill(-1, OWNERS);
  const results: (RangeResult | undefined)[] = new Array<RangeResult | undefined>(n);
  let missing = n;
  const settle = (i: number, result: RangeResult) => {
    if (results[i] !== undefined) return;
    results[i] = result;
    missing--;
  };
  const here = (i: number) => settle(i, walk.walkHere(walk.chunks[i]!));
  let byWorkers = 0;

  const threads: { worker: Worker; port: MessagePort; id: number; failed: boolean }[] = [];
  const { receiveMessageOnPort } = workerThreads();
  try {
    for (let id = 1; id <= walk.workers; id++) {
      const started = startWorker({ ...walk, shared, id });
      if (started) threads.push({ ...started, id, failed: false });
    }
    let heard = Date.now();
    while (missing > 0) {
      if (!walk.workersOnly || threads.every((t) => t.failed)) for (let i = claim(slots, 0, n); i < n; i = claim(slots, 0, n)) here(i);
      const sent = Atomics.load(slots, SENT);
      for (const t of threads) {
        for (let m = receiveMessageOnPort(t.port); m; m = receiveMessageOnPort(t.port)) {
          heard = Date.now();
          const message = m.message as WorkerMessage;
          if ('failed' in message) t.failed = true;
          else if (results[message.chunk] === undefined) {
            byWorkers++;
            settle(message.chunk, message.result);
          }
        }
        // What a failed worker claimed and did not send is walked here.
        if (t.failed) for (let i = 0; i < n; i++) if (results[i] === undefined && Atomics.load(slots, OWNERS + i) === t.id) here(i);
      }
      if (missing === 0) break;
      if (Date.now() - heard > STALL_MS) {
        for (let i = 0; i < n; i++) if (results[i] === undefined) here(i);
        break;
      }
      Atomics.wait(slots, SENT, sent, 1_000);
    }
  } finally {
    for (const t of threads) {
      t.port.close();
      void t.worker.terminate();
    }
  }
  lastSplit.chunks = n;
  lastSplit.byWorkers = byWorkers;
  return results as RangeResult[];
}

/** The next unclaimed chunk (n when none is left), now owned by `id`. */
function claim(slots: Int32Array, id: number, n: number): number {
  const i = Atomics.add(slots, NEXT, 1);
  if (i < n) Atomics.store(slots, OWNERS + i, id);
  return i >= n ? n : i;
}

/**
 * A worker thread's part (verify-worker.ts): on its own read-only connection, when its snapshot
 * shows the chain as this thread's did, claims and walks chunks until none is left, sending each
 * result. Never throws: a failure is sent, and the chunk it was on is walked by the caller.
 */
export function workChunks(
  data: VerifyWorkerData,
  open: () => Database.Database,
  walker: (db: Database.Database) => (chunk: [number, number]) => RangeResult,
): void {
  const slots = new Int32Array(data.shared);
  const send = (message: WorkerMessage) => {
    data.port.postMessage(message);
    Atomics.add(slots, SENT, 1);
    Atomics.notify(slots, SENT);
  };
  let db: Database.Database | undefined;
  try {
    db = open();
    db.exec('BEGIN');
    const same = db
      .prepare(
        `SELECT (SELECT hash FROM chain WHERE seq = ?) IS ? AND NOT EXISTS (SELECT 1 FROM chain WHERE seq > ? AND kind != 'invocation')`,
      )
      .pluck()
      .get(data.head.seq, data.head.hash, data.head.seq);
    if (same !== 1) {
      send({ failed: 'the ledger changed since verify began' });
      return;
    }
    const walk = walker(db);
    const n = data.chunks.length;
    for (let i = claim(slots, data.id, n); i < n; i = claim(slots, data.id, n)) send({ chunk: i, result: walk(data.chunks[i]!) });
  } catch (error) {
    send({ failed: error instanceof Error ? error.message : String(error) });
  } finally {
    try {
      db?.close();
    } finally {
      data.port.close();
    }
  }
}

/** Starts one worker; null when it cannot be started (this thread then walks what it would have). */
function startWorker(walk: Omit<VerifyWorkerData, 'port'>): { worker: Worker; port: MessagePort } | null {
  const { MessageChannel, Worker } = workerThreads();
  const { port1, port2 } = new MessageChannel();
  const data: VerifyWorkerData = {
    path: walk.path,
    head: walk.head,
    chunks: walk.chunks,
    prunedRuns: walk.prunedRuns,
    batchSize: walk.batchSize,
    maxProblems: walk.maxProblems,
    shared: walk.shared,
    port: port2,
    id: walk.id,
  };
  try {
    const entry = entryFile();
    // The parent's flags (a tsx --import, inspector ports) are not the worker's business.
    const options = { execArgv: [], transferList: [port2] };
    const worker = startWorkerProgram(Worker, entry, options, data);
    // A worker that cannot load claims nothing; its error must not become an uncaught 'error' event.
    worker.on('error', () => {});
    worker.unref();
    return { worker, port: port1 };
  } catch {
    port1.close();
    return null;
  }
}

/**
 * node:worker_threads, loaded when a verify starts workers rather than with this module: the
 * package root imports it, and a hook config that imports 'hookledger' should not pay for it.
 */
function workerThreads(): typeof WorkerThreads {
  return createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
}

let program: WorkerProgram | undefined;

/** The worker program next to this file, or dist/ledger's from a bundle in dist/bundle/. */
function entryFile(): WorkerProgram {
  return (program ??= findWorkerProgram(import.meta.url, {
    typescript: ['./verify-worker.ts'],
    javascript: ['./verify-worker.js', '../ledger/verify-worker.js'],
  }));
}
