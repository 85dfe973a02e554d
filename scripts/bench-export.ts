/**
 * Export throughput and memory (issue 11 §5), measured on the built CLI (`node bin/hookledger.js
 * export`, i.e. dist/) the way a SIEM backfill runs it: stdout piped to a reader that counts
 * the bytes. Next to each, in the same run, its floor: SQLite reading every value of the same
 * rows once, then the same number of bytes written to the same pipe from one buffer (see FLOOR).
 * Works on a copy of --db (opening a ledger may migrate it).
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-100k.db --invocations 100000 --sessions 500 --days 10
 *   npm run bench:export -- --db /tmp/hookledger-100k.db [--runs 3]
 *
 * Per case: the median over runs of rows/s and MB/s (wall time from spawn to exit, start-up
 * included), the worst run, rows per CPU second (user + system, from /proc: on a shared machine
 * this is what the code costs), and the peak RSS (the child's VmHWM, polled from /proc).
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { flag, printTable } from './bench-support.js';

const root = join(import.meta.dirname, '..');
const SOURCE = flag('db', '/tmp/hookledger-100k.db');
const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-export-'));
const DB = join(work, 'ledger.db');
copyFileSync(SOURCE, DB);
const RUNS = Number(flag('runs', '3'));
/** Clock ticks per second of /proc/PID/stat's utime and stime. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * The floor: what no export of the same rows can beat. SQLite reads every value of the same
 * invocations and outcomes once (the sum of their lengths: nothing is turned into JavaScript
 * values), then the same number of bytes as the export is written to the same kind of pipe from
 * one preallocated buffer, as lines of the export's average length.
 */
const FLOOR = `
const Database = require(${JSON.stringify(join(root, 'node_modules/better-sqlite3'))});
const db = new Database(process.argv[1], { readonly: true });
const total = (table) => {
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table);
  return db.prepare('SELECT coalesce(sum(' + columns.map((c) => 'coalesce(length(CAST("' + c + '" AS BLOB)), 0)').join(' + ') + '), 0) FROM ' + table).pluck().get();
};
total('invocations');
total('outcomes');
const bytes = Number(process.argv[2]);
const lines = Number(process.argv[3]);
const line = Math.max(1, Math.round(bytes / lines));
const chunk = Buffer.alloc(line * Math.max(1, Math.floor(65536 / line)), 'a');
for (let at = line - 1; at < chunk.length; at += line) chunk[at] = 10;
const out = process.stdout;
(async () => {
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!out.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((resolve) => out.once('drain', resolve));
  }
})();
`;

interface Run {
  seconds: number;
  /** The child's user + system CPU time (from /proc, last poll before it exited). */
  cpuSeconds: number;
  bytes: number;
  lines: number;
  peakRss: number;
}

function measure(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let lines = 0;
    let peakRss = 0;
    let cpuTicks = 0;
    let stderr = '';
    const poll = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peakRss = Math.max(peakRss, Number(hwm[1]) * 1024);
        const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        cpuTicks = Number(stat[11]) + Number(stat[12]);
      } catch {
        // Exited between polls.
      }
    }, 10);
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      else resolve({ seconds, cpuSeconds: cpuTicks / TICKS, bytes, lines, peakRss });
    });
  });
}

const jsonl = ['bin/hookledger.js', 'export', '--db', DB];
const csv = ['bin/hookledger.js', 'export', '--db', DB, '--format', 'csv'];
// The byte volume each floor writes: the export's own, from a first (untimed) run.
const [jsonlSize, csvSize] = [await measure(jsonl), await measure(csv)];
const cases: Record<string, { args: string[]; rows: (r: Run) => number; floor: string }> = {
  'floor, JSON Lines volume': {
    args: ['-e', FLOOR, DB, String(jsonlSize.bytes), String(jsonlSize.lines)],
    rows: () => jsonlSize.lines,
    floor: '',
  },
  'hookledger export (JSON Lines)': { args: jsonl, rows: (r) => r.lines, floor: 'floor, JSON Lines volume' },
  'floor, CSV volume': {
    args: ['-e', FLOOR, DB, String(csvSize.bytes), String(csvSize.lines - 1)],
    rows: () => csvSize.lines - 1,
    floor: '',
  },
  'hookledger export --format csv': { args: csv, rows: (r) => r.lines - 1, floor: 'floor, CSV volume' },
};
const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadBefore = load();
// Interleaved, so that machine noise hits every case alike.
for (let i = 0; i < RUNS; i++) for (const [name, c] of Object.entries(cases)) runs[name]!.push(await measure(c.args));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (name: string) => runs[name]!.map((r) => cases[name]!.rows(r) / r.seconds);
const cpuRate = (name: string) => runs[name]!.map((r) => cases[name]!.rows(r) / r.cpuSeconds);
console.log(`export of ${SOURCE} (a copy), ${RUNS} runs per case, load ${loadBefore} → ${load()}`);
printTable(
  [
    'case',
    'rows',
    'MB',
    'rows/s (median)',
    'rows/s (worst)',
    'MB/s (median)',
    'rows per CPU s',
    'peak RSS MB (max)',
    'vs floor (wall)',
    'vs floor (CPU)',
  ],
  Object.entries(cases).map(([name, c]) => {
    const rs = runs[name]!;
    return [
      name,
      c.rows(rs[0]!),
      (rs[0]!.bytes / 1e6).toFixed(0),
      Math.round(median(rate(name))),
      Math.round(Math.min(...rate(name))),
      median(rs.map((r) => r.bytes / 1e6 / r.seconds)).toFixed(1),
      Math.round(median(cpuRate(name))),
      (Math.max(...rs.map((r) => r.peakRss)) / 1e6).toFixed(0),
      c.floor ? (median(rate(name)) / median(rate(c.floor))).toFixed(2) : '-',
      c.floor ? (median(cpuRate(name)) / median(cpuRate(c.floor))).toFixed(2) : '-',
    ];
  }),
);
rmSync(work, { recursive: true, force: true });
