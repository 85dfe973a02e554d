/**
 * Per-thread scheduler clocks of a process (Linux /proc), for the benchmarks' tail attribution:
 * for each thread, time on a CPU, time runnable but waiting for one (run delay) and how often it
 * was scheduled in (schedstat), and how often it went to sleep (voluntary context switches).
 * Read outside the timed span, before and after each measured operation: which other threads
 * ran during a slow one, and whether the measured thread waited for a CPU (which, on a 2-core
 * machine, means at least two other threads were runnable). Elsewhere every figure is 0.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

const buffer = Buffer.alloc(4096);

function openOrNull(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}

/** Reads a file into the shared buffer without allocating (the readings sit next to timed spans), returning its length. */
function readRaw(fd: number | null): number {
  if (fd === null) return 0;
  try {
    return readSync(fd, buffer, 0, buffer.length, 0);
  } catch {
    return 0; // The thread ended.
  }
}

/** The unsigned decimal number at `at` in the shared buffer, and where it ends. */
function numberAt(at: number, end: number): [number, number] {
  let value = 0;
  let i = at;
  for (; i < end && buffer[i]! >= 48 && buffer[i]! <= 57; i++) value = value * 10 + buffer[i]! - 48;
  return [value, i];
}

const VOLUNTARY = Buffer.from('\nvoluntary_ctxt_switches:');

/** One reading: for each thread, [cpu ns, run delay ns, times scheduled in]. */
export type ThreadReading = Float64Array;

/** Scheduler clocks of every thread of one process (this one by default). */
export class ThreadClocks {
  readonly tids: number[] = [];
  private fds: (number | null)[] = [];
  private readonly statusFd: number | null;

  constructor(
    private readonly pid: number = process.pid,
    /** The thread whose sleeps are counted (the deciding thread); the process's main thread by default. */
    readonly mainTid: number = pid,
  ) {
    this.statusFd = openOrNull(`/proc/${pid}/task/${mainTid}/status`);
    this.rescan();
  }

  /** Picks up threads started since (call outside timed spans: a worker, V8's helpers). */
  rescan(): void {
    for (const fd of this.fds) if (fd !== null) closeSync(fd);
    this.tids.length = 0;
    let tids: number[] = [];
    try {
      tids = readdirSync(`/proc/${this.pid}/task`).map(Number);
    } catch {
      // Not Linux: no threads to read.
    }
    // The main thread first, so index 0 is always the deciding thread.
    tids.sort((a, b) => (a === this.mainTid ? -1 : b === this.mainTid ? 1 : a - b));
    this.tids.push(...tids);
    this.fds = tids.map((tid) => openOrNull(`/proc/${this.pid}/task/${tid}/schedstat`));
  }

  /** Every thread's clocks now. */
  read(into: ThreadReading = new Float64Array(this.tids.length * 3)): ThreadReading {
    for (let i = 0; i < this.fds.length; i++) {
      const end = readRaw(this.fds[i]!);
      let at = 0;
      for (let field = 0; field < 3; field++) {
        const [value, next] = numberAt(at, end);
        into[i * 3 + field] = value;
        at = next + 1;
      }
    }
    return into;
  }

  /** The main thread's voluntary context switches so far (each time it slept: I/O, a lock, a wait). */
  sleeps(): number {
    const end = readRaw(this.statusFd);
    const at = buffer.subarray(0, end).indexOf(VOLUNTARY);
    if (at < 0) return 0;
    let i = at + VOLUNTARY.length;
    while (i < end && (buffer[i] === 9 || buffer[i] === 32)) i++;
    return numberAt(i, end)[0];
  }
}

/** What happened on a process's threads between two readings. */
export interface ThreadDelta {
  /** The main thread's time runnable but off a CPU, ms. */
  mainWaitMs: number;
  /** Threads other than the main one (and other than `exclude`) that were scheduled in. */
  othersRan: number;
  /** Their CPU time, ms. */
  othersCpuMs: number;
  /** Whether the thread at index `watch` (a checkpoint worker) was scheduled in. */
  watchedRan: boolean;
}

/** Differences between two readings of the same thread list. */
export function threadDelta(before: ThreadReading, after: ThreadReading, watch: ReadonlySet<number> = new Set()): ThreadDelta {
  let othersRan = 0;
  let othersCpuMs = 0;
  let watchedRan = false;
  for (let i = 1; i * 3 < after.length; i++) {
    const ran = after[i * 3 + 2]! - before[i * 3 + 2]!;
    if (ran <= 0) continue;
    if (watch.has(i)) watchedRan = true;
    else othersRan += 1;
    othersCpuMs += (after[i * 3]! - before[i * 3]!) / 1e6;
  }
  return { mainWaitMs: (after[1]! - before[1]!) / 1e6, othersRan, othersCpuMs, watchedRan };
}

/** Per-thread totals between two readings: CPU ms, run delay ms, times scheduled in. */
export function threadTotals(clocks: ThreadClocks, before: ThreadReading, after: ThreadReading, names: Map<number, string>): string[] {
  const lines: string[] = [];
  for (let i = 0; i < clocks.tids.length; i++) {
    const cpu = (after[i * 3]! - before[i * 3]!) / 1e6;
    const delay = (after[i * 3 + 1]! - before[i * 3 + 1]!) / 1e6;
    const slices = after[i * 3 + 2]! - before[i * 3 + 2]!;
    if (slices === 0) continue;
    const tid = clocks.tids[i]!;
    lines.push(
      `  ${(names.get(tid) ?? (i === 0 ? 'main (deciding) thread' : 'node/V8 helper thread')).padEnd(34)} tid ${String(tid).padStart(7)}: CPU ${cpu.toFixed(0).padStart(6)} ms, waited for a CPU ${delay.toFixed(0).padStart(5)} ms, scheduled in ${slices} times`,
    );
  }
  return lines;
}
