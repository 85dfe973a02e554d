/**
 * Replay throughput and memory: records N invocations (default 100,000) through the live
 * runner with a 5-hook in-process set, then replays them (a) against the same set (nothing
 * changes), (b) against a tightened set (about 1 in 7 newly denied), at concurrency 1 and 4.
 * The baseline, measured in the same run, is streaming the selection alone (keyset batches
 * and JSON parsing, no hooks, no writes): the ratio says what replaying costs on top of reading.
 *
 *   npm run bench:replay                      # 100,000 invocations, 3 rounds
 *   npm run bench:replay -- --n 20000 --rounds 1
 *
 * Measures the built package (dist/; `npm run bench:replay` builds first), not src/ through tsx.
 *
 * Memory: peak heap used and RSS sampled every 1,000 invocations, and the retained heap (heap
 * used right after a forced GC) at 10% and at the end of the replay: "flat" means the heap retained at
 * the end of a 100,000 replay is about what it was after the first 10,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { defineHooks, type HookDefinition } from '../dist/domain/hooks.js';
import type { InvocationInput } from '../dist/domain/invocation.js';
import { ask, deny } from '../dist/domain/results.js';
import { SqliteLedger } from '../dist/ledger/sqlite-ledger.js';
import { ReplaySource } from '../dist/ledger/queries/replay-source.js';
import { replay } from '../dist/replay/replay.js';
import { rebuildInvocation } from '../dist/replay/rerun.js';
import { createRunner } from '../dist/runner/runner.js';
import { flag, percentile, printTable } from './bench-support.js';

const N = Number(flag('n', '100000'));

// A forced collection before reading the heap separates what a replay retains from garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const ROUNDS = Number(flag('rounds', '3'));

const commandOf = (inv: { toolInput: unknown }) => String((inv.toolInput as { command?: string } | null)?.command ?? '');
const pathOf = (inv: { toolInput: unknown }) => String((inv.toolInput as { file_path?: string } | null)?.file_path ?? '');

function hooks(tight: boolean): HookDefinition[] {
  return [
    {
      id: 'no-rm-rf',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      priority: 10,
      run: (inv) => ((tight ? /\brm\s/ : /rm -rf/).test(commandOf(inv)) ? deny('no rm', 'safety_violation') : undefined),
    },
    {
      id: 'no-env',
      point: 'pre_tool_use',
      match: 'Read|Write|Edit',
      capability: 'guardrail',
      priority: 20,
      run: (inv) => (pathOf(inv).includes('.env') ? deny('secrets stay secret') : undefined),
    },
    {
      id: 'confirm-push',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      priority: 30,
      run: (inv) => (commandOf(inv).includes('push --force') ? ask('force push?') : undefined),
    },
    {
      id: 'stay-in-project',
      point: 'pre_tool_use',
      match: 'Write|Edit',
      capability: 'guardrail',
      priority: 40,
      run: (inv) => (pathOf(inv).startsWith('/app/') ? undefined : deny('outside the project')),
    },
    { id: 'audit', point: ['pre_tool_use', 'user_prompt_submit'], run: () => undefined },
  ];
}

function invocation(i: number): InvocationInput {
  const session = `s-${Math.floor(i / 200)}`;
  switch (i % 7) {
    case 0:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Bash',
        toolUseId: `t${i}`,
        toolInput: { command: `npm test -- --shard ${i % 5}` },
      };
    case 1:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Read',
        toolUseId: `t${i}`,
        toolInput: { file_path: i % 50 === 1 ? '/app/.env' : `/app/src/m${i % 300}.ts` },
      };
    case 2:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Bash',
        toolUseId: `t${i}`,
        toolInput: { command: i % 70 === 2 ? 'rm -rf build' : `rm build/tmp-${i}.log` },
      };
    case 3:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Write',
        toolUseId: `t${i}`,
        toolInput: { file_path: `/app/src/m${i % 300}.ts`, content: 'export const x = 1;\n'.repeat(5) },
      };
    case 4:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Bash',
        toolUseId: `t${i}`,
        toolInput: { command: i % 140 === 4 ? 'git push --force' : 'git status' },
      };
    case 5:
      return { point: 'user_prompt_submit', sessionId: session, prompt: `please fix test ${i % 40}` };
    default:
      return {
        point: 'pre_tool_use',
        sessionId: session,
        toolName: 'Grep',
        toolUseId: `t${i}`,
        toolInput: { pattern: 'TODO', path: '/app/src' },
      };
  }
}

async function generate(ledger: SqliteLedger, n: number): Promise<number> {
  const t0 = performance.now();
  const runner = createRunner({ hookSet: defineHooks({ name: 'bench', version: '1', hooks: hooks(false) }), ledger });
  // The recording is setup, not what is measured: group the runner's per-invocation commits
  // (which nest as savepoints) into large transactions so that 100,000 take seconds, not minutes.
  for (let start = 0; start < n; start += 5000) {
    ledger.sqlite.exec('BEGIN IMMEDIATE');
    for (let i = start; i < Math.min(n, start + 5000); i++) await runner.run(invocation(i));
    ledger.sqlite.exec('COMMIT');
  }
  await runner.close();
  return performance.now() - t0;
}

interface Measure {
  label: string;
  n: number;
  rates: number[];
  /** ms per 1,000 invocations, every 1,000, across rounds. */
  perThousand: number[];
  peakHeapMb: number;
  peakRssMb: number;
  /** Heap used after a forced GC at 10% and at 100% of the last round. */
  retainedMb: [number, number];
  changed: number;
}

function sampler() {
  let peakHeap = 0;
  let peakRss = 0;
  return {
    sample() {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed);
      peakRss = Math.max(peakRss, m.rss);
    },
    get heapMb() {
      return peakHeap / 1048576;
    },
    get rssMb() {
      return peakRss / 1048576;
    },
  };
}

async function measureReplay(ledger: SqliteLedger, label: string, tight: boolean, concurrency: number, limit?: number): Promise<Measure> {
  const hookSet = defineHooks({ name: 'bench', version: tight ? '2' : '1', hooks: hooks(tight) });
  const rates: number[] = [];
  const perThousand: number[] = [];
  const memory = sampler();
  let changed = 0;
  let n = 0;
  let retained: [number, number] = [0, 0];
  for (let round = 0; round < ROUNDS; round++) {
    gc();
    let last = performance.now();
    let tenth = 0;
    const t0 = last;
    const result = await replay({
      ledger,
      hookSet,
      concurrency,
      ...(limit !== undefined ? { limit } : {}),
      onProgress: (p) => {
        if (p.done % 1000 === 0) {
          memory.sample();
          if (round === ROUNDS - 1 && tenth === 0 && p.done >= p.total / 10) {
            gc();
            tenth = process.memoryUsage().heapUsed;
          }
          const now = performance.now();
          perThousand.push(now - last);
          last = now;
        }
      },
    });
    if (round === ROUNDS - 1) {
      gc();
      retained = [tenth / 1048576, process.memoryUsage().heapUsed / 1048576];
    }
    const ms = performance.now() - t0;
    memory.sample();
    n = result.totals.replayed;
    changed = result.changed;
    rates.push((n * 1000) / ms);
  }
  return { label, n, rates, perThousand, peakHeapMb: memory.heapMb, peakRssMb: memory.rssMb, retainedMb: retained, changed };
}

async function measureStreaming(ledger: SqliteLedger): Promise<Measure> {
  const rates: number[] = [];
  const perThousand: number[] = [];
  const memory = sampler();
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    let last = t0;
    const source = new ReplaySource(ledger, { filter: {} });
    n = 0;
    for (let rows = source.next(); rows.length > 0; rows = source.next()) {
      source.recordedOutcomes(rows.map((r) => r.id));
      for (const row of rows) {
        rebuildInvocation(row);
        if (++n % 1000 === 0) {
          const now = performance.now();
          perThousand.push(now - last);
          last = now;
          memory.sample();
        }
      }
    }
    rates.push((n * 1000) / (performance.now() - t0));
  }
  return {
    label: 'baseline: stream + rebuild only',
    n,
    rates,
    perThousand,
    peakHeapMb: memory.heapMb,
    peakRssMb: memory.rssMb,
    retainedMb: [NaN, NaN],
    changed: 0,
  };
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

async function main(): Promise<void> {
  // --db PATH keeps the recorded ledger there and reuses it on the next run (same --n).
  const keep = flag('db', '');
  const dir = keep ? null : mkdtempSync(join(tmpdir(), 'hookledger-bench-replay-'));
  const ledger = SqliteLedger.open({ path: keep || join(dir!, 'ledger.db') });
  try {
    const existing = ledger.sqlite.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
    if (existing === 0) {
      console.log(`recording ${N.toLocaleString('en')} invocations through the live runner (5 in-process hooks)...`);
      const genMs = await generate(ledger, N);
      console.log(`recorded in ${(genMs / 1000).toFixed(1)}s`);
    } else {
      console.log(`reusing ${existing.toLocaleString('en')} recorded invocations in ${keep}`);
    }
    console.log(
      `${ROUNDS} round(s) per scenario; node ${process.version}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
    );
    const results: Measure[] = [];
    results.push(await measureStreaming(ledger));
    results.push(await measureReplay(ledger, 'replay, same set, concurrency 1', false, 1));
    results.push(await measureReplay(ledger, 'replay, same set, concurrency 4', false, 4));
    results.push(await measureReplay(ledger, 'replay, tightened set, concurrency 4', true, 4));
    results.push(await measureReplay(ledger, 'replay, tightened, last 10% (memory)', true, 4, Math.max(1000, Math.floor(N / 10))));
    const base = median(results[0]!.rates);
    printTable(
      [
        'scenario',
        'invocations',
        'changed',
        'median inv/s',
        'vs baseline',
        'p50 ms/1k',
        'p99 ms/1k',
        'peak heap MB',
        'peak RSS MB',
        'retained MB 10%→100%',
      ],
      results.map((m) => {
        const sorted = [...m.perThousand].sort((a, b) => a - b);
        return [
          m.label,
          m.n,
          m.changed,
          Math.round(median(m.rates)),
          `${(median(m.rates) / base).toFixed(2)}x`,
          percentile(sorted, 50).toFixed(1),
          percentile(sorted, 99).toFixed(1),
          m.peakHeapMb.toFixed(0),
          m.peakRssMb.toFixed(0),
          Number.isNaN(m.retainedMb[0]) ? '-' : `${m.retainedMb[0].toFixed(1)} → ${m.retainedMb[1].toFixed(1)}`,
        ];
      }),
    );
    console.log(`\ntarget: >= 20,000 invocations/s for the replay rows; retained heap flat (10% ≈ 100%).`);
  } finally {
    ledger.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
