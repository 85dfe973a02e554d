/**
 * The run path: 5 foreground in-process hooks that allow, persisted, sequential invocations
 * (with what ships: tamper-evidence chain and default redaction), against a baseline that writes the same rows with hand-written prepared statements and no
 * runner logic, measured in the same run (alternating blocks, so machine noise hits both).
 * The baselines checkpoint the way the runner does (the background checkpointer of
 * ledger/checkpoint.ts), so that their p99 / p50 is the floor the runner's is compared with.
 *
 * It also says what the slowest 1% of the runner's invocations overlapped: a GC (the heap
 * shrank), the checkpoint worker's FULL checkpoint (the one wait it imposes), time spent
 * runnable but off the CPU (another process had it: Linux's schedstat), or none of these.
 *
 * `npm run bench` builds first: it measures dist/, the code that ships.
 *
 *   npm run bench                          # 3000 invocations each, synchronous=NORMAL
 *   npm run bench -- --n 10000 --sync full
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// The built package, as users run it: tsx's transform of src/ wraps every closure it creates in
// a naming helper, which costs microseconds per hook on this path and is not what ships.
import { allow, createRunner, defineHooks, SqliteLedger } from '../dist/index.js';
import { checkpointerFor, type Checkpointer } from '../dist/ledger/checkpoint.js';
import { flag, printTable, stats } from './bench-support.js';
import { ThreadClocks, threadDelta, threadTotals } from './bench-threads.js';

const N = Number(flag('n', '3000'));
const SYNC = flag('sync', 'normal') as 'normal' | 'full';
const BLOCK = 250;
const dir = mkdtempSync(join(tmpdir(), 'hookledger-bench-'));

const hookSet = defineHooks({
  name: 'bench',
  version: '1',
  hooks: [1, 2, 3, 4, 5].map((i) => ({
    id: `allow-${i}`,
    point: 'pre_tool_use',
    priority: i * 10,
    capability: 'guardrail' as const,
    run: () => allow(),
  })),
});
const invocation = (i: number) => ({
  point: 'pre_tool_use' as const,
  sessionId: 'bench',
  toolName: 'Bash',
  toolUseId: `toolu_${i}`,
  toolInput: { command: `echo ${i}` },
});

function open(name: string): SqliteLedger {
  return SqliteLedger.open({ path: join(dir, `${name}.db`), synchronous: SYNC });
}

/**
 * The same rows the runner writes, by hand: an insert before the hooks, one transaction after.
 * With `chain`, also the tamper-evidence row the runner appends (head read, sha-256 over the
 * row values, insert), since that is one of the rows written per invocation.
 */
function baseline(ledger: SqliteLedger, chain: boolean) {
  const s = ledger.sqlite;
  s.prepare(
    `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at) VALUES ('b', 'b', '1', 'deny_wins', '{}', 0)`,
  ).run();
  const host = hostname();
  const insertInvocation = s.prepare(
    `INSERT INTO invocations (hook_set_id, point, event_name, session_id, turn, tool_name, tool_use_id, agent, cwd, input_json, invocation_json, raw_json, status, started_at, pid, host)
     VALUES (1, 'pre_tool_use', NULL, ?, NULL, 'Bash', ?, NULL, NULL, ?, ?, NULL, 'running', ?, ?, ?)`,
  );
  const update = s.prepare(
    `UPDATE invocations SET status = 'completed', decision = 'allow', decisive_hook_id = 'allow-1', reason_code = NULL, message = NULL, modified_input_json = NULL, context_json = NULL, finished_at = ?, duration_us = ? WHERE id = ?`,
  );
  const insertOutcome = s.prepare(
    `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, execution_order, mode, capability, runtime, status, decision, decisive, reason_code, message, payload_json, modified_input_json, additional_context, failure_reason, failure_detail, skip_reason, skipped_by, timeout_ms, started_at, duration_us)
     VALUES (?, ?, 'pre_tool_use', ?, ?, ?, 'foreground', 'guardrail', 'in_process', 'completed', 'allow', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 5000, ?, 1)`,
  );
  const head = s.prepare('SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1').raw();
  const insertLink = s.prepare('INSERT INTO chain (seq, kind, ref_id, prev_hash, hash, at, rows) VALUES (?, ?, ?, ?, ?, ?, ?)');
  // The checkpoint regime the runner's writer has (ledger/checkpoint.ts): the same floor for p99.
  const checkpointer = checkpointerFor(s, ledger.path);
  const finish = s.transaction((id: number, input: string, invocationJson: string) => {
    const at = Date.now();
    update.run(at, 10, id);
    const values: unknown[] = [id, input, invocationJson, at];
    const labels = [`i${id}`];
    for (let h = 0; h < 5; h++) {
      const outcome = [id, `allow-${h + 1}`, (h + 1) * 10, h, h, h === 0 ? 1 : 0, at];
      const outcomeId = Number(insertOutcome.run(...outcome).lastInsertRowid);
      values.push(...outcome);
      labels.push(`o${outcomeId}`);
    }
    if (chain) {
      const [seq, prev] = (head.get() as [number, string] | undefined) ?? [0, '0'.repeat(64)];
      const hash = createHash('sha256')
        .update(`${prev}|${JSON.stringify(values)}`)
        .digest('hex');
      // The runner's `rows` column: each row's label and an 8-digit check.
      insertLink.run(seq + 1, 'invocation', id, prev, hash, at, labels.map((l) => `${l}:00000000`).join(' '));
    }
  });
  return async (i: number) => {
    const inv = invocation(i);
    const input = JSON.stringify(inv.toolInput);
    // The canonical invocation text the runner stores (every field, nulls included), not the input object.
    const invocationJson = JSON.stringify({
      point: inv.point,
      eventName: null,
      sessionId: inv.sessionId,
      turn: null,
      toolName: inv.toolName,
      toolUseId: inv.toolUseId,
      toolInput: inv.toolInput,
      toolResponse: null,
      prompt: null,
      error: null,
      agent: null,
      cwd: null,
      meta: {},
    });
    checkpointer.beforeWrite();
    const id = Number(
      insertInvocation.run(inv.sessionId, inv.toolUseId, input, invocationJson, Date.now(), process.pid, host).lastInsertRowid,
    );
    checkpointer.beforeWrite();
    finish.immediate(id, input, invocationJson);
    checkpointer.committed();
  };
}

interface Cause {
  us: number;
  gc: boolean;
  /** Heap growth over the invocation, bytes (what it allocated, when no GC ran in it). */
  grew: number;
  rewind: boolean;
  /** Time this thread was runnable but waiting for a CPU, ms. */
  offCpuMs: number;
  /** Times this thread went to sleep (I/O, a lock, a wait): voluntary context switches. */
  slept: number;
  /** Whether a checkpoint worker thread was scheduled in meanwhile. */
  workerRan: boolean;
  /** Other threads of this process (V8's GC and compiler helpers, libuv) scheduled in meanwhile. */
  helpersRan: number;
}

// Each thread's run-queue time (runnable but waiting for a CPU) and times scheduled in (Linux
// schedstat), and the deciding thread's voluntary context switches (/proc status: each time it
// slept on I/O, a lock or a wait); 0 elsewhere. (schedstat's CPU time of a running thread only
// advances at scheduler ticks: no use per invocation.)
const clocks = new ThreadClocks();
let workerIndexes = new Set<number>();

/** What the slowest 1% of a case's invocations overlapped, each counted under its first cause in this order. */
function describeTail(name: string, all: Cause[]): string {
  const slow = [...all].sort((a, b) => b.us - a.us).slice(0, Math.max(1, Math.ceil(all.length / 100)));
  let rewind = 0;
  let gc = 0;
  let offCpu = 0;
  let blocked = 0;
  let offCpuWorker = 0;
  let offCpuHelpers = 0;
  for (const c of slow) {
    if (c.rewind) rewind += 1;
    else if (c.gc) gc += 1;
    else if (c.offCpuMs * 1000 > c.us / 2) {
      offCpu += 1;
      if (c.workerRan) offCpuWorker += 1;
      else if (c.helpersRan > 0) offCpuHelpers += 1;
    } else if (c.slept > 0) blocked += 1;
  }
  const other = slow.length - rewind - gc - offCpu - blocked;
  return `slowest 1% of ${name} (${slow.length}, from ${slow[slow.length - 1]!.us.toFixed(0)} µs): ${rewind} copied the rest of the WAL for a rewind, ${gc} a GC, ${offCpu} waited mostly for a CPU (${offCpuWorker} while a checkpoint worker ran, ${offCpuHelpers} while other threads of this process ran, ${offCpu - offCpuWorker - offCpuHelpers} other processes only), ${blocked} slept (I/O, a lock), ${other} none of these (ran on the CPU)`;
}

/**
 * How many invocations slept (the deciding thread blocked: on I/O such as a write throttled by
 * the page cache or an fsync, or on a lock), and how long those took: with synchronous=NORMAL a
 * commit writes the WAL without syncing it, so a disk-bound tail shows up here, a CPU-bound one
 * does not.
 */
function describeSleeps(name: string, all: Cause[]): string {
  const slept = all.filter((c) => c.slept > 0);
  if (slept.length === 0) return `sleeps, ${name}: none of ${all.length} invocations slept`;
  const s = stats(slept.map((c) => c.us));
  return `sleeps, ${name}: ${slept.length} of ${all.length} invocations slept (I/O, a lock), taking p50 ${s.p50.toFixed(0)} µs, p99 ${s.p99.toFixed(0)} µs`;
}

/**
 * What a case allocates per invocation (the heap's growth over invocations that met no GC;
 * the benchmark's own reads of the heap included, a few hundred bytes) and the share of
 * invocations that met a GC: below about 0.5%, scavenges stay out of the 99th percentile.
 */
function describeAllocation(name: string, all: Cause[]): string {
  const clean = all.filter((c) => !c.gc);
  const perInvocation = clean.reduce((sum, c) => sum + c.grew, 0) / Math.max(1, clean.length);
  const gcs = all.length - clean.length;
  return `allocation, ${name}: ${(perInvocation / 1024).toFixed(1)} KB per invocation; ${gcs} of ${all.length} invocations (${((100 * gcs) / all.length).toFixed(2)}%) met a GC`;
}

/**
 * Waiting for a CPU at all, per case: in how many invocations the deciding thread was runnable
 * but off a CPU for 20 µs or more (on 2 cores: two other threads were runnable), and in how many
 * of those a checkpoint worker, or another thread of this process, was scheduled in.
 */
function describeWaits(name: string, all: Cause[]): string {
  const waited = all.filter((c) => c.offCpuMs >= 0.02);
  const worker = waited.filter((c) => c.workerRan).length;
  const helpers = waited.filter((c) => !c.workerRan && c.helpersRan > 0).length;
  return `waits for a CPU, ${name}: ${waited.length} of ${all.length} invocations (${((100 * waited.length) / all.length).toFixed(2)}%) waited >= 20 µs; a checkpoint worker ran in ${worker} of them, only other threads of this process in ${helpers}, neither in ${waited.length - worker - helpers}`;
}

// A pure CPU loop (no allocation, no system call) of about the runner's p50: what this machine
// does to ~145 µs of computation, in the same run.
let sink = 1;
function spin(iterations: number): void {
  let x = sink | 1;
  for (let j = 0; j < iterations; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  sink = x;
}
function calibrateSpin(targetUs: number): number {
  let iterations = 20_000;
  for (let round = 0; round < 5; round++) {
    const times: number[] = [];
    for (let i = 0; i < 51; i++) {
      const t = process.hrtime.bigint();
      spin(iterations);
      times.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    iterations = Math.max(1, Math.round((iterations * targetUs) / stats(times).p50));
  }
  return iterations;
}

type Case = (i: number) => unknown;
interface Measured {
  samples: Record<string, number[]>;
  causes: Record<string, Cause[]>;
  wall: Record<string, number>;
  threads: string[];
}

/**
 * Runs the cases in alternating blocks (so machine noise hits all of them), recording for each
 * invocation what it may have overlapped (read outside the timed span).
 */
async function measure(cases: Record<string, Case>, checkpointers: Checkpointer[], settle: boolean): Promise<Measured> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const causes: Record<string, Cause[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const wall: Record<string, number> = Object.fromEntries(Object.keys(cases).map((k) => [k, 0]));
  const rewinds = () => checkpointers.reduce((sum, c) => sum + c.restarts, 0);
  for (const fn of Object.values(cases)) for (let i = 0; i < 200; i++) await fn(-i - 1); // warm-up
  // The workers started during the warm-up (after 64 commits): find their threads.
  await new Promise((resolve) => setTimeout(resolve, 50));
  clocks.rescan();
  const names = new Map<number, string>([[clocks.mainTid, 'main (deciding) thread']]);
  for (const c of checkpointers) if (c.workerThreadId > 0) names.set(c.workerThreadId, 'checkpoint worker');
  workerIndexes = new Set(clocks.tids.flatMap((tid, i) => (names.get(tid) === 'checkpoint worker' ? [i] : [])));
  const before = clocks.read();
  const scratch = [new Float64Array(before.length), new Float64Array(before.length)] as const;
  for (let start = 0; start < N; start += BLOCK) {
    for (const [name, fn] of Object.entries(cases)) {
      // One ledger, one checkpoint worker: a process writes one ledger, so each writing case runs
      // with its own worker only, not with the previous case's still copying its last block. (The
      // CPU loop follows the runner unsettled: it runs while the runner's worker catches up.)
      const waitFrom = Date.now();
      while (settle && !name.startsWith('CPU') && !checkpointers.every((c) => c.caughtUp) && Date.now() - waitFrom < 1000)
        await new Promise((r) => setTimeout(r, 5));
      const t0 = process.hrtime.bigint();
      for (let i = start; i < Math.min(N, start + BLOCK); i++) {
        // Read outside the timed span: what the invocation may have overlapped.
        const rewound = rewinds();
        const sleeps = clocks.sleeps();
        clocks.read(scratch[0]);
        const heap = getHeapStatistics().used_heap_size;
        const t = process.hrtime.bigint();
        await fn(i);
        const us = Number(process.hrtime.bigint() - t) / 1000;
        const heapAfter = getHeapStatistics().used_heap_size;
        clocks.read(scratch[1]);
        const threads = threadDelta(scratch[0], scratch[1], workerIndexes);
        samples[name]!.push(us);
        causes[name]!.push({
          us,
          gc: heapAfter < heap,
          grew: heapAfter - heap,
          rewind: rewinds() !== rewound,
          offCpuMs: threads.mainWaitMs,
          slept: clocks.sleeps() - sleeps,
          workerRan: threads.watchedRan,
          helpersRan: threads.othersRan,
        });
      }
      wall[name]! += Number(process.hrtime.bigint() - t0) / 1e9;
    }
  }
  return { samples, causes, wall, threads: threadTotals(clocks, before, clocks.read(), names) };
}

/** A ledger whose writes never checkpoint (no worker, no automatic checkpoint) until `drain`. */
function openUncheckpointed(name: string): SqliteLedger {
  const ledger = open(name);
  checkpointerFor(ledger.sqlite, ledger.path).stop();
  ledger.sqlite.pragma('wal_autocheckpoint = 0');
  return ledger;
}

const ratio = (samples: number[]) => {
  const s = stats(samples);
  return (s.p99 / s.p50).toFixed(2);
};

async function main(): Promise<void> {
  const CPU_US = Number(flag('cpu-us', '145'));
  const spinIterations = calibrateSpin(CPU_US);
  const cpuCase: Case = () => spin(spinIterations);

  // Phase 1, the machine without checkpoints: the same writes and the runner with no checkpoint
  // in the timed window (the WAL grows; one checkpoint after), next to the CPU loop.
  const quietChain = openUncheckpointed('quiet-chain');
  const quietRunnerLedger = openUncheckpointed('quiet-runner');
  const quietRunner = createRunner({ hookSet, ledger: quietRunnerLedger });
  const quiet = await measure(
    {
      'CPU loop': cpuCase,
      'baseline + chain row, no checkpoint': baseline(quietChain, true),
      'runner.run, no checkpoint': (i) => quietRunner.run(invocation(i)),
    },
    [],
    false,
  );
  const walPages = [quietChain, quietRunnerLedger].map((l) => Math.round(statSync(`${l.path}-wal`).size / 4120));
  for (const l of [quietChain, quietRunnerLedger]) l.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  await quietRunner.close();
  await quietChain.close();
  await quietRunnerLedger.close();

  // Phase 2, what ships: checkpoints on the worker (ledger/checkpoint.ts), for the runner and the floors.
  const runnerLedger = open('runner');
  const baselineLedger = open('baseline');
  const chainLedger = open('baseline-chain');
  const runner = createRunner({ hookSet, ledger: runnerLedger });
  const cases: Record<string, Case> = {
    'baseline (prepared statements)': baseline(baselineLedger, false),
    'baseline + chain row': baseline(chainLedger, true),
    'hookledger runner.run': (i) => runner.run(invocation(i)),
    'CPU loop, after the runner': cpuCase,
  };
  const ledgers = [runnerLedger, baselineLedger, chainLedger];
  // --ab-nice N: the runner once more, its checkpoint worker at nice N, in the same run (A/B of the worker's priority).
  const abNice = flag('ab-nice', '');
  if (abNice !== '') {
    const abLedger = open('runner-ab');
    checkpointerFor(abLedger.sqlite, abLedger.path).workerNice = Number(abNice);
    const abRunner = createRunner({ hookSet, ledger: abLedger });
    cases[`runner.run, worker at nice ${abNice}`] = (i) => abRunner.run(invocation(i));
    ledgers.push(abLedger);
  }
  const checkpointers = ledgers.map((l) => checkpointerFor(l.sqlite, l.path));
  const { samples, causes, wall, threads } = await measure(cases, checkpointers, !process.argv.includes('--no-settle'));
  await runner.close();
  const base = stats(samples['baseline (prepared statements)']!);
  const chained = stats(samples['baseline + chain row']!);
  console.log(
    `run path: ${N} sequential invocations each, 5 foreground in-process hooks that allow, synchronous=${SYNC.toUpperCase()}, WAL; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  printTable(
    ['case', 'n', 'p50 µs', 'p99 µs', 'p99 / p50', 'inv/s', 'p50 vs baseline', 'p50 vs baseline+chain'],
    Object.keys(cases)
      .filter((name) => name !== 'CPU loop, after the runner')
      .map((name) => {
        const s = stats(samples[name]!);
        return [
          name,
          s.n,
          s.p50.toFixed(1),
          s.p99.toFixed(1),
          (s.p99 / s.p50).toFixed(2),
          Math.round(N / wall[name]!),
          (s.p50 / base.p50).toFixed(2),
          (s.p50 / chained.p50).toFixed(2),
        ];
      }),
  );
  console.log(
    `\nfloors that isolate the machine (same run; the first three with no checkpoint in the timed window, WAL ${walPages.join(' and ')} pages at the end):`,
  );
  printTable(
    ['case', 'n', 'p50 µs', 'p99 µs', 'p99 / p50'],
    [
      ...Object.entries(quiet.samples).map(([name, s]) => [name, s] as const),
      ["CPU loop, while the runner's worker catches up", samples['CPU loop, after the runner']!] as const,
    ].map(([name, all]) => {
      const s = stats(all);
      return [name, s.n, s.p50.toFixed(1), s.p99.toFixed(1), (s.p99 / s.p50).toFixed(2)];
    }),
  );
  const runnerStats = stats(samples['hookledger runner.run']!);
  console.log(
    `\np99 / p50: hookledger runner.run ${(runnerStats.p99 / runnerStats.p50).toFixed(2)} (goal <= 3); the floor in the same run (baseline + chain row, same checkpointing) ${(chained.p99 / chained.p50).toFixed(2)}`,
  );
  console.log(
    `floors, p99 / p50 in the same run: (a) the same writes, no checkpoint in the window ${ratio(quiet.samples['baseline + chain row, no checkpoint']!)}; (b) with the checkpoint worker ${(chained.p99 / chained.p50).toFixed(2)}; (c) a pure CPU loop of ~${CPU_US} µs ${ratio(quiet.samples['CPU loop']!)} (${ratio(samples['CPU loop, after the runner']!)} while the runner's checkpoint worker caught up); runner.run with no checkpoint in the window ${ratio(quiet.samples['runner.run, no checkpoint']!)}`,
  );
  for (const name of Object.keys(cases).filter((n) => !n.startsWith('CPU') && !n.startsWith('baseline (')))
    console.log(describeTail(name, causes[name]!));
  console.log(describeTail('runner.run, no checkpoint', quiet.causes['runner.run, no checkpoint']!));
  for (const name of ['hookledger runner.run', 'baseline + chain row']) console.log(describeSleeps(name, causes[name]!));
  for (const name of Object.keys(cases).filter((n) => !n.startsWith('baseline'))) console.log(describeWaits(name, causes[name]!));
  for (const name of ['runner.run, no checkpoint', 'CPU loop']) console.log(describeWaits(name, quiet.causes[name]!));
  for (const name of Object.keys(cases).filter((n) => !n.startsWith('CPU'))) console.log(describeAllocation(name, causes[name]!));
  console.log('threads of this process while the checkpointed cases ran:');
  for (const line of threads) console.log(line);
  console.log('threads of this process while the cases without checkpoints ran:');
  for (const line of quiet.threads) console.log(line);
  for (const ledger of ledgers) await ledger.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
