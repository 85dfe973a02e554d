import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the decision path.
 *
 * SQLite's automatic checkpoint runs inside the commit that pushes the WAL past 1,000 pages:
 * about one decision in 120 paid for copying the WAL into the database and two fsyncs (the
 * p99 of `npm run bench` and of `serve`). A process that keeps writing (serve, a library
 * runner, the benchmarks) instead checkpoints from a worker thread with its own connection,
 * and its deciding connection's automatic checkpoint is turned off (to a backstop, below):
 *
 * - every round (CHECKPOINT_INTERVAL_MS, when something was committed) a PASSIVE checkpoint
 *   copies the WAL into the database without taking the write lock: decisions go on
 *   committing meanwhile. Under sustained writes it never quite catches up (new frames
 *   arrive while it copies), and SQLite only rewinds a WAL that is wholly copied;
 * - so once the WAL holds RESTART_PAGES, the worker follows with a FULL checkpoint: it takes
 *   the write lock for the little the PASSIVE one left, and the next commit starts the WAL
 *   from its beginning. A decision that arrives then waits for that short copy, about
 *   one in 500 at the benchmark's 8 pages per invocation: below the 99th percentile.
 *
 * If the worker cannot run (it failed to start, it is starved), SQLite's own checkpoint on the
 * deciding connection at BACKSTOP_PAGES still bounds the WAL.
 *
 * A process that writes a handful of records (`hookledger claude`, `run`: one event each)
 * never starts the worker; it keeps SQLite's default, and its close checkpoints when it is
 * the last connection.
 */

/** Commits a process makes before it starts the background checkpointer. */
export const BACKGROUND_AFTER_COMMITS = 64;
/** How often the worker looks for new commits, ms (about 100 invocations at serve's 1-client rate). */
export const CHECKPOINT_INTERVAL_MS = 100;
/** WAL pages after which the worker copies all of it under the write lock, so that it rewinds: 4,096 pages, 16 MiB at 4 KiB pages. */
export const RESTART_PAGES = 4_096;
/** The deciding connection's automatic checkpoint while the worker runs: only a stalled worker lets the WAL reach it. */
export const BACKSTOP_PAGES = 16_384;

// Slots of the shared Int32Array.
const COMMITS = 0;
const STOP = 1;
const CLOSED = 2;
const CHECKPOINTS = 3;
const OPENED = 4;
const SLOTS = 5;

/** How long close() waits for the worker to let go of its connection, ms. */
const CLOSE_WAIT_MS = 5_000;

// Evaluated as CommonJS in the worker, so it works the same from dist/, from src/ under tsx and
// from the esbuild bundle (which has no separate worker file to point at).
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const state = new Int32Array(workerData.shared);
let db;
try {
  if (Atomics.load(state, ${STOP}) === 0) {
    const Database = require(workerData.driver);
    db = new Database(workerData.path);
    Atomics.store(state, ${OPENED}, 1);
    // How long FULL waits for the write lock (a decision's transaction ends in well under a
    // millisecond) and for a reader of an older snapshot; holding the write lock while it waits
    // for a long report would stall decisions, so it gives up soon and tries next round.
    db.pragma('busy_timeout = 50');
    const checkpoint = (mode) => {
      try {
        return db.pragma('wal_checkpoint(' + mode + ')')[0];
      } catch {
        return undefined; // Busy (another checkpoint): the next round tries again.
      }
    };
    let seen = 0;
    while (Atomics.wait(state, ${STOP}, 0, workerData.intervalMs) !== 'not-equal' && Atomics.load(state, ${STOP}) === 0) {
      const commits = Atomics.load(state, ${COMMITS});
      if (commits === seen) continue;
      seen = commits;
      const passive = checkpoint('PASSIVE');
      if (passive !== undefined && passive.log >= workerData.restartPages) checkpoint('FULL');
      Atomics.add(state, ${CHECKPOINTS}, 1);
    }
  }
} finally {
  try { db?.close(); } catch {}
  Atomics.store(state, ${CLOSED}, 1);
  Atomics.notify(state, ${CLOSED});
}
`;

/**
 * Counts a ledger connection's commits and, once the process is clearly long-lived, moves
 * its checkpoints to a worker thread (see the module comment). One per connection.
 */
export class Checkpointer {
  private readonly state = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private worker: Worker | null = null;
  private commits = 0;
  private stopped = false;
  // A worker blocked in Atomics.wait would hold process exit up to an interval.
  private readonly onExit = () => this.stop();

  constructor(
    private readonly sqlite: Database.Database,
    private readonly path: string,
  ) {}

  /** Call after each commit; cheap (one shared-memory store) once the worker runs. */
  committed(): void {
    this.commits += 1;
    if (this.worker !== null) {
      Atomics.store(this.state, COMMITS, this.commits);
      return;
    }
    if (this.commits === BACKGROUND_AFTER_COMMITS && !this.stopped) this.start();
  }

  /** Checkpoints the worker completed (for tests and benchmarks). */
  get backgroundCheckpoints(): number {
    return Atomics.load(this.state, CHECKPOINTS);
  }

  /** Whether checkpoints have moved off this connection. */
  get inBackground(): boolean {
    return this.worker !== null;
  }

  /**
   * Stops the worker and waits (briefly, synchronously) until it has closed its connection,
   * so that the caller's close is the last one and checkpoints the WAL away as usual.
   */
  stop(): void {
    this.stopped = true;
    if (this.worker === null) return;
    Atomics.store(this.state, STOP, 1);
    Atomics.notify(this.state, STOP);
    // A worker still starting up sees STOP and never opens; one that has opened is waited for.
    if (Atomics.load(this.state, OPENED) === 1) Atomics.wait(this.state, CLOSED, 0, CLOSE_WAIT_MS);
    process.off('exit', this.onExit);
    void this.worker.terminate();
    this.worker = null;
  }

  private start(): void {
    if (this.path === ':memory:' || this.sqlite.memory || this.sqlite.readonly) return;
    let driver: string;
    try {
      driver = createRequire(import.meta.url).resolve('better-sqlite3');
    } catch {
      return; // Without a resolvable driver the automatic checkpoint simply stays where it is.
    }
    // Loaded here, not at the top: a process that starts for one event never gets this far.
    const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        shared: this.state.buffer,
        driver,
        path: this.path,
        intervalMs: CHECKPOINT_INTERVAL_MS,
        restartPages: RESTART_PAGES,
      },
      // The checkpointer needs little; keep the worker's heap small.
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    // A worker that fails leaves the backstop in charge; nothing to report on the decision path.
    worker.on('error', () => {});
    process.once('exit', this.onExit);
    this.worker = worker;
    Atomics.store(this.state, COMMITS, this.commits);
    this.sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  }
}

const checkpointers = new WeakMap<Database.Database, Checkpointer>();

/** The checkpointer of a connection, created on first use. */
export function checkpointerFor(sqlite: Database.Database, path: string): Checkpointer {
  let checkpointer = checkpointers.get(sqlite);
  if (checkpointer === undefined) {
    checkpointer = new Checkpointer(sqlite, path);
    checkpointers.set(sqlite, checkpointer);
  }
  return checkpointer;
}

/** Stops a connection's background checkpointer, if it has one (called by the ledger's close). */
export function stopCheckpointer(sqlite: Database.Database): void {
  checkpointers.get(sqlite)?.stop();
}
