/**
 * `hookledger ship` throughput, CPU, memory, 8 sources at once and follow-mode lag (issue 13),
 * measured on the built package (dist/, `node bin/hookledger.js ship`) into a local PostgreSQL
 * server this script starts (durable: fsync and synchronous commit on), next to a floor measured
 * in the same run.
 *
 *   npm run bench:ship -- [--invocations 200000] [--sources 8] [--per-source 20000] [--lag-samples 30]
 *
 * - floor: the batches read from SQLite alone (dist's readBatch, no PostgreSQL): what ship could
 *   reach if the centre cost nothing;
 * - ship: one ship of a backlog of N invocations (generated with chain links, ~6 outcomes each,
 *   scripts/generate-ledger.ts), wall time from spawn to exit; invocations/s, ratio to the floor,
 *   CPU of the ship process (user+sys) and of its PostgreSQL backend (the postmaster's reaped
 *   children), per invocation — CPU, unlike wall time, means something on a loaded machine;
 * - memory: the ship process's peak RSS (VmHWM) for backlogs of N/4 and N: flat means equal;
 * - 8 sources: 8 ledgers shipped by 8 processes at once into one database; aggregate
 *   invocations/s, and each source's central counts against its ledger (exactly once);
 * - follow lag: `ship --follow` running, one invocation committed at a time through the real
 *   runner; time from its commit to its row being visible centrally, median and p99.
 *
 *   npm run bench:ship -- --old-schema scripts/bench-ship-before-0010.sql [--invocations 100000] [--rounds 3]
 *   npm run bench:ship -- --old-root ../hookledger-before [--invocations 100000] [--rounds 3]
 *
 * - A/B of two central schemas in the same run (the machine is shared: only a same-run comparison
 *   means something): each round ships the backlog of N, and the 8 sources at once, into a
 *   database of the current schema (new) and into one migrated then changed by the file's SQL
 *   (old), alternately; invocations/s and CPU per invocation of ship and of its backend, each
 *   round and the median, and new/old. `--old-root DIR` runs the old side's ship from another
 *   build (a checkout with dist/ built), into the schema that build migrates to: before/after of
 *   a whole change.
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
const N = Number(flag('invocations', '200000'));
const SMALL = Math.round(N / 4);
const SOURCES = Number(flag('sources', '8'));
const PER_SOURCE = Number(flag('per-source', '20000'));
const LAG_SAMPLES = Number(flag('lag-samples', '30'));
/** ship's default batch size (links per transaction), which the floor reads with too. */
const BATCH = Number(flag('batch', '5000'));
const OLD_SCHEMA = flag('old-schema', '');
/** Another build's package root (a checkout with dist/ built): its `ship` is the old side of the A/B, into the schema it migrates to. */
const OLD_ROOT = flag('old-root', '');
const ROUNDS = Number(flag('rounds', '3'));

const dist = (path: string) => import(join(root, 'dist', path));

interface ShipRun {
  ms: number;
  peakMiB: number;
  /** CPU of the ship process (user + sys), s. */
  cpuS: number;
  report: { source: string; shipped: { invocations: number; links: number } };
}

/** Runs `ship` on dist/ in a child; wall time, peak RSS and CPU time (both read from /proc while it runs). */
async function shipChild(db: string, url: string, extra: string[] = [], program = bin): Promise<ShipRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [program, 'ship', '--db', db, '--json', '--batch', String(BATCH), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOOKLEDGER_SHIP_TO: url },
  });
  let out = '';
  let err = '';
  let peak = 0;
  let ticks = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks = Math.max(ticks, Number(fields[11]) + Number(fields[12]));
    } catch {
      /* exited */
    }
  }, 10);
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`ship exited ${code}: ${err}`);
  return { ms: performance.now() - started, peakMiB: peak / 1024, cpuS: ticks / CLOCK_TICKS, report: JSON.parse(out) };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU (s) the server's exited backends used so far: the postmaster's reaped children (cutime + cstime). */
function serverCpu(server: PostgresServer): number {
  const pid = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/** A ship with the CPU its PostgreSQL backend used (the backend exits with the ship's connection; waited for). */
async function measuredShip(server: PostgresServer, db: string, url: string, program = bin): Promise<ShipRun & { serverCpuS: number }> {
  const before = serverCpu(server);
  const run = await shipChild(db, url, [], program);
  let after = serverCpu(server);
  for (let i = 0; i < 50 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = serverCpu(server);
  }
  await new Promise((r) => setTimeout(r, 300));
  return { ...run, serverCpuS: serverCpu(server) - before };
}

/** Each source's central counts against its ledger: links, invocations (and distinct ones: no duplicate), outcomes, head. */
async function exactlyOnce(url: string, dbs: string[], runs: ShipRun[]): Promise<string[]> {
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

function generate(dir: string, name: string, invocations: number, seed: number): string {
  const out = join(dir, `${name}.db`);
  generateLedger({ out, invocations, sessions: Math.max(10, Math.round(invocations / 200)), days: 5, seed, chain: true });
  return out;
}

/** A database of the current central schema, changed by `OLD_SCHEMA`'s SQL (the schema before a change). */
async function oldSchemaDatabase(server: PostgresServer, name: string): Promise<string> {
  const url = await server.createDatabase(name);
  const { connectPostgres } = await dist('ledger/postgres/open.js');
  await (await connectPostgres({ url })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(readFileSync(OLD_SCHEMA, 'utf8'));
  await client.end();
  return url;
}

/** Old schema against new, alternated in one run (see the file comment). */
async function schemaAB(server: PostgresServer, dir: string): Promise<void> {
  console.log(`generating ledgers (${N} invocations, ${SOURCES} × ${PER_SOURCE}) …`);
  const big = generate(dir, 'big', N, 1);
  const sources = Array.from({ length: SOURCES }, (_, i) => generate(dir, `source-${i}`, PER_SOURCE, 10 + i));
  const rows: (string | number)[][] = [];
  const per: Record<string, { one: number[]; ship: number[]; server: number[]; many: number[] }> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    for (const schema of round % 2 === 1 ? ['old', 'new'] : ['new', 'old']) {
      const fresh = (name: string) =>
        schema === 'old' && OLD_SCHEMA
          ? oldSchemaDatabase(server, `${name}_${schema}_${round}`)
          : server.createDatabase(`${name}_${schema}_${round}`);
      const program = schema === 'old' && OLD_ROOT ? join(OLD_ROOT, 'bin/hookledger.js') : bin;
      const loadAt = loadavg()[0]!.toFixed(1);
      const one = await measuredShip(server, big, await fresh('one'), program);
      const many = await fresh('many');
      const manyServer = serverCpu(server);
      const started = performance.now();
      const results = await Promise.all(sources.map((db) => shipChild(db, many, [], program)));
      const manyMs = performance.now() - started;
      await new Promise((r) => setTimeout(r, 500));
      const manyServerS = serverCpu(server) - manyServer;
      const wrong = await exactlyOnce(many, sources, results);
      if (wrong.length > 0) throw new Error(`${schema} schema, ${SOURCES} sources NOT exactly once:\n  ${wrong.join('\n  ')}`);
      const n = one.report.shipped.invocations;
      const manyN = results.reduce((t, r) => t + r.report.shipped.invocations, 0);
      const entry = (per[schema] ??= { one: [], ship: [], server: [], many: [] });
      entry.one.push(n / (one.ms / 1000));
      entry.ship.push((one.cpuS * 1e6) / n);
      entry.server.push((one.serverCpuS * 1e6) / n);
      entry.many.push(manyN / (manyMs / 1000));
      rows.push([
        round,
        schema,
        loadAt,
        Math.round(n / (one.ms / 1000)),
        ((one.cpuS * 1e6) / n).toFixed(1),
        ((one.serverCpuS * 1e6) / n).toFixed(1),
        Math.round(manyN / (manyMs / 1000)),
        ((results.reduce((t, r) => t + r.cpuS, 0) * 1e6) / manyN).toFixed(1),
        ((manyServerS * 1e6) / manyN).toFixed(1),
      ]);
    }
  }
  const median = (xs: number[]) => stats(xs).p50;
  for (const schema of ['old', 'new']) {
    const e = per[schema]!;
    rows.push([
      'median',
      schema,
      '-',
      Math.round(median(e.one)),
      median(e.ship).toFixed(1),
      median(e.server).toFixed(1),
      Math.round(median(e.many)),
      '-',
      '-',
    ]);
  }
  rows.push([
    'new / old',
    '',
    '',
    (median(per.new!.one) / median(per.old!.one)).toFixed(2),
    (median(per.new!.ship) / median(per.old!.ship)).toFixed(2),
    (median(per.new!.server) / median(per.old!.server)).toFixed(2),
    (median(per.new!.many) / median(per.old!.many)).toFixed(2),
    '-',
    '-',
  ]);
  const old = [OLD_ROOT && `ship of ${OLD_ROOT}`, OLD_SCHEMA && `schema changed by ${OLD_SCHEMA}`].filter(Boolean).join(', ');
  console.log(`\nold (${old}) against new (this build), same run, PostgreSQL 15 fsync on; load at end ${loadavg()[0]!.toFixed(1)}\n`);
  printTable(
    [
      'round',
      'schema',
      'load',
      `1 source inv/s (${N})`,
      'ship CPU µs/inv',
      'backend CPU µs/inv',
      `${SOURCES} sources inv/s`,
      `${SOURCES} ships CPU µs/inv`,
      `${SOURCES} backends CPU µs/inv`,
    ],
    rows,
  );
  const best = median(per.new!.one);
  console.log(
    `goal: ≥ 20000 invocations/s for one source (new schema, median of ${ROUNDS}): ${best >= 20_000 ? 'met' : 'NOT met'} (${Math.round(best)}/s)`,
  );
}

async function main(): Promise<void> {
  const load = loadavg()[0]!.toFixed(1);
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-bench-ship-'));
  const server = await PostgresServer.start({ durable: true });
  try {
    if (OLD_SCHEMA || OLD_ROOT) return await schemaAB(server, dir);
    console.log(`generating ledgers (${N} and ${SMALL} invocations, ${SOURCES} × ${PER_SOURCE}) …`);
    const big = generate(dir, 'big', N, 1);
    const small = generate(dir, 'small', SMALL, 2);
    const sources = Array.from({ length: SOURCES }, (_, i) => generate(dir, `source-${i}`, PER_SOURCE, 10 + i));

    // Floor: the batches read from SQLite alone, as ship reads them (its default batch size).
    const { openLedger } = await dist('ledger/open.js');
    const { readBatch } = await dist('ledger/ship-source.js');
    const ledger = openLedger({ path: big, readonly: true });
    const floorStart = performance.now();
    const floorCpu = process.cpuUsage();
    let after = 0;
    let floorInvocations = 0;
    for (;;) {
      const batch = readBatch(ledger, after, BATCH, 'src-floor');
      if (!batch.span) break;
      floorInvocations += batch.invocations.length;
      after = batch.span.lastSeq;
    }
    const floorMs = performance.now() - floorStart;
    const floorCpuS = (process.cpuUsage(floorCpu).user + process.cpuUsage(floorCpu).system) / 1e6;
    ledger.close();

    const loadBefore = loadavg()[0]!.toFixed(1);
    const bigShip = await measuredShip(server, big, await server.createDatabase('big'));
    const smallShip = await measuredShip(server, small, await server.createDatabase('small'));
    const perSecond = (count: number, ms: number) => Math.round(count / (ms / 1000));

    const many = await server.createDatabase('many');
    const manyStart = performance.now();
    const results = await Promise.all(sources.map((db) => shipChild(db, many)));
    const manyMs = performance.now() - manyStart;
    const manyInvocations = results.reduce((n, r) => n + r.report.shipped.invocations, 0);
    const wrong = await exactlyOnce(many, sources, results);

    const lag = await followLag(dir, await server.createDatabase('follow'));

    console.log(
      `\nship into a local PostgreSQL 15 (fsync on); load average ${load} at start, ${loadBefore} before the ships, ${loadavg()[0]!.toFixed(1)} at end\n`,
    );
    const shipRate = perSecond(bigShip.report.shipped.invocations, bigShip.ms);
    const floorRate = perSecond(floorInvocations, floorMs);
    const us = (s: number, n: number) => ((s * 1e6) / n).toFixed(0);
    const row = (label: string, r: ShipRun & { serverCpuS: number }) => {
      const n = r.report.shipped.invocations;
      const rate = perSecond(n, r.ms);
      return [
        label,
        n,
        (r.ms / 1000).toFixed(2),
        rate,
        (rate / floorRate).toFixed(2),
        r.peakMiB.toFixed(0),
        us(r.cpuS, n),
        us(r.serverCpuS, n),
      ];
    };
    printTable(
      ['case', 'invocations', 'seconds', 'invocations/s', 'vs floor', 'peak RSS MiB', 'ship CPU µs/inv', 'server CPU µs/inv'],
      [
        [
          'floor: read batches from SQLite only',
          floorInvocations,
          (floorMs / 1000).toFixed(2),
          floorRate,
          '1.00',
          '-',
          us(floorCpuS, floorInvocations),
          '-',
        ],
        row(`ship, backlog ${N}`, bigShip),
        row(`ship, backlog ${SMALL}`, smallShip),
        [
          `${SOURCES} sources at once (aggregate)`,
          manyInvocations,
          (manyMs / 1000).toFixed(2),
          perSecond(manyInvocations, manyMs),
          (perSecond(manyInvocations, manyMs) / floorRate).toFixed(2),
          Math.max(...results.map((r) => r.peakMiB)).toFixed(0),
          us(
            results.reduce((t, r) => t + r.cpuS, 0),
            manyInvocations,
          ),
          '-',
        ],
      ],
    );
    console.log(
      `\nmemory: peak RSS ${smallShip.peakMiB.toFixed(0)} MiB for a backlog of ${SMALL}, ${bigShip.peakMiB.toFixed(0)} MiB for ${N} (ratio ${(bigShip.peakMiB / smallShip.peakMiB).toFixed(2)}; flat = about 1)`,
    );
    console.log(
      `${SOURCES} sources: ${wrong.length === 0 ? `every source exactly once (links, invocations, distinct invocations, outcomes and head equal to its ledger's)` : `NOT exactly once:\n  ${wrong.join('\n  ')}`}`,
    );
    console.log(
      `follow-mode lag, commit → visible centrally (${lag.length} samples): median ${lag.median.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms (goal: within 1 s)`,
    );
    console.log(
      `goal: ≥ 20000 invocations/s (ship, backlog ${N}): ${shipRate >= 20_000 ? 'met' : 'NOT met'} (${shipRate}/s; ship ${bigShip.cpuS.toFixed(2)} s CPU, its PostgreSQL backend ${bigShip.serverCpuS.toFixed(2)} s CPU)`,
    );
    if (wrong.length > 0) process.exitCode = 1;
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
