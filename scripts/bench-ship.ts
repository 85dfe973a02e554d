/**
 * `hookledger ship` throughput, memory, follow-mode lag and 8 sources at once (issue 13),
 * measured on the built package (dist/, `node bin/hookledger.js ship`) into a local PostgreSQL
 * server this script starts (durable: fsync on), next to a floor measured in the same run.
 *
 *   npm run bench:ship -- [--invocations 100000] [--sources 8] [--per-source 20000] [--lag-samples 30]
 *
 * - throughput: one ship of a backlog of N invocations (generated with chain links, ~6 outcomes
 *   each, scripts/generate-ledger.ts), wall time from spawn to exit; invocations/s and links/s;
 * - floor: the same batches read from SQLite alone (dist's readBatch, no PostgreSQL): what ship
 *   could reach if the centre cost nothing;
 * - memory: the child's peak RSS (VmHWM) for a backlog of N/5 and N: flat means the same;
 * - 8 sources: 8 ledgers shipped by 8 processes at once into one database; total invocations/s;
 * - follow lag: `ship --follow` running, one invocation committed at a time through the real
 *   runner; time from its commit to its row being visible centrally, median and p99.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { flag, printTable, stats } from './bench-support.js';
import { generateLedger } from './generate-ledger.js';
import { PostgresServer } from './postgres-server.js';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'bin/hookledger.js');
const N = Number(flag('invocations', '100000'));
const SOURCES = Number(flag('sources', '8'));
const PER_SOURCE = Number(flag('per-source', '20000'));
const LAG_SAMPLES = Number(flag('lag-samples', '30'));

const dist = (path: string) => import(join(root, 'dist', path));

/** Runs `ship` on dist/ in a child; wall time and peak RSS. */
async function shipChild(
  db: string,
  url: string,
  extra: string[] = [],
): Promise<{ ms: number; peakMiB: number; report: { shipped: { invocations: number; links: number } } }> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'ship', '--db', db, '--json', ...extra], {
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
  }, 20);
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`ship exited ${code}: ${err}`);
  return { ms: performance.now() - started, peakMiB: peak / 1024, report: JSON.parse(out) };
}

function generate(dir: string, name: string, invocations: number, seed: number): string {
  const out = join(dir, `${name}.db`);
  generateLedger({ out, invocations, sessions: Math.max(10, Math.round(invocations / 200)), days: 5, seed, chain: true });
  return out;
}

async function main(): Promise<void> {
  const load = loadavg()[0]!.toFixed(1);
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-bench-ship-'));
  const server = await PostgresServer.start({ durable: true });
  try {
    console.log(`generating ledgers (${N} invocations, ${SOURCES} × ${PER_SOURCE}) …`);
    const big = generate(dir, 'big', N, 1);
    const small = generate(dir, 'small', Math.round(N / 5), 2);
    const sources = Array.from({ length: SOURCES }, (_, i) => generate(dir, `source-${i}`, PER_SOURCE, 10 + i));

    // Floor: the batches read from SQLite alone.
    const { openLedger } = await dist('ledger/open.js');
    const { readBatch } = await dist('ledger/ship-source.js');
    const ledger = openLedger({ path: big, readonly: true });
    const floorStart = performance.now();
    let after = 0;
    let floorInvocations = 0;
    for (;;) {
      const batch = readBatch(ledger, after, 2000);
      if (batch.links.length === 0) break;
      floorInvocations += batch.invocations.length;
      after = batch.links[batch.links.length - 1][0];
    }
    const floorMs = performance.now() - floorStart;
    ledger.close();

    const bigShip = await shipChild(big, await server.createDatabase('big'));
    const smallShip = await shipChild(small, await server.createDatabase('small'));
    const perSecond = (count: number, ms: number) => Math.round(count / (ms / 1000));

    const many = await server.createDatabase('many');
    const manyStart = performance.now();
    const results = await Promise.all(sources.map((db) => shipChild(db, many)));
    const manyMs = performance.now() - manyStart;
    const manyInvocations = results.reduce((n, r) => n + r.report.shipped.invocations, 0);

    const lag = await followLag(dir, await server.createDatabase('follow'));

    console.log(`\nship into a local PostgreSQL 15 (fsync on); load average ${load} at start, ${loadavg()[0]!.toFixed(1)} at end\n`);
    const shipRate = perSecond(bigShip.report.shipped.invocations, bigShip.ms);
    const floorRate = perSecond(floorInvocations, floorMs);
    printTable(
      ['case', 'invocations', 'seconds', 'invocations/s', 'links/s', 'peak RSS MiB', 'vs floor'],
      [
        ['floor: read batches from SQLite only', floorInvocations, (floorMs / 1000).toFixed(2), floorRate, '-', '-', '1.00'],
        [
          `ship, backlog ${N}`,
          bigShip.report.shipped.invocations,
          (bigShip.ms / 1000).toFixed(2),
          shipRate,
          perSecond(bigShip.report.shipped.links, bigShip.ms),
          bigShip.peakMiB.toFixed(0),
          (shipRate / floorRate).toFixed(2),
        ],
        [
          `ship, backlog ${Math.round(N / 5)}`,
          smallShip.report.shipped.invocations,
          (smallShip.ms / 1000).toFixed(2),
          perSecond(smallShip.report.shipped.invocations, smallShip.ms),
          perSecond(smallShip.report.shipped.links, smallShip.ms),
          smallShip.peakMiB.toFixed(0),
          '-',
        ],
        [
          `${SOURCES} sources at once`,
          manyInvocations,
          (manyMs / 1000).toFixed(2),
          perSecond(manyInvocations, manyMs),
          '-',
          Math.max(...results.map((r) => r.peakMiB)).toFixed(0),
          '-',
        ],
      ],
    );
    console.log(
      `\nfollow-mode lag, commit → visible centrally (${lag.length} samples): median ${lag.median.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`,
    );
    console.log(`goal: ≥ 20000 invocations/s (ship, backlog ${N}): ${shipRate >= 20_000 ? 'met' : 'NOT met'}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `ship --follow` running; invocations committed one at a time through the real runner (dist); commit → central row. */
async function followLag(dir: string, url: string) {
  const { SqliteLedger } = await dist('ledger/sqlite-ledger.js');
  const { createRunner } = await dist('runner/runner.js');
  const { defineHooks } = await dist('domain/hooks.js');
  const db = join(dir, 'follow.db');
  const ledger = SqliteLedger.open({ path: db });
  const runner = createRunner({
    ledger,
    hookSet: defineHooks({ name: 'lag', hooks: [{ id: 'guard', point: 'pre_tool_use', capability: 'guardrail', run: () => undefined }] }),
  });
  await runner.run({ point: 'pre_tool_use', sessionId: 'lag', toolName: 'Bash', toolInput: { command: 'warm' } });
  const child = spawn(process.execPath, [bin, 'ship', '--follow', '--db', db], {
    stdio: 'ignore',
    env: { ...process.env, HOOKLEDGER_SHIP_TO: url },
  });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples: number[] = [];
  try {
    // Until the follower has created the schema and shipped the warm-up record.
    const shipped = async () =>
      Number((await client.query('SELECT count(*) AS n FROM invocations').catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n);
    while ((await shipped()) < 1) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < LAG_SAMPLES; i++) {
      const report = await runner.run({ point: 'pre_tool_use', sessionId: 'lag', toolName: 'Bash', toolInput: { command: `echo ${i}` } });
      const committed = performance.now();
      const id = report.invocationId as number;
      for (;;) {
        const found = await client.query('SELECT 1 FROM invocations WHERE source_ref = $1', [id]);
        if (found.rowCount) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      samples.push(performance.now() - committed);
      await new Promise((r) => setTimeout(r, 50 + (i % 5) * 37));
    }
  } finally {
    await client.end();
    child.kill('SIGTERM');
    await runner.close();
    ledger.close();
  }
  const s = stats(samples);
  return { length: samples.length, median: s.p50, p99: s.p99, max: Math.max(...samples) };
}

await main();
