/**
 * Benchmarks the report queries on a large ledger (see scripts/generate-ledger.ts):
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-1m.db
 *   npm run bench:reports -- --db /tmp/hookledger-1m.db [--runs 200] [--skip-export] [--export-days N]
 *
 * Prints p50 / p99 per query (ms) against its target, and the ratio of p50 to a baseline
 * measured in the same run (a primary-key row read), the export throughput and peak RSS (in
 * a child process, so the number is the export's own), and the ledger's bytes per invocation.
 * JSON Lines is also written the pre-splice way (`JSON.stringify` of each `ExportRecord`) as a
 * baseline in the same run. `--export-days N` exports only the ledger's first N days.
 * Measures the built package (dist/; `npm run bench:reports` builds first), not src/ through tsx.
 * Hook health is timed once as the first report on the ledger as written (the writers keep the
 * rollup current), once with the rollup tables emptied (the run builds them: an older ledger's
 * first report), then warm.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SqliteLedger } from '../dist/ledger/sqlite-ledger.js';
import { groupDenials, listDenials, DENIAL_GROUPS } from '../dist/ledger/queries/denials.js';
import { explain } from '../dist/ledger/queries/explain.js';
import { exportRecords, writeExport, type ExportFormat } from '../dist/ledger/queries/export.js';
import type { InvocationFilter } from '../dist/ledger/queries/filters.js';
import { hookHealth } from '../dist/ledger/queries/health.js';
import { listSessions, sessionTimeline } from '../dist/ledger/queries/sessions.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: '/tmp/hookledger-1m.db' },
    runs: { type: 'string', default: '200' },
    'skip-export': { type: 'boolean', default: false },
    'export-child': { type: 'string' },
    format: { type: 'string', default: 'jsonl' },
    'export-days': { type: 'string' },
    'export-until': { type: 'string' },
  },
});

const DAY = 86_400_000;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Runs `fn` `runs` times (after a warm-up) with a fresh argument each time; returns ms timings. */
function time<T>(runs: number, arg: (i: number) => T, fn: (a: T) => unknown): { p50: number; p99: number } {
  for (let i = 0; i < Math.min(5, runs); i++) fn(arg(i));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = arg(i);
    const t0 = process.hrtime.bigint();
    fn(a);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((x, y) => x - y);
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}

/** The export as it was before stored JSON was spliced into the line: parse, then `JSON.stringify` the record. */
async function writeExportRecords(ledger: SqliteLedger, filter: InvocationFilter, out: Writable): Promise<number> {
  let count = 0;
  let chunk = '';
  for (const record of exportRecords(ledger, filter)) {
    chunk += `${JSON.stringify(record)}\n`;
    count += 1;
    if (chunk.length >= 65_536) {
      if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
      chunk = '';
    }
  }
  if (chunk.length > 0) out.write(chunk);
  return count;
}

async function exportChild(db: string, format: ExportFormat | 'jsonl-records'): Promise<void> {
  const ledger = SqliteLedger.open({ path: db });
  let bytes = 0;
  let peak = process.memoryUsage().rss;
  const startRss = peak;
  let lines = 0;
  const sink = new Writable({
    highWaterMark: 256 * 1024,
    write(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      lines += 1;
      if (lines % 16 === 0) peak = Math.max(peak, process.memoryUsage().rss);
      done();
    },
  });
  const t0 = process.hrtime.bigint();
  const filter: InvocationFilter = values['export-until'] ? { until: Number(values['export-until']) } : {};
  const rows =
    format === 'jsonl-records' ? await writeExportRecords(ledger, filter, sink) : await writeExport(ledger, filter, sink, { format });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ rows, seconds, bytes, startRss, peakRss: peak, maxRss: process.resourceUsage().maxRSS * 1024 }));
  ledger.close();
}

/** One timed run (a cold start cannot be repeated). */
function once(fn: () => unknown): { p50: number; p99: number } {
  const t0 = process.hrtime.bigint();
  fn();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { p50: ms, p99: ms };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

async function main(): Promise<void> {
  if (values['export-child']) return exportChild(values['export-child'], values.format as ExportFormat | 'jsonl-records');
  const db = values.db!;
  const runs = Number(values.runs);
  const ledger: SqliteLedger = SqliteLedger.open({ path: db });
  const s = ledger.sqlite;
  const invocations = s.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
  const outcomeCount = s.prepare('SELECT count(*) FROM outcomes').pluck().get() as number;
  const maxId = s.prepare('SELECT max(id) FROM invocations').pluck().get() as number;
  const newest = s.prepare('SELECT max(started_at) FROM invocations').pluck().get() as number;
  const bytes = ['', '-wal'].reduce((a, suffix) => {
    try {
      return a + statSync(db + suffix).size;
    } catch {
      return a;
    }
  }, 0);
  // Sample real keys (sessions, tool_use_ids) spread over the ledger.
  const sample = (sql: string, n: number) => s.prepare(sql).pluck().all(n) as string[];
  const sessions = sample(`SELECT session_id FROM invocations WHERE id % 997 = 0 AND session_id IS NOT NULL LIMIT ?`, 500);
  const toolUses = sample(`SELECT tool_use_id FROM invocations WHERE id % 991 = 0 AND tool_use_id IS NOT NULL LIMIT ?`, 500);
  const fingerprint = s.prepare('SELECT fingerprint FROM hook_sets ORDER BY id DESC LIMIT 1').pluck().get() as string;
  const rnd = (i: number) => ((i * 2654435761) >>> 0) % 1_000_003;
  console.log(`ledger ${db}: ${invocations.toLocaleString('en')} invocations, ${outcomeCount.toLocaleString('en')} outcomes`);
  console.log(`size ${(bytes / 1e6).toFixed(1)} MB, ${Math.round(bytes / invocations)} bytes per invocation\n`);

  const baseline = time(
    runs * 5,
    (i) => 1 + (rnd(i) % maxId),
    (id) => s.prepare('SELECT * FROM invocations WHERE id = ?').get(id),
  );
  const w = 44;
  console.log(`${pad('query', w)}  ${pad('p50 ms', 9, true)}  ${pad('p99 ms', 9, true)}  ${pad('x base', 7, true)}  target p50`);
  const rows = {
    push([label, t, target]: [string, { p50: number; p99: number }, string]) {
      console.log(
        `${pad(label, w)}  ${pad(t.p50.toFixed(2), 9, true)}  ${pad(t.p99.toFixed(2), 9, true)}  ${pad((t.p50 / baseline.p50).toFixed(0), 7, true)}  ${target}`,
      );
    },
  };
  rows.push(['baseline: one row by primary key', baseline, '-']);
  rows.push([
    'explain by id',
    time(
      runs,
      (i) => 1 + (rnd(i) % maxId),
      (id) => explain(ledger, id),
    ),
    '2 ms',
  ]);
  rows.push([
    'explain by tool_use_id',
    time(
      runs,
      (i) => toolUses[i % toolUses.length]!,
      (t) => explain(ledger, t),
    ),
    '2 ms',
  ]);
  const page = (filter: InvocationFilter) => listDenials(ledger, filter, { limit: 50 });
  const denialCases: [string, (i: number) => InvocationFilter][] = [
    ['denials, first page, no filter', () => ({})],
    ['  --session', (i) => ({ sessionId: sessions[i % sessions.length]! })],
    ['  --tool Bash', () => ({ toolName: 'Bash' })],
    ['  --tool Task (rare)', () => ({ toolName: 'Task' })],
    ['  --hook no-rm-rf', () => ({ hookId: 'no-rm-rf' })],
    ['  --hook secrets-scan (rare)', () => ({ hookId: 'secrets-scan' })],
    ['  --reason-code schema_violation', () => ({ reasonCode: 'schema_violation' })],
    ['  --reason-code timeout (rare)', () => ({ reasonCode: 'timeout' })],
    ['  --point user_prompt_submit', () => ({ point: 'user_prompt_submit' })],
    ['  --hook-set NAME (3 versions)', () => ({ hookSet: 'team-guardrails' })],
    ['  --hook-set FINGERPRINT', () => ({ hookSet: fingerprint.slice(0, 12) })],
    ['  --since 7d', () => ({ since: newest - 7 * DAY })],
    ['  --until 60d ago', () => ({ until: newest - 60 * DAY })],
    ['  --since 45d --until 44d', () => ({ since: newest - 45 * DAY, until: newest - 44 * DAY })],
    [
      '  --tool Bash --reason-code safety --since 30d',
      () => ({ toolName: 'Bash', reasonCode: 'safety_violation', since: newest - 30 * DAY }),
    ],
  ];
  for (const [label, filter] of denialCases) rows.push([label, time(runs, filter, page), '20 ms']);
  const firstPage = listDenials(ledger, {}, { limit: 50 });
  rows.push([
    'denials, second page (cursor)',
    time(
      runs,
      () => firstPage.nextCursor,
      (cursor) => listDenials(ledger, {}, { limit: 50, cursor }),
    ),
    '20 ms',
  ]);
  rows.push([
    'session timeline (whole session)',
    time(
      runs,
      (i) => sessions[i % sessions.length]!,
      (id) => sessionTimeline(ledger, id, { limit: 1000 }),
    ),
    '20 ms',
  ]);
  rows.push([
    'sessions list, first page of 50',
    time(
      Math.max(10, runs / 10),
      () => ({}),
      (f) => listSessions(ledger, f, { limit: 50 }),
    ),
    '10 ms',
  ]);
  const sessionsPage1 = listSessions(ledger, {}, { limit: 50 });
  rows.push([
    'sessions list, second page (cursor)',
    time(
      Math.max(10, runs / 10),
      () => sessionsPage1.nextCursor,
      (cursor) => listSessions(ledger, {}, { limit: 50, cursor }),
    ),
    '-',
  ]);
  for (const by of DENIAL_GROUPS) {
    rows.push([
      `denials --group-by ${by} (whole ledger)`,
      time(
        Math.max(5, runs / 20),
        () => by,
        (b) => groupDenials(ledger, {}, b),
      ),
      '1 s',
    ]);
  }
  const health30 = () => hookHealth(ledger, { since: newest - 30 * DAY, until: newest + 1 });
  const health90 = () => hookHealth(ledger, { since: 0, until: newest + 1 });
  // The first report on the ledger as its writers left it: the rollup kept current as records committed.
  rows.push(['hook health, 30 days, first report', once(health30), '1 s']);
  rows.push(['hook health, 90 days, first report', once(health90), '1 s']);
  // What a ledger whose rollup was never built (written before it existed) pays once.
  s.exec('DELETE FROM health_rollups; DELETE FROM health_rollup_hours; DELETE FROM health_rollup_state');
  rows.push(['hook health, 30 days, rollup emptied (builds it)', once(health30), '-']);
  rows.push(['hook health, 30 days', time(5, () => null, health30), '1 s']);
  rows.push(['hook health, 90 days, cold (60 more days)', once(health90), '-']);
  rows.push(['hook health, whole ledger (90 days)', time(3, () => null, health90), '-']);
  const oldest = s.prepare('SELECT min(started_at) FROM invocations').pluck().get() as number;
  ledger.close();

  if (!values['skip-export']) {
    const days = values['export-days'];
    const until = days ? ['--export-until', String(oldest + Number(days) * DAY)] : [];
    for (const format of ['jsonl', 'jsonl-records', 'csv'] as const) {
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--export-child', db, '--format', format, ...until],
        {
          encoding: 'utf8',
          maxBuffer: 1024 * 1024,
        },
      );
      if (child.status !== 0) throw new Error(`export child failed: ${child.stderr}`);
      const r = JSON.parse(child.stdout) as {
        rows: number;
        seconds: number;
        bytes: number;
        startRss: number;
        peakRss: number;
        maxRss: number;
      };
      console.log(
        `\nexport ${format === 'jsonl-records' ? 'jsonl, parse + stringify (before)' : format}: ${r.rows.toLocaleString('en')} invocations in ${r.seconds.toFixed(1)}s = ${Math.round(r.rows / r.seconds).toLocaleString('en')} rows/s, ` +
          `${(r.bytes / 1e6).toFixed(0)} MB written; RSS ${(r.startRss / 1e6).toFixed(0)} MB at start, peak ${(r.maxRss / 1e6).toFixed(0)} MB`,
      );
    }
  }
}

await main();
