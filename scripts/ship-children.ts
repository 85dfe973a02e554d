/**
 * What the ship benchmarks (bench-ship.ts, bench-ship-breakdown.ts) share: `ship` run as a child
 * process of the built package with its wall time, CPU and peak RSS read from /proc, the CPU of the
 * server's exited backends, each source's central counts against its ledger, and the generated
 * ledgers they ship.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { generateLedger } from './generate-ledger.js';
import type { PostgresServer } from './postgres-server.js';

export const root = join(import.meta.dirname, '..');
export const bin = join(root, 'bin/hookledger.js');
export const dist = (path: string) => import(join(root, 'dist', path));

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
export const CLOCK_TICKS = 100;

export interface ShipRun {
  /** Wall time from spawn to exit, ms. */
  ms: number;
  /** performance.now() at spawn and at exit. */
  spawnedAt: number;
  exitedAt: number;
  peakMiB: number;
  report: { source: string; shipped: { invocations: number; links: number } };
}

/** utime + stime of a process, ticks (0 once it is gone). */
export function processTicks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * CPU (s) of this process's children that exited and were waited for (cutime + cstime): the ship
 * processes' CPU, start-up included, read once around a run instead of polling each child (which
 * cost the 8-source run CPU of its own).
 */
export function childrenCpu(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/** Runs `ship` on dist/ in a child; wall time and peak RSS (VmHWM, a high-water mark, so a look every 50 ms sees it). */
export async function shipChild(db: string, url: string, batch: number, extra: string[] = [], program = bin): Promise<ShipRun> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [program, 'ship', '--db', db, '--json', '--batch', String(batch), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOOKLEDGER_SHIP_TO: url },
  });
  let out = '';
  let err = '';
  let peak = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch {
      /* exited */
    }
  }, 50);
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const exitedAt = performance.now();
  clearInterval(poll);
  if (code !== 0) throw new Error(`ship exited ${code}: ${err}`);
  return { ms: exitedAt - spawnedAt, spawnedAt, exitedAt, peakMiB: peak / 1024, report: JSON.parse(out) };
}

/** Ships run at once (one or more), with their totals. */
export interface ShipsRun {
  runs: ShipRun[];
  /** Wall time from the first spawn to the last exit, ms. */
  ms: number;
  invocations: number;
  /** CPU of the ship processes together, start-up included, s. */
  shipCpuS: number;
  /** CPU of their PostgreSQL backends (and of anything else of the server that exited meanwhile), s. */
  serverCpuS: number;
  peakMiB: number;
}

/** `ship` of each ledger in `dbs` into `url`, all at once, each its own process (the 8-source case; one for one source). */
export async function ships(server: PostgresServer, dbs: string[], url: string, batch: number, program = bin): Promise<ShipsRun> {
  const server0 = serverCpu(server);
  const cpu0 = childrenCpu();
  const started = performance.now();
  const runs = await Promise.all(dbs.map((db) => shipChild(db, url, batch, [], program)));
  const ms = performance.now() - started;
  const shipCpuS = childrenCpu() - cpu0;
  // Each backend exits with its ship's connection, a moment after: wait until the server's reaped CPU stops growing.
  let last = serverCpu(server);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = serverCpu(server);
    if (now === last && i >= 2) break;
    last = now;
  }
  return {
    runs,
    ms,
    invocations: runs.reduce((n, r) => n + r.report.shipped.invocations, 0),
    shipCpuS,
    serverCpuS: serverCpu(server) - server0,
    peakMiB: Math.max(...runs.map((r) => r.peakMiB)),
  };
}

/**
 * A new database of the central schema (migrated by the connectPostgres of the package at `packageRoot`, this one
 * by default), as a centre machines ship to: its schema is created once, not by every measured ship.
 */
export async function migratedDatabase(server: PostgresServer, name: string, packageRoot = root): Promise<string> {
  const url = await server.createDatabase(name);
  const { connectPostgres } = await import(join(packageRoot, 'dist', 'ledger/postgres/open.js'));
  await (await connectPostgres({ url })).close();
  return url;
}

/** The postmaster's pid. */
export const postmasterPid = (server: PostgresServer): number =>
  Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

/** CPU (s) the server's exited backends used so far: the postmaster's reaped children (cutime + cstime). */
export function serverCpu(server: PostgresServer): number {
  const fields = readFileSync(`/proc/${postmasterPid(server)}/stat`, 'utf8')
    .split(') ')[1]!
    .split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/** Each source's central counts against its ledger: links, invocations (and distinct ones: no duplicate), outcomes, head. */
export async function exactlyOnce(url: string, dbs: string[], runs: ShipRun[]): Promise<string[]> {
  const { openLedger } = await dist('ledger/open.js');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const wrong: string[] = [];
  try {
    for (const [i, db] of dbs.entries()) {
      const ledger = openLedger({ path: db, readonly: true });
      const count = (sql: string) => ledger.sqlite.prepare(sql).pluck().get() as number;
      const local = {
        links: count('SELECT count(*) FROM chain'),
        invocations: count(`SELECT count(*) FROM chain WHERE kind = 'invocation'`),
        distinct: count(`SELECT count(*) FROM chain WHERE kind = 'invocation'`),
        outcomes: count('SELECT count(*) FROM outcomes'),
        head: count('SELECT max(seq) FROM chain'),
      };
      ledger.close();
      const source = runs[i]!.report.source;
      const central = (
        await client.query(
          `SELECT (SELECT count(*)::int FROM chain WHERE writer_id = $1) AS links,
             (SELECT count(*)::int FROM invocations WHERE writer_id = $1) AS invocations,
             (SELECT count(DISTINCT source_ref)::int FROM invocations WHERE writer_id = $1) AS distinct,
             (SELECT count(*)::int FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE i.writer_id = $1) AS outcomes,
             (SELECT head_seq::int FROM writers WHERE id = $1) AS head`,
          [source],
        )
      ).rows[0];
      if (JSON.stringify(central) !== JSON.stringify(local))
        wrong.push(`${source}: centre ${JSON.stringify(central)}, ledger ${JSON.stringify(local)}`);
    }
  } finally {
    await client.end();
  }
  return wrong;
}

/** A generated ledger with chain links (~6 outcomes per invocation, scripts/generate-ledger.ts). */
export function generate(dir: string, name: string, invocations: number, seed: number): string {
  const out = join(dir, `${name}.db`);
  generateLedger({ out, invocations, sessions: Math.max(10, Math.round(invocations / 200)), days: 5, seed, chain: true });
  return out;
}
