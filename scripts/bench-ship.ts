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
 *   scripts/generate-ledger.ts) into a centre whose schema exists (migrated beforehand, as a centre
 *   is once), wall time from spawn to exit; invocations/s, ratio to the floor and to the goal of
 *   20,000, CPU of the ship process (user+sys, this script's reaped children) and of its PostgreSQL
 *   backend (the postmaster's reaped children), per invocation — CPU, unlike wall time, means
 *   something on a loaded machine;
 * - memory: the ship process's peak RSS (VmHWM) for backlogs of N/4 and N: flat means equal;
 * - 8 sources: 8 ledgers shipped by 8 processes at once into one migrated database; aggregate
 *   invocations/s (all sources' invocations over the wall time from the first spawn to the last
 *   exit, start-up included), its ratio to 20,000, the CPU of the 8 ships and of PostgreSQL per
 *   invocation, and each source's central counts against its ledger (exactly once); then the same
 *   into a new database, whose schema the first ship creates while the others wait;
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
import { PostgresServer } from './postgres-server.js';
import { bin, dist, exactlyOnce, generate, migratedDatabase, ships, type ShipsRun } from './ship-children.js';

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

/** The issue's throughput goal, invocations/s. */
const GOAL = 20_000;

/** Invocations per second of a run, first spawn to last exit. */
const rate = (r: ShipsRun) => r.invocations / (r.ms / 1000);
/** CPU per invocation, µs. */
const perInvocation = (cpuS: number, r: ShipsRun) => (cpuS * 1e6) / r.invocations;

/** A database of the current central schema, changed by `OLD_SCHEMA`'s SQL (the schema before a change). */
async function oldSchemaDatabase(server: PostgresServer, name: string): Promise<string> {
  const url = await migratedDatabase(server, name);
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
          : migratedDatabase(server, `${name}_${schema}_${round}`, schema === 'old' && OLD_ROOT ? OLD_ROOT : undefined);
      const program = schema === 'old' && OLD_ROOT ? join(OLD_ROOT, 'bin/hookledger.js') : bin;
      const loadAt = loadavg()[0]!.toFixed(1);
      const one = await ships(server, [big], await fresh('one'), BATCH, program);
      const manyUrl = await fresh('many');
      const many = await ships(server, sources, manyUrl, BATCH, program);
      const wrong = await exactlyOnce(manyUrl, sources, many.runs);
      if (wrong.length > 0) throw new Error(`${schema} schema, ${SOURCES} sources NOT exactly once:\n  ${wrong.join('\n  ')}`);
      const entry = (per[schema] ??= { one: [], ship: [], server: [], many: [] });
      entry.one.push(rate(one));
      entry.ship.push(perInvocation(one.shipCpuS, one));
      entry.server.push(perInvocation(one.serverCpuS, one));
      entry.many.push(rate(many));
      rows.push([
        round,
        schema,
        loadAt,
        Math.round(rate(one)),
        perInvocation(one.shipCpuS, one).toFixed(1),
        perInvocation(one.serverCpuS, one).toFixed(1),
        Math.round(rate(many)),
        perInvocation(many.shipCpuS, many).toFixed(1),
        perInvocation(many.serverCpuS, many).toFixed(1),
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

    // Every measured ship goes into a centre whose schema exists (created once, as a centre is); the first ship into a
    // new database also creates it, measured once for 8 sources below.
    const loadBefore = loadavg()[0]!.toFixed(1);
    const bigShip = await ships(server, [big], await migratedDatabase(server, 'big'), BATCH);
    const smallShip = await ships(server, [small], await migratedDatabase(server, 'small'), BATCH);
    const manyUrl = await migratedDatabase(server, 'many');
    const many = await ships(server, sources, manyUrl, BATCH);
    const wrong = await exactlyOnce(manyUrl, sources, many.runs);
    const newUrl = await server.createDatabase('many_new');
    const manyNew = await ships(server, sources, newUrl, BATCH);
    wrong.push(...(await exactlyOnce(newUrl, sources, manyNew.runs)));

    const lag = await followLag(dir, await server.createDatabase('follow'));

    console.log(
      `\nship into a local PostgreSQL 15 (fsync on); load average ${load} at start, ${loadBefore} before the ships, ${loadavg()[0]!.toFixed(1)} at end\n`,
    );
    const floorRate = floorInvocations / (floorMs / 1000);
    const us = (s: number, r: ShipsRun) => perInvocation(s, r).toFixed(0);
    const row = (label: string, r: ShipsRun) => [
      label,
      r.invocations,
      (r.ms / 1000).toFixed(2),
      Math.round(rate(r)),
      (rate(r) / floorRate).toFixed(2),
      (rate(r) / GOAL).toFixed(2),
      r.peakMiB.toFixed(0),
      us(r.shipCpuS, r),
      us(r.serverCpuS, r),
    ];
    printTable(
      ['case', 'invocations', 'seconds', 'invocations/s', 'vs floor', 'vs 20,000', 'peak RSS MiB', 'ship CPU µs/inv', 'server CPU µs/inv'],
      [
        [
          'floor: read batches from SQLite only',
          floorInvocations,
          (floorMs / 1000).toFixed(2),
          Math.round(floorRate),
          '1.00',
          (floorRate / GOAL).toFixed(2),
          '-',
          ((floorCpuS * 1e6) / floorInvocations).toFixed(0),
          '-',
        ],
        row(`ship, backlog ${N}`, bigShip),
        row(`ship, backlog ${SMALL}`, smallShip),
        row(`${SOURCES} sources at once (aggregate)`, many),
        row(`${SOURCES} sources at once, new database`, manyNew),
      ],
    );
    console.log(
      `\nmemory: peak RSS ${smallShip.peakMiB.toFixed(0)} MiB for a backlog of ${SMALL}, ${bigShip.peakMiB.toFixed(0)} MiB for ${N} (ratio ${(bigShip.peakMiB / smallShip.peakMiB).toFixed(2)}; flat = about 1)`,
    );
    console.log(
      `${SOURCES} sources: ${wrong.length === 0 ? `every source exactly once, both times (links, invocations, distinct invocations, outcomes and head equal to its ledger's)` : `NOT exactly once:\n  ${wrong.join('\n  ')}`}`,
    );
    console.log(
      `follow-mode lag, commit → visible centrally (${lag.length} samples): median ${lag.median.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms (goal: within 1 s)`,
    );
    const goal = (label: string, r: ShipsRun, cpu: string) =>
      console.log(
        `goal ≥ 20,000 invocations/s, ${label}: ${rate(r) >= GOAL ? 'met' : 'NOT met'}, ${Math.round(rate(r))}/s = ${(rate(r) / GOAL).toFixed(2)}× (${cpu} ${us(r.shipCpuS, r)} µs + PostgreSQL ${us(r.serverCpuS, r)} µs CPU per invocation)`,
      );
    goal(`one source (backlog ${N})`, bigShip, 'ship');
    goal(`${SOURCES} sources at once (aggregate, first spawn to last exit)`, many, `${SOURCES} ships incl. start-up`);
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
