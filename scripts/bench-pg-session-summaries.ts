/**
 * What keeping `session_summaries` current costs the PostgreSQL write path (the triggers of
 * migrations/postgres/0002), and what it buys the sessions list. Two fresh databases on one
 * local server, the same sequential invocations (5 guardrails, sessions of 50 events, 1 in 10
 * denied, 1 in 20 with a failing hook) through the public runner, in alternating blocks so
 * machine noise hits both alike:
 *
 *   no-triggers   the summary triggers dropped (what the write path would cost without them)
 *   triggers      what ships
 *
 * Then the unfiltered sessions list's first page (50) on the `triggers` database: from the
 * summaries, and aggregated from the invocations (a filter that selects everything).
 * Measures dist/ (what ships).
 *
 *   npm run -s build && npx tsx scripts/bench-pg-session-summaries.ts [--n 4000] [--url postgres://…]
 */
import pg from 'pg';
import { defineHooks } from '../dist/domain/hooks.js';
import { allow, deny } from '../dist/domain/results.js';
import type { Ledger } from '../dist/ledger/ledger.js';
import { openPostgresLedger } from '../dist/ledger/postgres/engine.js';
import { createRunner } from '../dist/runner/runner.js';
import { flag, printTable, stats } from './bench-support.js';
import { PostgresServer, quoteIdent } from './postgres-server.js';

const N = Number(flag('n', '4000'));
const BLOCK = 200;
const given = flag('url', '');
const server = given ? null : await PostgresServer.start();
const adminUrl = given || server!.url();

const hookSet = defineHooks({
  name: 'bench',
  version: '1',
  hooks: [1, 2, 3, 4, 5].map((i) => ({
    id: `guard-${i}`,
    point: 'pre_tool_use' as const,
    priority: i * 10,
    capability: 'guardrail' as const,
    run: (inv: { toolInput: unknown }) => {
      const n = (inv.toolInput as { n: number }).n;
      if (i === 5 && n % 20 === 0) throw new Error('flaky');
      return i === 1 && n % 10 === 0 ? deny('no', 'policy_violation') : allow();
    },
  })),
});

async function database(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
  await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const configs: { name: string; ledger: Ledger; samples: number[] }[] = [];
for (const name of ['no-triggers', 'triggers']) {
  const url = await database(`hl_bench_summaries_${name.replace('-', '_')}`);
  const ledger = await openPostgresLedger({ url });
  if (name === 'no-triggers') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const [trigger, table] of [
      ['session_summaries_insert', 'invocations'],
      ['session_summaries_decide', 'invocations'],
      ['session_summaries_rekey', 'invocations'],
      ['session_summaries_delete', 'invocations'],
      ['session_summaries_outcome_insert', 'outcomes'],
      ['session_summaries_outcome_update', 'outcomes'],
      ['session_summaries_outcome_delete', 'outcomes'],
    ])
      await client.query(`DROP TRIGGER ${trigger} ON ${table}`);
    await client.end();
  }
  configs.push({ name, ledger, samples: [] });
}

const runners = configs.map((c) => createRunner({ hookSet, ledger: c.ledger }));
for (let start = 0; start < N; start += BLOCK) {
  for (const [k, config] of configs.entries()) {
    for (let n = start; n < Math.min(N, start + BLOCK); n++) {
      const t = performance.now();
      await runners[k]!.run({ point: 'pre_tool_use', sessionId: `s${Math.floor(n / 50)}`, toolName: 'Bash', toolInput: { n } });
      config.samples.push(performance.now() - t);
    }
  }
}
for (const runner of runners) await runner.close();

const [off, on] = configs.map((c) => stats(c.samples));
const ms = (v: number) => v.toFixed(3);
console.log(`write path, ${N} sequential invocations per configuration (ms per invocation, begin + finish)`);
printTable(
  ['config', 'p50', 'p99', 'mean', 'p50 ratio'],
  configs.map((c, i) => {
    const s = i === 0 ? off! : on!;
    return [c.name, ms(s.p50), ms(s.p99), ms(s.mean), (s.p50 / off!.p50).toFixed(3)];
  }),
);

const ledger = configs[1]!.ledger;
const list = async (filter: { since?: number }) => {
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    await ledger.listSessions(filter, { limit: 50 });
    samples.push(performance.now() - t);
  }
  return stats(samples);
};
const stored = await list({});
const aggregated = await list({ since: 0 });
console.log(`\nsessions list, first page of 50 over ${N / 50} sessions (ms, 30 runs)`);
printTable(
  ['read', 'p50', 'p99'],
  [
    ['stored summaries', ms(stored.p50), ms(stored.p99)],
    ['aggregated', ms(aggregated.p50), ms(aggregated.p99)],
  ],
);
for (const c of configs) await c.ledger.close();
await server?.stop();
