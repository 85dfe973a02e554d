/**
 * Export throughput and memory (issue 11 §5), measured on the built CLI (`node bin/hookledger.js
 * export`, i.e. dist/) the way a SIEM backfill runs it: stdout piped to a reader that counts
 * the bytes. Next to it, in the same run, the floor: a plain better-sqlite3 loop that reads the
 * same rows (invocations in id order, their outcomes by invocation, 500 at a time) and writes
 * every column tab-separated, with no formatting at all.
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-100k.db --invocations 100000 --sessions 500 --days 10
 *   npm run bench:export -- --db /tmp/hookledger-100k.db [--runs 3]
 *
 * Per case: the median over runs of rows/s and MB/s (wall time from spawn to exit, start-up
 * included), the worst run, and the peak RSS (the child's VmHWM, polled from /proc).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { flag, printTable } from './bench-support.js';

const root = join(import.meta.dirname, '..');
const DB = flag('db', '/tmp/hookledger-100k.db');
const RUNS = Number(flag('runs', '3'));

/** The floor: the same reads as the export, every value written as it comes. */
const FLOOR = `
const Database = require(${JSON.stringify(join(root, 'node_modules/better-sqlite3'))});
const db = new Database(process.argv[1], { readonly: true });
const batch = db.prepare('SELECT * FROM invocations WHERE id > ? ORDER BY id LIMIT 500').raw();
const outcomes = db.prepare('SELECT * FROM outcomes WHERE invocation_id IN (SELECT value FROM json_each(?)) ORDER BY invocation_id').raw();
let last = 0;
let text = '';
const out = process.stdout;
(async () => {
  for (;;) {
    const rows = batch.all(last);
    if (rows.length === 0) break;
    last = rows[rows.length - 1][0];
    const byInvocation = new Map();
    for (const o of outcomes.all(JSON.stringify(rows.map((r) => r[0])))) {
      const list = byInvocation.get(o[1]);
      if (list) list.push(o); else byInvocation.set(o[1], [o]);
    }
    for (const r of rows) {
      text += r.join('\\t');
      for (const o of byInvocation.get(r[0]) ?? []) text += '\\t' + o.join('\\t');
      text += '\\n';
    }
    if (text.length >= 65536) {
      if (!out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
      text = '';
    }
  }
  out.write(text);
})();
`;

interface Run {
  seconds: number;
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
    let stderr = '';
    const poll = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peakRss = Math.max(peakRss, Number(hwm[1]) * 1024);
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
      else resolve({ seconds, bytes, lines, peakRss });
    });
  });
}

const cases: Record<string, { args: string[]; rows: (r: Run) => number }> = {
  'floor: raw SELECT-and-write loop': { args: ['-e', FLOOR, DB], rows: (r) => r.lines },
  'hookledger export (JSON Lines)': { args: ['bin/hookledger.js', 'export', '--db', DB], rows: (r) => r.lines },
  'hookledger export --format csv': { args: ['bin/hookledger.js', 'export', '--db', DB, '--format', 'csv'], rows: (r) => r.lines - 1 },
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
const floorRowsPerSecond = median(
  runs['floor: raw SELECT-and-write loop']!.map((r) => cases['floor: raw SELECT-and-write loop']!.rows(r) / r.seconds),
);
console.log(`export of ${DB}, ${RUNS} runs per case, load ${loadBefore} → ${load()}`);
printTable(
  ['case', 'rows', 'MB', 'rows/s (median)', 'rows/s (worst)', 'MB/s (median)', 'peak RSS MB (max)', 'rows/s vs floor'],
  Object.entries(cases).map(([name, c]) => {
    const rs = runs[name]!;
    const rate = rs.map((r) => c.rows(r) / r.seconds);
    return [
      name,
      c.rows(rs[0]!),
      (rs[0]!.bytes / 1e6).toFixed(0),
      Math.round(median(rate)),
      Math.round(Math.min(...rate)),
      median(rs.map((r) => r.bytes / 1e6 / r.seconds)).toFixed(1),
      (Math.max(...rs.map((r) => r.peakRss)) / 1e6).toFixed(0),
      (median(rate) / floorRowsPerSecond).toFixed(2),
    ];
  }),
);
