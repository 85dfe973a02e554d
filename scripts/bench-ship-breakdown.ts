/**
 * Where the time of "8 sources shipping at once" goes (issue 13): the bench's aggregate case
 * (bench-ship.ts) run with samplers around it, into a local durable PostgreSQL 15 this script
 * starts, on the built package (dist/).
 *
 *   npx tsx scripts/bench-ship-breakdown.ts [--sources 8] [--per-source 20000] [--batch 5000] [--rounds 2] [--sample-ms 20]
 *
 * Each round ships the same ledgers into a new database (`--modes new`: 8 ship processes spawned at
 * once into a database none has migrated yet) and into one migrated beforehand (`--modes migrated`,
 * what bench-ship.ts measures). `HOOKLEDGER_SHIP_BUNDLE=0` in the environment ships from the
 * modules instead of the bundle (src/cli/bin.ts). For each it prints:
 * - the aggregate as the bench computes it (invocations of all sources / wall time from the first
 *   spawn to the last exit), and the spread of the processes' exits;
 * - CPU by process class over the run: the ship processes (with the CPU of a ship of an already
 *   shipped ledger: start-up, connect and migration check alone), the server's client backends,
 *   walwriter, checkpointer, background writer, autovacuum, the rest of the server; and the
 *   machine's idle CPU (/proc/stat) over the run on its cores;
 * - what the client backends were doing, sampled from pg_stat_activity every `--sample-ms`:
 *   running (no wait event), waiting for ship (ClientRead), or a named wait (LWLock WALInsert,
 *   IO WALSync, Lock transactionid, …), as a share of the samples.
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { flag, printTable } from './bench-support.js';
import { PostgresServer } from './postgres-server.js';
import { CLOCK_TICKS, exactlyOnce, generate, migratedDatabase, postmasterPid, processTicks, ships } from './ship-children.js';

const SOURCES = Number(flag('sources', '8'));
const PER_SOURCE = Number(flag('per-source', '20000'));
const BATCH = Number(flag('batch', '5000'));
const ROUNDS = Number(flag('rounds', '2'));
const SAMPLE_MS = Number(flag('sample-ms', '20'));
/** Into a new database (its schema created by the first ship), into one migrated beforehand, or both. */
/** Extra server settings, `name=value,name=value` (e.g. `wal_buffers=16MB`): the same case on a server set otherwise. */
const SETTINGS = Object.fromEntries(
  flag('pg-settings', '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);
const MODES = flag('modes', 'new,migrated')
  .split(',')
  .map((m) => m === 'migrated');

/** The server's processes by class, from their titles (`postgres: walwriter`, `postgres: user db 127.0.0.1(…) COPY`, …). */
function serverProcesses(postmaster: number): Map<number, string> {
  const found = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.split(') ')[1]!.split(' ')[1]) !== postmaster) continue;
      const title = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      found.set(Number(name), classOf(title));
    } catch {
      /* gone */
    }
  }
  return found;
}

function classOf(title: string): string {
  for (const kind of ['walwriter', 'checkpointer', 'background writer', 'autovacuum worker', 'autovacuum launcher'])
    if (title.includes(kind)) return kind.replace('autovacuum launcher', 'other server');
  return /postgres: \S+ \S+ 127\.0\.0\.1/.test(title) ? 'client backends' : 'other server';
}

/** The machine's CPU times from /proc/stat: busy and idle (incl. iowait), ticks. */
function machineTicks(): { busy: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  return { busy: fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle, idle };
}

interface Sampled {
  cpuByClass: Map<string, number>;
  waits: Map<string, number>;
  samples: number;
  /** Per sample: client backends active (running or waiting on the server), idle in transaction (waiting for ship). */
  activeTimeline: number[];
}

/** Samples the server's processes' CPU and its client backends' states until `stop` resolves. */
async function sample(server: PostgresServer, database: string, stop: Promise<unknown>): Promise<Sampled> {
  const postmaster = postmasterPid(server);
  const ticks = new Map<number, { cls: string; first: number; last: number }>();
  const client = new pg.Client({ connectionString: server.url(database), application_name: 'breakdown' });
  await client.connect();
  const own = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const waits = new Map<string, number>();
  const activeTimeline: number[] = [];
  let samples = 0;
  let done = false;
  void stop.then(() => (done = true));
  let initial = true;
  const procs = () => {
    for (const [pid, cls] of serverProcesses(postmaster)) {
      if (pid === own) continue;
      const t = processTicks(pid);
      const seen = ticks.get(pid);
      // A backend just forked still has the postmaster's title: its class is the one it shows next.
      if (seen) Object.assign(seen, { last: Math.max(seen.last, t), cls: cls === 'other server' ? seen.cls : cls });
      else ticks.set(pid, { cls, first: initial ? t : 0, last: t });
    }
  };
  procs();
  initial = false;
  while (!done) {
    procs();
    const rows = (
      await client.query<{ state: string | null; wt: string | null; w: string | null; q: string }>(
        `SELECT state, wait_event_type AS wt, wait_event AS w, substring(query from '^\\s*(\\S+\\s+(INTO\\s+)?\\S+)') AS q FROM pg_stat_activity
         WHERE backend_type = 'client backend' AND application_name = 'hookledger'`,
      )
    ).rows;
    samples++;
    let active = 0;
    for (const r of rows) {
      const key =
        r.state === 'active'
          ? r.wt
            ? `server: ${r.wt} ${r.w}${r.wt === 'Lock' || r.wt === 'LWLock' ? ` (${r.q})` : ''}`
            : 'server: running (CPU)'
          : r.state === 'idle in transaction'
            ? 'waiting for ship, in a transaction (ClientRead)'
            : `waiting for ship, ${r.state ?? 'starting'}`;
      if (r.state === 'active') active++;
      waits.set(key, (waits.get(key) ?? 0) + 1);
    }
    activeTimeline.push(active);
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  procs();
  await client.end();
  const cpuByClass = new Map<string, number>();
  for (const { cls, first, last } of ticks.values()) cpuByClass.set(cls, (cpuByClass.get(cls) ?? 0) + last - first);
  return { cpuByClass, waits, samples, activeTimeline };
}

async function manyAtOnce(server: PostgresServer, sources: string[], name: string, migrated: boolean) {
  const url = migrated ? await migratedDatabase(server, name) : await server.createDatabase(name);
  await new Promise((r) => setTimeout(r, 500));
  let finish!: () => void;
  const stop = new Promise<void>((r) => (finish = r));
  const sampled = sample(server, name, stop);
  await new Promise((r) => setTimeout(r, 50));
  const machine = machineTicks();
  const run = await ships(server, sources, url, BATCH);
  const machineAfter = machineTicks();
  finish();
  const wrong = await exactlyOnce(url, sources, run.runs);
  if (wrong.length > 0) throw new Error(`NOT exactly once:\n  ${wrong.join('\n  ')}`);
  const started = Math.min(...run.runs.map((r) => r.spawnedAt));
  return {
    ...run,
    url,
    wallS: run.ms / 1000,
    exits: run.runs.map((r) => (r.exitedAt - started) / 1000).sort((a, b) => a - b),
    sampled: await sampled,
    machine: { busy: machineAfter.busy - machine.busy, idle: machineAfter.idle - machine.idle },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-ship-breakdown-'));
  const server = await PostgresServer.start({ durable: true, settings: SETTINGS });
  try {
    console.log(`generating ${SOURCES} ledgers of ${PER_SOURCE} invocations …`);
    const sources = Array.from({ length: SOURCES }, (_, i) => generate(dir, `source-${i}`, PER_SOURCE, 10 + i));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const migrated of MODES) {
        const load = loadavg()[0]!.toFixed(1);
        const r = await manyAtOnce(server, sources, `many_${round}_${migrated ? 'm' : 'f'}`, migrated);
        // Start-up alone: ship of already shipped ledgers again, one at a time: nothing to ship.
        const noop = [];
        for (const db of sources.slice(0, 3)) noop.push(await ships(server, [db], r.url, BATCH));
        const noopCpu = noop.reduce((t, n) => t + n.shipCpuS, 0) / noop.length;
        const noopMs = noop.reduce((t, n) => t + n.ms, 0) / noop.length;
        const shipCpu = r.shipCpuS;
        const perInv = (s: number) => ((s * 1e6) / r.invocations).toFixed(1);
        console.log(
          `\nround ${round}, ${Object.keys(SETTINGS).length ? `server with ${JSON.stringify(SETTINGS)}, ` : ''}${migrated ? 'database migrated beforehand' : 'new database (its schema created by the first ship)'}; load ${load} before, ${loadavg()[0]!.toFixed(1)} after`,
        );
        console.log(
          `aggregate ${Math.round(r.invocations / r.wallS)} invocations/s (${r.invocations} in ${r.wallS.toFixed(2)} s, first spawn to last exit); exits at ${r.exits.map((e) => e.toFixed(2)).join(' ')} s`,
        );
        const cores = cpus().length;
        const rows: (string | number)[][] = [
          ['ship processes (8, incl. start-up)', shipCpu.toFixed(2), perInv(shipCpu), ((shipCpu / (r.wallS * cores)) * 100).toFixed(0)],
          [
            `  of which start-up etc. (no-op ship: ${noopCpu.toFixed(2)} s CPU, ${noopMs.toFixed(0)} ms wall each)`,
            (noopCpu * SOURCES).toFixed(2),
            perInv(noopCpu * SOURCES),
            (((noopCpu * SOURCES) / (r.wallS * cores)) * 100).toFixed(0),
          ],
        ];
        for (const [cls, t] of [...r.sampled.cpuByClass].sort((a, b) => b[1] - a[1]))
          rows.push([
            `server: ${cls}`,
            (t / CLOCK_TICKS).toFixed(2),
            perInv(t / CLOCK_TICKS),
            ((t / CLOCK_TICKS / (r.wallS * cores)) * 100).toFixed(0),
          ]);
        rows.push([`server: reaped children (cross-check of exited backends)`, r.serverCpuS.toFixed(2), perInv(r.serverCpuS), '-']);
        const idleS = r.machine.idle / CLOCK_TICKS;
        const busyS = r.machine.busy / CLOCK_TICKS;
        rows.push([`machine busy (all processes)`, busyS.toFixed(2), perInv(busyS), ((busyS / (busyS + idleS)) * 100).toFixed(0)]);
        rows.push([`machine idle (${cores} cores)`, idleS.toFixed(2), '-', ((idleS / (busyS + idleS)) * 100).toFixed(0)]);
        printTable(['CPU over the run', 's', 'µs/inv', '% of cores×wall'], rows);
        const total = [...r.sampled.waits.values()].reduce((a, b) => a + b, 0);
        console.log(`\nclient backends, ${r.sampled.samples} samples every ${SAMPLE_MS} ms (${total} backend-samples):`);
        printTable(
          ['state / wait', 'share %'],
          [...r.sampled.waits].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, ((v / total) * 100).toFixed(1)]),
        );
        const tl = r.sampled.activeTimeline;
        const tenth = Math.max(1, Math.round(tl.length / 10));
        const deciles = Array.from({ length: 10 }, (_, i) => tl.slice(i * tenth, (i + 1) * tenth)).filter((x) => x.length > 0);
        console.log(
          `active backends, mean per tenth of the run: ${deciles.map((d) => (d.reduce((a, b) => a + b, 0) / d.length).toFixed(1)).join(' ')}`,
        );
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
