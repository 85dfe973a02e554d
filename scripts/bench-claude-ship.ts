/**
 * What automatic shipping costs the hook (docs/ship.md, "Set it once"): the time of
 * `hookledger claude` (the built bundle, dist/bundle/claude.cjs) for a Stop event, measured side
 * by side in one run, interleaved:
 *
 *   node -e 0                      the floor: a Node process doing nothing
 *   Stop, no --ship-to             the hook as before
 *   Stop, --ship-to, no shipper    marks "ship again", looks at the lock, spawns the detached shipper
 *   Stop, --ship-to, shipper runs  marks "ship again", looks at the lock (held by this script), no spawn
 *
 * Each process is run under /usr/bin/time: wall ms (spawn to exit, as Claude Code waits for it)
 * and CPU ms (user + system of the hook process itself; the shipper it starts is not counted).
 * CPU times from /usr/bin/time have a 10 ms grain, so the script also times the hook's added
 * work itself, in this process (hrtime around `triggerAutoShip`, what `claude` calls after
 * answering): with no shipper running (it spawns one) and with one running (it only marks).
 *
 * Between runs of the spawning row the script waits for the shipper to finish, so shippers never
 * compete with a measured run. The centre is a PostgreSQL server the script starts.
 *
 *   npm run -s build && node --import tsx scripts/bench-claude-ship.ts      BENCH_RUNS=30 (default)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRootDir as root } from './build-bundle.js';
import { PostgresServer } from './postgres-server.js';
import { ShipperLock, shipperRunning } from '../src/ledger/ship-lock.js';
import { autoShipFiles, readShipStatus } from '../src/ship/auto-files.js';
import { triggerAutoShip } from '../src/ship/auto-trigger.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const bundle = join(root, 'dist', 'bundle', 'claude.cjs');
const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-ship-'));
const db = join(work, 'ledger.db');
const hooks = join(work, 'hooks.json');
writeFileSync(hooks, JSON.stringify({ name: 'bench', version: '1', hooks: [] }));
const STOP = JSON.stringify({ hook_event_name: 'Stop', session_id: 'bench', stop_hook_active: false, cwd: work });

interface Sample {
  wallMs: number;
  cpuMs: number;
}

function timed(args: string[], env: NodeJS.ProcessEnv, input = ''): Sample {
  const out = join(work, 'time.txt');
  const started = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', out, ...args], { input, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  const [user, sys] = readFileSync(out, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wallMs, cpuMs: (user! + sys!) * 1000 };
}

function waitForShipper(): void {
  const files = autoShipFiles(db);
  const deadline = Date.now() + 60_000;
  // The shipper takes the lock a moment after the hook exits: wait for it to have come and gone.
  for (;;) {
    const status = readShipStatus(files);
    if (!shipperRunning(files.locks) && status !== null && status.state !== 'running' && status.pid !== lastShipperPid) {
      lastShipperPid = status.pid;
      if (status.state === 'failed') throw new Error(`the shipper failed: ${status.error}`);
      return;
    }
    if (Date.now() > deadline) throw new Error('the shipper did not finish within 60 s');
    spawnSync('sleep', ['0.05']);
  }
}
let lastShipperPid = -1;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

const server = await PostgresServer.start();
try {
  const centre = await server.createDatabase('centre');
  const parsed = new URL(centre);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const url = parsed.toString().replace(':@', '@');
  const env = { ...process.env, PGPASSWORD: password, HOOKLEDGER_SHIP_DEBOUNCE_MS: '0', HOOKLEDGER_SHIP_TO: '', HOME: work };
  const claude = (ship: boolean) => ['node', bundle, 'claude', '--config', hooks, '--db', db, ...(ship ? ['--ship-to', url] : [])];

  const rows: Record<string, Sample[]> = {
    'node -e 0 (floor)': [],
    'Stop, no --ship-to': [],
    'Stop, --ship-to, no shipper running (spawns one)': [],
    'Stop, --ship-to, a shipper running (marks only)': [],
  };
  const names = Object.keys(rows);
  // Warm-up: creates the ledger, the bundle's code cache and the centre's schema.
  timed(claude(false), env, STOP);
  timed(claude(true), env, STOP);
  waitForShipper();
  const load = loadavg()[0]!;
  const inProcess: Record<string, number[]> = {
    'triggerAutoShip, no shipper running (spawns one)': [],
    'triggerAutoShip, a shipper running (marks only)': [],
  };
  const [spawns, marks] = Object.values(inProcess) as [number[], number[]];
  const trigger = () => {
    const started = process.hrtime.bigint();
    const result = triggerAutoShip({ ledgerPath: db, url, fromFlag: true, env });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    return { result, ms };
  };
  for (let i = 0; i < RUNS; i++) {
    rows[names[0]!]!.push(timed(['node', '-e', '0'], env));
    rows[names[1]!]!.push(timed(claude(false), env, STOP));
    rows[names[2]!]!.push(timed(claude(true), env, STOP));
    waitForShipper();
    const lock = ShipperLock.tryAcquire(autoShipFiles(db).locks, 5000);
    if (!lock) throw new Error('could not take the shipper lock');
    try {
      rows[names[3]!]!.push(timed(claude(true), env, STOP));
      const marked = trigger();
      if (marked.result.started) throw new Error('started a shipper while one held the lock');
      marks.push(marked.ms);
    } finally {
      lock.release();
    }
    const spawned = trigger();
    if (!spawned.result.started) throw new Error(`no shipper started: ${spawned.result.message}`);
    spawns.push(spawned.ms);
    waitForShipper();
  }
  const base = rows[names[1]!]!;
  const baseWall = quantile(
    base.map((s) => s.wallMs),
    0.5,
  );
  const baseCpu = quantile(
    base.map((s) => s.cpuMs),
    0.5,
  );
  process.stdout.write(
    `hookledger claude, Stop event, dist bundle: ${RUNS} runs per row, interleaved; load average ${load.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}\n\n`,
  );
  process.stdout.write(
    '| what | wall p50 ms | wall p99 ms | CPU p50 ms | CPU p99 ms | wall p50 / no --ship-to | CPU p50 / no --ship-to |\n',
  );
  process.stdout.write('|---|---:|---:|---:|---:|---:|---:|\n');
  for (const name of names) {
    const wall = rows[name]!.map((s) => s.wallMs);
    const cpu = rows[name]!.map((s) => s.cpuMs);
    const [w50, w99, c50, c99] = [quantile(wall, 0.5), quantile(wall, 0.99), quantile(cpu, 0.5), quantile(cpu, 0.99)];
    process.stdout.write(
      `| ${name} | ${w50.toFixed(1)} | ${w99.toFixed(1)} | ${c50.toFixed(0)} | ${c99.toFixed(0)} | ${(w50 / baseWall).toFixed(2)}x | ${(c50 / baseCpu).toFixed(2)}x |\n`,
    );
  }
  process.stdout.write(
    `\nThe hook's added work alone, timed in-process (${RUNS} runs each):\n\n| what | p50 ms | p99 ms |\n|---|---:|---:|\n`,
  );
  for (const [name, values] of Object.entries(inProcess))
    process.stdout.write(`| ${name} | ${quantile(values, 0.5).toFixed(2)} | ${quantile(values, 0.99).toFixed(2)} |\n`);
  const [row] = (await server.sql('SELECT count(*)::int AS n FROM invocations', 'centre'))[0]!.rows as { n: number }[];
  process.stdout.write(`\ncentre holds ${row!.n} invocations (every Stop recorded and shipped)\n`);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
