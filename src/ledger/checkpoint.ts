import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the decision path.
 *
 * SQLite's automatic checkpoint runs inside the commit that pushes the WAL past 1,000 pages:
 * with this schema's indexes an invocation's two commits append about 31 WAL frames, so about one
 * decision in 32 paid for copying the WAL into the database and two fsyncs. A process that
 * keeps writing (serve, a library runner, the benchmarks) instead checkpoints from a worker
 * thread with its own connection, and its deciding connection's automatic checkpoint is turned
 * off (to a backstop, below):
 *
 * - every round (CHECKPOINT_INTERVAL_MS, when something was committed) a PASSIVE checkpoint
 *   copies the WAL into the database without taking the write lock: decisions go on
 *   committing meanwhile. Under sustained writes it never quite catches up (new frames arrive
 *   while it copies), and SQLite only rewinds a WAL that is wholly copied;
 * - so once the WAL holds RESTART_PAGES, the worker runs one or two more PASSIVE passes (the
 *   frames written during the one before; a second only when the first took over 3 ms), then
 *   a FULL checkpoint, which needs the write lock for the little left and its two fsyncs; the
 *   next commit then starts the WAL from its beginning. The deciding thread is told (a shared
 *   flag) and waits on that flag, woken the moment the FULL is done, instead of polling the
 *   lock in SQLite's busy handler, which sleeps 1, 2, 5, 10 ms and turned a 2 ms checkpoint
 *   into a 10-20 ms decision (traced: `strace -f -e fsync,clock_nanosleep`). One decision per
 *   RESTART_PAGES of WAL waits: at about 31 frames per invocation, one in ~530, below the
 *   99th percentile.
 *
 * The WAL volume is the schema's: an invocation's two commits rewrite the leaf pages of every
 * index they touch (about 120 KB of WAL per invocation). A writer going flat out (the
 * benchmark's loop, several thousand invocations a second) writes the WAL faster than this
 * disk syncs it; the worker then falls behind and the WAL grows past RESTART_PAGES until it
 * catches up, without holding decisions (PASSIVE takes no write lock).
 *
 * If the worker cannot run (it failed to start, it is starved, a long reader in another process
 * keeps its FULL from finishing: it then backs off for 1, 2, 4, 8 rounds), SQLite's own
 * checkpoint on the deciding connection at BACKSTOP_PAGES still bounds the WAL.
 *
 * A process that writes a handful of records (`hookledger claude`, `run`: one event each)
 * never starts the worker; it keeps SQLite's default, and its close checkpoints when it is
 * the last connection.
 */

/** Commits a process makes before it starts the background checkpointer. */
export const BACKGROUND_AFTER_COMMITS = 64;
/** How often the worker looks for new commits, ms (about 100 invocations at serve's 1-client rate). */
export const CHECKPOINT_INTERVAL_MS = 100;
/**
 * WAL pages after which the worker rewinds the WAL (FULL checkpoint, one decision waits for it):
 * 16,384 pages, 64 MiB at 4 KiB pages. Fewer would keep the file smaller and put the wait in more
 * decisions (4,096: one in 140, inside the 99th percentile).
 */
export const RESTART_PAGES = 16_384;
/** The deciding connection's automatic checkpoint while the worker runs: only a stalled worker lets the WAL reach it. */
export const BACKSTOP_PAGES = 2 * RESTART_PAGES;
/**
 * How long the worker tries to take the write lock for its FULL checkpoint once the deciding
 * thread is parked (waiting for it, in no transaction), ms. Anything still holding the lock then
 * is another process (a writer, a reader of an older snapshot), and the deciding thread must not
 * be held for it: the worker gives up and tries again later.
 */
export const RESTART_LOCK_WAIT_MS = 5;
/** How long the worker tries for the lock while the deciding thread is not parked (idle between requests, or descheduled in a transaction), ms. */
export const RESTART_IDLE_WAIT_MS = 50;
/** The longest the deciding thread waits for the worker's FULL checkpoint, ms, before it goes on (SQLite's busy timeout then applies). */
const HOLD_WAIT_MS = 200;

// Slots of the shared Int32Array.
const COMMITS = 0;
const STOP = 1;
const CLOSED = 2;
const CHECKPOINTS = 3;
const OPENED = 4;
/** 1 while the worker runs a FULL checkpoint: the deciding thread waits before its next transaction. */
const HOLD = 5;
const RESTARTS = 6;
/** 1 while the deciding thread waits on HOLD (it is then in no transaction). */
const PARKED = 7;
const GAVE_UP = 8;
const SLOTS = 9;

/** How long close() waits for the worker to let go of its connection, ms. */
const CLOSE_WAIT_MS = 5_000;

// Evaluated as CommonJS in the worker, so it works the same from dist/, from src/ under tsx and
// from the esbuild bundle (which has no separate worker file to point at).
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const state = new Int32Array(workerData.shared);
const stopped = () => Atomics.load(state, ${STOP}) !== 0;
let db;
try {
  if (!stopped()) {
    const Database = require(workerData.driver);
    db = new Database(workerData.path);
    Atomics.store(state, ${OPENED}, 1);
    // No busy handler: PASSIVE never waits, and the FULL below retries the lock itself, briefly.
    db.pragma('busy_timeout = 0');
    const checkpoint = (mode) => {
      try {
        return db.pragma('wal_checkpoint(' + mode + ')')[0];
      } catch {
        return undefined; // Busy (another checkpoint): the next round tries again.
      }
    };
    // The FULL checkpoint that lets the WAL rewind, with the deciding thread told to wait (HOLD).
    let skipRounds = 0;
    let failures = 0;
    const restart = () => {
      Atomics.store(state, ${HOLD}, 1);
      try {
        // The lock is retried for lockWaitMs once the deciding thread is parked outside its
        // transactions (it may be descheduled mid-transaction on a busy machine: that is no
        // reason to give up), or for idleWaitMs while it is not (idle, or not yet back).
        const start = Date.now();
        let parkedSince = 0;
        for (;;) {
          const result = checkpoint('FULL');
          if (result !== undefined && result.busy === 0) {
            Atomics.add(state, ${RESTARTS}, 1);
            failures = 0;
            return;
          }
          const now = Date.now();
          if (Atomics.load(state, ${PARKED}) === 1) parkedSince ||= now;
          if (stopped() || (parkedSince > 0 ? now - parkedSince : now - start) >= (parkedSince > 0 ? workerData.lockWaitMs : workerData.idleWaitMs)) break;
          Atomics.wait(state, ${STOP}, 0, 0.05);
        }
        // Another connection holds the lock or an old snapshot: back off (1, 2, 4, 8 rounds) rather than hold decisions every round.
        Atomics.add(state, ${GAVE_UP}, 1);
        failures = Math.min(failures + 1, 4);
        skipRounds = 2 ** (failures - 1);
      } finally {
        Atomics.store(state, ${HOLD}, 0);
        Atomics.notify(state, ${HOLD});
      }
    };
    let seen = 0;
    while (Atomics.wait(state, ${STOP}, 0, workerData.intervalMs) !== 'not-equal' && !stopped()) {
      const commits = Atomics.load(state, ${COMMITS});
      if (commits === seen) continue;
      seen = commits;
      const passive = checkpoint('PASSIVE');
      if (passive !== undefined && passive.log >= workerData.restartPages) {
        if (skipRounds > 0) skipRounds -= 1;
        else {
          // Copy (and sync) what was written meanwhile until a pass is quick, so that the FULL
          // checkpoint, which decisions wait for, has little left to sync under the lock.
          for (let pass = 0; pass < workerData.maxCatchUpPasses; pass++) {
            const t = performance.now();
            checkpoint('PASSIVE');
            if (performance.now() - t < workerData.quickPassMs) break;
          }
          restart();
        }
      }
      Atomics.add(state, ${CHECKPOINTS}, 1);
    }
  }
} finally {
  Atomics.store(state, ${HOLD}, 0);
  Atomics.notify(state, ${HOLD});
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

  /**
   * Call before each write transaction of the deciding connection: while the worker's FULL
   * checkpoint holds the write lock, waits for it on the shared flag (woken the moment it is
   * done) rather than in SQLite's busy handler. Otherwise one shared-memory load.
   */
  beforeWrite(): void {
    if (this.worker === null || Atomics.load(this.state, HOLD) === 0) return;
    Atomics.store(this.state, PARKED, 1);
    Atomics.wait(this.state, HOLD, 1, HOLD_WAIT_MS);
    Atomics.store(this.state, PARKED, 0);
  }

  /** Checkpoint rounds the worker completed (for tests and benchmarks). */
  get backgroundCheckpoints(): number {
    return Atomics.load(this.state, CHECKPOINTS);
  }

  /** FULL checkpoints the worker gave up on (the lock or an old snapshot held by another connection), for tests and benchmarks. */
  get restartsGivenUp(): number {
    return Atomics.load(this.state, GAVE_UP);
  }

  /** FULL checkpoints the worker completed, after each of which the WAL rewinds (for tests and benchmarks). */
  get restarts(): number {
    return Atomics.load(this.state, RESTARTS);
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
        lockWaitMs: RESTART_LOCK_WAIT_MS,
        idleWaitMs: RESTART_IDLE_WAIT_MS,
        maxCatchUpPasses: 2,
        quickPassMs: 3,
      },
      // The checkpointer needs little; keep the worker's heap small.
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    // A worker that fails leaves the backstop in charge; nothing to report on the decision path.
    worker.on('error', () => {});
    // A worker stopped without running its own cleanup (out of memory, terminated) must not leave decisions waiting on HOLD.
    worker.on('exit', () => {
      Atomics.store(this.state, HOLD, 0);
      Atomics.notify(this.state, HOLD);
    });
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
