/**
 * Export throughput and memory (issue 11 §5), measured on the built CLI (`node bin/hookledger.js
 * export`, i.e. dist/) the way a SIEM backfill runs it: by default stdout redirected to a file
 * (`hookledger export > out.jsonl`; `--sink pipe` reads it through a pipe instead, as
 * `| some-shipper` would). Next to each, in the same run, two floors on the same sink: the same
 * number of bytes written from one buffer with no database work ("bytes only"), and that plus
 * SQLite reading every value the format is built from, once (see FLOOR). Works on a copy of --db
 * (opening a ledger may migrate it).
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-100k.db --invocations 100000 --sessions 500 --days 10
 *   npm run bench:export -- --db /tmp/hookledger-100k.db [--runs 3] [--sink file|pipe]
 *
 * Per case: the median over runs of rows/s and MB/s (wall time from spawn to exit, start-up
 * included), the worst run, rows per CPU second (user + system, from /proc: on a shared machine
 * this is what the code costs), and the peak RSS (the child's VmHWM, polled from /proc).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, copyFileSync, createReadStream, fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { flag, printTable } from './bench-support.js';

const root = join(import.meta.dirname, '..');
const SOURCE = flag('db', '/tmp/hookledger-100k.db');
const SINK = flag('sink', 'file');
if (SINK !== 'file' && SINK !== 'pipe') throw new Error(`--sink: "${SINK}" is not file or pipe`);
const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-export-'));
const DB = join(work, 'ledger.db');
const OUT = join(work, 'out');
copyFileSync(SOURCE, DB);
const RUNS = Number(flag('runs', '3'));
/** Clock ticks per second of /proc/PID/stat's utime and stime. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** What each format is built from: every stored value for JSON Lines; the CSV's own columns. */
const READS = {
  all: ['invocations', 'outcomes'].map((table) => ({ table, columns: null })),
  csv: [
    {
      table: 'invocations',
      columns: [
        ...'id started_at duration_us point event_name session_id turn tool_name tool_use_id agent status decision'.split(' '),
        ...'decisive_hook_id reason_code message hook_set_id'.split(' '),
        'modified_input_json IS NOT NULL',
      ],
    },
    { table: 'outcomes', columns: ['invocation_id', 'status'] },
  ],
};

/**
 * The floor: what no export of the same rows to the same sink can beat. SQLite reads every value
 * the format is built from, once (the sum of their lengths: nothing is turned into JavaScript
 * values; `none` skips it), then the same number of bytes as the export is written to the same
 * sink from one preallocated buffer, as lines of the export's average length.
 */
const FLOOR = `
const Database = require(${JSON.stringify(join(root, 'node_modules/better-sqlite3'))});
const reads = JSON.parse(process.argv[4]);
if (reads.length > 0) {
  const db = new Database(process.argv[1], { readonly: true });
  for (const { table, columns } of reads) {
    const cs = columns ?? db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table).map((c) => '"' + c + '"');
    db.prepare('SELECT coalesce(sum(' + cs.map((c) => 'coalesce(length(CAST(' + c + ' AS BLOB)), 0)').join(' + ') + '), 0) FROM ' + table).pluck().get();
  }
}
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

/** Newlines in a file (read after a run, untimed). */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
  }
  return lines;
}

/**
 * Runs `node args`, its stdout into the sink: a fresh file (counted afterwards when `count`, else
 * only its size is taken), or a pipe this process reads and counts.
 */
function measure(args: string[], count = false): Promise<Run> {
  return new Promise((resolve, reject) => {
    const fd = SINK === 'file' ? openSync(OUT, 'w') : null;
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', fd ?? 'pipe', 'pipe'] });
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
    child.stdout?.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
    });
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      const run = { seconds, cpuSeconds: cpuTicks / TICKS, bytes, lines, peakRss };
      if (fd === null) return resolve(run);
      run.bytes = fstatSync(fd).size;
      closeSync(fd);
      if (!count) return resolve(run);
      countLines(OUT).then((n) => resolve({ ...run, lines: n }), reject);
    });
  });
}

const jsonl = ['bin/hookledger.js', 'export', '--db', DB];
const csv = ['bin/hookledger.js', 'export', '--db', DB, '--format', 'csv'];
// The byte and line volume each floor writes: the export's own, from a first (untimed) run.
const [jsonlSize, csvSize] = [await measure(jsonl, true), await measure(csv, true)];
const jsonlRows = jsonlSize.lines;
const csvRows = csvSize.lines - 1; // the header line
const floorArgs = (size: Run, reads: unknown[]) => ['-e', FLOOR, DB, String(size.bytes), String(size.lines), JSON.stringify(reads)];
const cases: Record<string, { args: string[]; rows: number; bytes: number; floor: string }> = {
  'bytes only, JSON Lines volume': { args: floorArgs(jsonlSize, []), rows: jsonlRows, bytes: jsonlSize.bytes, floor: '' },
  'floor, JSON Lines (read all + bytes)': { args: floorArgs(jsonlSize, READS.all), rows: jsonlRows, bytes: jsonlSize.bytes, floor: '' },
  'hookledger export (JSON Lines)': { args: jsonl, rows: jsonlRows, bytes: jsonlSize.bytes, floor: 'floor, JSON Lines (read all + bytes)' },
  'bytes only, CSV volume': { args: floorArgs(csvSize, []), rows: csvRows, bytes: csvSize.bytes, floor: '' },
  'floor, CSV (read its columns + bytes)': { args: floorArgs(csvSize, READS.csv), rows: csvRows, bytes: csvSize.bytes, floor: '' },
  'hookledger export --format csv': { args: csv, rows: csvRows, bytes: csvSize.bytes, floor: 'floor, CSV (read its columns + bytes)' },
};
const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadBefore = load();
// Interleaved, so that machine noise hits every case alike.
for (let i = 0; i < RUNS; i++) {
  for (const [name, c] of Object.entries(cases)) {
    const run = await measure(c.args);
    // Every run writes what the sizing run wrote, or its rate would not be the export's.
    if (run.bytes !== c.bytes) throw new Error(`${name}: wrote ${run.bytes} bytes, the first run ${c.bytes}`);
    runs[name]!.push(run);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (name: string) => runs[name]!.map((r) => cases[name]!.rows / r.seconds);
const cpuRate = (name: string) => runs[name]!.map((r) => cases[name]!.rows / r.cpuSeconds);
const sink = SINK === 'file' ? 'stdout to a file' : 'stdout to a pipe';
console.log(`export of ${SOURCE} (a copy), ${sink}, ${RUNS} runs per case, load ${loadBefore} → ${load()}`);
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
      c.rows,
      (c.bytes / 1e6).toFixed(0),
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
