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
 *   frames written during the one before; a second only when the first took over 3 ms) and then
 *   asks the deciding thread (a shared flag, and a message that wakes its event loop) to copy
 *   the little that is left itself, with a PASSIVE checkpoint on its own connection (its own last
 *   commits and two small fsyncs); once that copied everything, its next write starts the WAL
 *   from its beginning (and syncs the new WAL header). A server does this between requests,
 *   when the message arrives; a loop that never yields to the event loop does it before a write
 *   REWIND_DEFER_WRITES later, so one decision in ~530 (at about 31 frames per invocation)
 *   pays for it, below the 99th percentile. Nothing waits for the worker, and a PASSIVE checkpoint never waits for
 *   a lock: a reader holding an old snapshot (a report in another process) only makes it copy
 *   less, and the worker then backs off for 1, 2, 4, 8 rounds before asking again.
 * - The worker runs at normal priority (WORKER_NICE). Lowering it (nice 5, 10, 19) was measured:
 *   it cut the decisions that waited for a CPU while the worker ran (74 against 92 of 3,000 at
 *   nice 5, one run), but on a loaded machine a deprioritised worker is preempted while it holds
 *   SQLite's checkpoint lock, the deciding connection's backstop checkpoint then cannot run
 *   either, and the WAL grew past twice the backstop (the bounded-WAL test failed at load 5-6).
 *
 * The WAL volume is the schema's: an invocation's two commits rewrite the leaf pages of every
 * index they touch (about 120 KB of WAL per invocation). A writer going flat out (the
 * benchmark's loop, several thousand invocations a second) writes the WAL faster than this
 * disk syncs it; the worker then falls behind and the WAL grows past RESTART_PAGES until it
 * catches up, without holding decisions (PASSIVE takes no write lock).
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
/**
 * WAL pages after which the WAL is rewound (the deciding thread copies what is left, one decision
 * pays for it): 16,384 pages, 64 MiB at 4 KiB pages. Fewer would keep the file smaller and put the
 * copy in more decisions (4,096: one in 140, inside the 99th percentile).
 */
export const RESTART_PAGES = 16_384;
/** The deciding connection's automatic checkpoint while the worker runs: only a stalled worker lets the WAL reach it. */
export const BACKSTOP_PAGES = 2 * RESTART_PAGES;
/**
 * Writes the deciding thread lets pass, once the worker asks for a rewind, before it copies the
 * rest of the WAL inside a decision: a server finishes it between requests instead (the worker's
 * message). About 8 invocations, a few hundred more pages to copy for a loop that never yields.
 */
export const REWIND_DEFER_WRITES = 16;
/** The worker thread's nice value (see the module comment for why not lower). */
export const WORKER_NICE = 0;

// Slots of the shared Int32Array.
const COMMITS = 0;
const STOP = 1;
const CLOSED = 2;
const CHECKPOINTS = 3;
const OPENED = 4;
/** 1 while the worker asks the deciding thread to finish the copy (its own PASSIVE checkpoint) before its next write. */
const REWIND = 5;
const RESTARTS = 6;
const GAVE_UP = 7;
/** The worker's Linux thread id (0 elsewhere): benchmarks attribute scheduler time to it. */
const TID = 8;
/** The commit count the worker's last completed round covered. */
const SEEN = 9;
/** Rewinds the deciding thread finished between decisions (told by a message from the worker), not inside one. */
const IDLE_REWINDS = 10;
const SLOTS = 11;

/** How long close() waits for the worker to let go of its connection, ms. */
const CLOSE_WAIT_MS = 5_000;

// Evaluated as CommonJS in the worker, so it works the same from dist/, from src/ under tsx and
// from the esbuild bundle (which has no separate worker file to point at).
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const state = new Int32Array(workerData.shared);
const stopped = () => Atomics.load(state, ${STOP}) !== 0;
let db;
try {
  try {
    Atomics.store(state, ${TID}, Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) || 0);
  } catch {}
  // Linux: 0 is this thread alone (benchmarks compare priorities with --ab-nice).
  if (workerData.nice !== 0) { try { require('node:os').setPriority(0, workerData.nice); } catch {} }
  if (!stopped()) {
    const Database = require(workerData.driver);
    db = new Database(workerData.path);
    Atomics.store(state, ${OPENED}, 1);
    db.pragma('busy_timeout = 0'); // PASSIVE never waits anyway; nothing here should.
    const checkpoint = () => {
      try {
        return db.pragma('wal_checkpoint(PASSIVE)')[0];
      } catch {
        return undefined; // Busy (another checkpoint): the next round tries again.
      }
    };
    let skipRounds = 0;
    let failures = 0;
    let gaveUp = 0;
    let restarts = 0;
    let seen = 0;
    while (Atomics.wait(state, ${STOP}, 0, workerData.intervalMs) !== 'not-equal' && !stopped()) {
      // The deciding thread has not yet finished the rewind it was asked for: nothing to copy until it has.
      if (Atomics.load(state, ${REWIND}) === 1) continue;
      if (Atomics.load(state, ${RESTARTS}) !== restarts) {
        restarts = Atomics.load(state, ${RESTARTS});
        failures = 0;
      }
      if (Atomics.load(state, ${GAVE_UP}) !== gaveUp) {
        // It could not copy everything (another connection holds an old snapshot, or writes): back off 1, 2, 4, 8 rounds.
        gaveUp = Atomics.load(state, ${GAVE_UP});
        failures = Math.min(failures + 1, 4);
        skipRounds = 2 ** (failures - 1);
      }
      const commits = Atomics.load(state, ${COMMITS});
      if (commits === seen) continue;
      seen = commits;
      const passive = checkpoint();
      if (passive !== undefined && passive.log >= workerData.restartPages) {
        if (skipRounds > 0) skipRounds -= 1;
        else {
          // Copy (and sync) what was written meanwhile until a pass is quick, so that the
          // deciding thread's own pass, which one decision pays for, has little left.
          for (let pass = 0; pass < workerData.maxCatchUpPasses; pass++) {
            const t = performance.now();
            checkpoint();
            if (performance.now() - t < workerData.quickPassMs) break;
          }
          Atomics.store(state, ${REWIND}, 1);
          // Wakes the deciding thread's event loop: an idle server finishes the rewind between requests.
          parentPort.postMessage(0);
        }
      }
      Atomics.add(state, ${CHECKPOINTS}, 1);
      Atomics.store(state, ${SEEN}, seen);
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
  /** @internal The worker thread's nice value (benchmarks compare priorities in one run); set before the worker starts. */
  workerNice = WORKER_NICE;
  private writesSinceRewindDue = 0;
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
   * Call before each write transaction of the deciding connection: when the worker has copied
   * nearly all of a WAL past RESTART_PAGES, copies the rest here (a PASSIVE checkpoint on this
   * connection, which never waits for a lock), so that this write starts the WAL from its
   * beginning. Otherwise one shared-memory load.
   */
  beforeWrite(): void {
    if (this.worker === null || Atomics.load(this.state, REWIND) === 0 || this.sqlite.inTransaction) return;
    // The flag is seen at once, the worker's message only when the event loop turns: a server
    // gets that chance (it turns within a request or two) before a decision takes the copy on.
    if (++this.writesSinceRewindDue < REWIND_DEFER_WRITES) return;
    this.finishRewind();
  }

  /** The deciding thread's part of a rewind: copy what the worker left (PASSIVE on this connection). */
  private finishRewind(): boolean {
    this.writesSinceRewindDue = 0;
    let copiedAll = false;
    try {
      const [result] = this.sqlite.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
      copiedAll = result !== undefined && result.busy === 0 && result.log === result.checkpointed;
    } catch {
      // Busy or failing: the WAL simply is not rewound this time; the write goes on.
    }
    Atomics.add(this.state, copiedAll ? RESTARTS : GAVE_UP, 1);
    Atomics.store(this.state, REWIND, 0);
    return copiedAll;
  }

  /**
   * The worker's message that a rewind is due, handled when the event loop turns: between
   * requests, a server copies the rest here instead of in its next decision (which then only
   * writes the WAL's new header). A loop that never yields finishes it in beforeWrite instead.
   */
  private readonly onRewindDue = () => {
    if (this.worker === null || Atomics.load(this.state, REWIND) === 0 || this.sqlite.inTransaction || !this.sqlite.open) return;
    if (this.finishRewind()) Atomics.add(this.state, IDLE_REWINDS, 1);
  };

  /** Rewinds finished between decisions rather than inside one (for tests and benchmarks). */
  get idleRewinds(): number {
    return Atomics.load(this.state, IDLE_REWINDS);
  }

  /** Checkpoint rounds the worker completed (for tests and benchmarks). */
  get backgroundCheckpoints(): number {
    return Atomics.load(this.state, CHECKPOINTS);
  }

  /** Rewinds that could not copy everything (another connection held an old snapshot or wrote), for tests and benchmarks. */
  get restartsGivenUp(): number {
    return Atomics.load(this.state, GAVE_UP);
  }

  /** Times the deciding thread finished the copy of the whole WAL, after each of which its next write rewinds the WAL (for tests and benchmarks). */
  get restarts(): number {
    return Atomics.load(this.state, RESTARTS);
  }

  /** Whether the worker is idle: its last round covered every commit so far, or it waits for this thread's rewind (benchmarks wait for it between cases). */
  get caughtUp(): boolean {
    return this.worker === null || Atomics.load(this.state, SEEN) === this.commits || Atomics.load(this.state, REWIND) === 1;
  }

  /** The worker's Linux thread id once it runs (0 before, or elsewhere), for benchmarks' per-thread attribution. */
  get workerThreadId(): number {
    return Atomics.load(this.state, TID);
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
        maxCatchUpPasses: 2,
        quickPassMs: 3,
        nice: this.workerNice,
      },
      // The checkpointer needs little; keep the worker's heap small.
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    // A worker that fails leaves the backstop in charge; nothing to report on the decision path.
    worker.on('error', () => {});
    worker.on('message', this.onRewindDue);
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
