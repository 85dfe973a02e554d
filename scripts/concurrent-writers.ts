/**
 * Concurrent writers (reliability item 2). Claude Code starts one hook process per event, in
 * parallel, so several processes write one ledger file at once. W processes (default 8) each
 * decide N invocations (default 2,000) into one fresh ledger: they open it at the same moment
 * (racing the first-open migrations), wait for a common start signal, then write as fast as
 * they can. Afterwards every invocation must be present and complete, no SQLITE_BUSY may have
 * surfaced to a caller, and integrity_check must say ok. A single writer into its own file,
 * measured in the same run, is the baseline.
 *
 *   npm run load:writers -- [--writers 8] [--count 2000] [--sync normal|full]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SyncMode } from '../src/ledger/open.js';
import { SqliteLedger } from '../src/ledger/sqlite-ledger.js';
import { createRunner } from '../src/runner/runner.js';
import { checkLedger, exited, onLines, option, printTable, spawnTs, workloadHookSet, workloadInvocation } from './reliability-support.js';

const script = import.meta.filename;

interface WriterSummary {
  writer: number;
  done: number;
  busy: number;
  errors: number;
  firstError: string | null;
  latenciesMs: number[];
}

/** Opens, says `ready`, waits for `go` on stdin, decides `count` invocations, prints a JSON summary. */
async function child(): Promise<void> {
  const writer = Number(option('writer', '0'));
  const count = Number(option('count', '2000'));
  const ledger = SqliteLedger.open({ path: option('db', ''), synchronous: option('sync', 'normal') as SyncMode });
  const runner = createRunner({ hookSet: workloadHookSet(), ledger });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  // A flowing stdin would keep this process alive after its work is done.
  process.stdin.destroy();
  const summary: WriterSummary = { writer, done: 0, busy: 0, errors: 0, firstError: null, latenciesMs: [] };
  for (let n = 0; n < count; n++) {
    const t0 = performance.now();
    try {
      await runner.run(workloadInvocation(writer, n));
      summary.done += 1;
    } catch (error) {
      const text = `${(error as Error).message} ${String((error as { cause?: { code?: string } }).cause?.code ?? '')}`;
      if (/SQLITE_BUSY|locked/.test(text)) summary.busy += 1;
      else summary.errors += 1;
      summary.firstError ??= text;
    }
    summary.latenciesMs.push(performance.now() - t0);
  }
  // Every background outcome must complete too: under FULL with 8 writers the queue left at the
  // end can take longer than the default 5 s close deadline (they would be recorded as skipped).
  await runner.close({ deadlineMs: 120_000 });
  ledger.close();
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

interface RoundResult {
  writers: number;
  count: number;
  seconds: number;
  summaries: WriterSummary[];
  check: ReturnType<typeof checkLedger>;
  backgroundPending: number;
  childFailures: string[];
}

async function round(writers: number, count: number, sync: SyncMode): Promise<RoundResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-writers-'));
  const path = join(dir, 'ledger.db');
  try {
    const summaries: WriterSummary[] = [];
    const childFailures: string[] = [];
    let readyCount = 0;
    let allReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (allReady = resolve));
    const children = Array.from({ length: writers }, (_, writer) => {
      const proc = spawnTs(script, ['--child', '--db', path, '--writer', String(writer), '--count', String(count), '--sync', sync]);
      let stderr = '';
      proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      onLines(proc, (line) => {
        if (line === 'ready') {
          readyCount += 1;
          if (readyCount === writers) allReady();
        } else if (line.startsWith('{')) summaries.push(JSON.parse(line) as WriterSummary);
      });
      const done = exited(proc).then(({ code }) => {
        if (code !== 0) childFailures.push(`writer ${writer} exited ${code}: ${stderr.trim().split('\n')[0] ?? ''}`);
        if (readyCount < writers && code !== 0) allReady();
      });
      return { proc, done };
    });
    await ready;
    const t0 = performance.now();
    for (const { proc } of children) proc.stdin!.end('go\n');
    await Promise.all(children.map((c) => c.done));
    const seconds = (performance.now() - t0) / 1000;
    const ledger = SqliteLedger.open({ path });
    try {
      const check = checkLedger(ledger);
      const backgroundPending = ledger.sqlite
        .prepare(`SELECT count(*) FROM outcomes WHERE mode = 'background' AND status != 'completed'`)
        .pluck()
        .get() as number;
      return { writers, count, seconds, summaries, check, backgroundPending, childFailures };
    } finally {
      ledger.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function parent(): Promise<void> {
  const writers = Number(option('writers', '8'));
  const count = Number(option('count', '2000'));
  const sync = option('sync', 'normal') as SyncMode;
  console.log(
    `concurrent writers: ${writers} processes x ${count} invocations into one ledger (synchronous=${sync.toUpperCase()}); baseline: 1 process`,
  );
  const baseline = await round(1, count, sync);
  const loaded = await round(writers, count, sync);
  console.log('');
  const rows = [baseline, loaded].map((r) => {
    const latencies = r.summaries.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
    const expected = r.writers * r.count;
    const throughput = r.check.invocations / r.seconds;
    return {
      r,
      expected,
      throughput,
      cells: [
        `${r.writers} x ${r.count}`,
        expected,
        r.check.invocations,
        r.check.completed,
        r.check.incomplete,
        r.summaries.reduce((a, s) => a + s.busy, 0),
        r.summaries.reduce((a, s) => a + s.errors, 0) + r.childFailures.length,
        r.check.integrity,
        r.seconds.toFixed(1),
        throughput.toFixed(0),
        percentile(latencies, 50).toFixed(2),
        percentile(latencies, 99).toFixed(2),
      ] as (string | number)[],
    };
  });
  printTable(
    ['writers', 'expected', 'present', 'completed', 'incomplete', 'busy', 'errors', 'integrity', 'seconds', 'inv/s', 'p50 ms', 'p99 ms'],
    rows.map((row) => row.cells),
  );
  const [base, load] = rows as [(typeof rows)[0], (typeof rows)[0]];
  console.log(`\naggregate throughput with ${writers} writers: ${(load.throughput / base.throughput).toFixed(2)}x one writer`);
  for (const r of [baseline, loaded]) {
    for (const s of r.summaries) if (s.firstError) console.log(`writer ${s.writer}: first error: ${s.firstError}`);
    for (const f of r.childFailures) console.log(f);
    if (r.backgroundPending > 0) console.log(`${r.writers} writers: ${r.backgroundPending} background outcomes not completed`);
  }
  const failed = [baseline, loaded].some(
    (r) =>
      r.check.invocations !== r.writers * r.count ||
      r.check.completed !== r.writers * r.count ||
      r.check.incomplete > 0 ||
      r.check.integrity !== 'ok' ||
      r.backgroundPending > 0 ||
      r.childFailures.length > 0 ||
      r.summaries.some((s) => s.busy > 0 || s.errors > 0),
  );
  console.log(failed ? '\nFAIL' : `\nPASS: all ${writers * count} invocations present and complete, no SQLITE_BUSY surfaced, integrity ok`);
  process.exitCode = failed ? 1 : 0;
}

if (process.argv.includes('--child')) await child();
else await parent();
