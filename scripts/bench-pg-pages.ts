/**
 * Every report page the console and the CLI open, timed on a central PostgreSQL ledger, and which
 * indexes each one reads (issue 13: the central schema's index audit, docs/postgres.md "Indexes").
 * Measures the built package (dist/, through `openLedger`): `npm run bench:pg-pages` builds first.
 *
 *   npm run bench:pg-pages -- --url postgres://…/central [--runs 30] [--match 'sessions'] [--indexes]
 *   npm run bench:pg-pages -- --url postgres://…/central --migration migrations/postgres/00NN_x.sql [--rounds 2]
 *
 * The ledger: any central ledger, e.g. several generated SQLite ledgers shipped into one database
 * (`npm run generate:ledger -- --out s1.db --chain` …, `hookledger ship --db s1.db --to …`), then
 * `VACUUM ANALYZE`. The cases pick their keys (sessions, tool-use ids, a source, a host) from it.
 *
 * - default: each page's p50 and p99 (ms), and the floor: one invocation read by primary key;
 * - `--indexes`: per page, the indexes its queries scanned (pg_stat_user_indexes.idx_scan before
 *   and after one run on fresh connections, whose statistics are flushed when they close);
 * - `--migration FILE`: an A/B in the same run. The ledger as it is (A), then with FILE's
 *   statements applied (B), alternated `--rounds` times: only the indexes that differ are dropped
 *   and created again (then ANALYZE), so both states read the same rows. Prints each page's p50 in
 *   both (median over rounds) and B/A. The ledger is left as it was (A): FILE is not recorded as applied.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openLedger, type InvocationFilter, type Ledger } from '../dist/index.js';
import { loadAverages, printTable, stats } from './bench-support.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    runs: { type: 'string', default: '30' },
    match: { type: 'string' },
    indexes: { type: 'boolean', default: false },
    migration: { type: 'string' },
    rounds: { type: 'string', default: '2' },
  },
});
if (!values.url) {
  console.error('bench-pg-pages: --url postgres://… (a central ledger) is required');
  process.exit(2);
}
const URL_ = values.url;
const RUNS = Number(values.runs);
const DAY = 86_400_000;
const load = loadAverages;

interface Keys {
  maxId: number;
  newest: number;
  sessions: string[];
  toolUses: string[];
  source: string;
  host: string;
  /** Hook set fingerprints, oldest first. */
  fingerprints: string[];
}

interface Case {
  label: string;
  /** Runs per measurement (a slow page runs fewer times). */
  runs: number;
  run(ledger: Ledger, keys: Keys, i: number): Promise<unknown>;
}

const drain = async (chunks: AsyncIterable<unknown>) => {
  let n = 0;
  for await (const _ of chunks) n++;
  return n;
};

function cases(): Case[] {
  const page = { limit: 50 };
  const denials = (label: string, filter: (k: Keys, i: number) => InvocationFilter): Case => ({
    label: `denials ${label}`,
    runs: RUNS,
    run: (l, k, i) => l.listDenials(filter(k, i), page),
  });
  const sessions = (label: string, filter: (k: Keys) => InvocationFilter, runs = Math.max(3, RUNS / 5)): Case[] => [
    { label: `sessions ${label}`, runs, run: (l, k) => l.listSessions(filter(k), page) },
    {
      label: `sessions ${label}, next page`,
      runs,
      run: async (l, k) => {
        const first = await l.listSessions(filter(k), page);
        return first.nextCursor ? l.listSessions(filter(k), { ...page, cursor: first.nextCursor }) : null;
      },
    },
  ];
  const rnd = (i: number) => ((i * 2654435761) >>> 0) % 1_000_003;
  const all: Case[] = [
    { label: 'floor: explain by id', runs: RUNS * 2, run: (l, k, i) => l.explain(1 + (rnd(i) % k.maxId)) },
    { label: 'explain by tool_use_id', runs: RUNS, run: (l, k, i) => l.explain(k.toolUses[i % k.toolUses.length]!) },
    denials('(no filter)', () => ({})),
    {
      label: 'denials, next page',
      runs: RUNS,
      run: async (l) => l.listDenials({}, { ...page, cursor: (await l.listDenials({}, page)).nextCursor! }),
    },
    denials('--session', (k, i) => ({ sessionId: k.sessions[i % k.sessions.length]! })),
    denials('--tool Bash', () => ({ toolName: 'Bash' })),
    denials('--tool Task (rare)', () => ({ toolName: 'Task' })),
    denials('--hook no-rm-rf', () => ({ hookId: 'no-rm-rf' })),
    denials('--reason-code timeout (rare)', () => ({ reasonCode: 'timeout' })),
    denials('--point user_prompt_submit', () => ({ point: 'user_prompt_submit' })),
    denials('--hook-set NAME', () => ({ hookSet: 'team-guardrails' })),
    denials('--since 7d', (k) => ({ since: k.newest - 7 * DAY })),
    denials('--since 45d --until 44d', (k) => ({ since: k.newest - 45 * DAY, until: k.newest - 44 * DAY })),
    denials('--source', (k) => ({ source: k.source })),
    denials('--host', (k) => ({ host: k.host })),
    { label: 'denials --group-by tool', runs: Math.max(3, RUNS / 10), run: (l) => l.groupDenials({}, 'tool') },
    ...sessions('(first page)', () => ({})),
    ...sessions('--tool Bash', () => ({ toolName: 'Bash' })),
    ...sessions('--tool Task (rare)', () => ({ toolName: 'Task' })),
    ...sessions('--point session_start', () => ({ point: 'session_start' })),
    ...sessions('--decision deny', () => ({ decision: 'deny' })),
    ...sessions('--decision ask', () => ({ decision: 'ask' })),
    ...sessions('--hook-set NAME', () => ({ hookSet: 'team-guardrails' })),
    ...sessions('--reason-code timeout', () => ({ reasonCode: 'timeout' })),
    ...sessions('--hook no-rm-rf', () => ({ hookId: 'no-rm-rf' })),
    ...sessions('--hook-set FINGERPRINT (oldest)', (k) => ({ hookSet: k.fingerprints[0]! })),
    ...sessions('--hook-set FINGERPRINT (newest)', (k) => ({ hookSet: k.fingerprints[k.fingerprints.length - 1]! })),
    ...sessions('--since 7d', (k) => ({ since: k.newest - 7 * DAY })),
    ...sessions('--source', (k) => ({ source: k.source })),
    ...sessions('--host', (k) => ({ host: k.host })),
    {
      label: 'session timeline',
      runs: RUNS,
      run: (l, k, i) => l.sessionTimeline(k.sessions[i % k.sessions.length]!, { limit: 1000 }),
    },
    { label: 'hooks health 1 day', runs: 3, run: (l, k) => l.hookHealth({ since: k.newest - DAY, until: k.newest + 1 }) },
    { label: 'hooks health 7 days', runs: 3, run: (l, k) => l.hookHealth({ since: k.newest - 7 * DAY, until: k.newest + 1 }) },
    { label: 'hooks health 30 days', runs: 3, run: (l, k) => l.hookHealth({ since: k.newest - 30 * DAY, until: k.newest + 1 }) },
    {
      label: 'hooks health 7 days --source',
      runs: 3,
      run: (l, k) => l.hookHealth({ since: k.newest - 7 * DAY, until: k.newest + 1, source: k.source }),
    },
    {
      label: 'health series 7 days (console chart)',
      runs: 3,
      run: (l, k) => l.hookHealthSeries({ since: k.newest - 7 * DAY, until: k.newest + 1, stepMs: 6 * 3_600_000 }),
    },
    { label: 'export --since 1d (jsonl)', runs: 3, run: (l, k) => drain(l.exportText({ since: k.newest - DAY }, 'jsonl')) },
    {
      label: 'export --source --since 2d (jsonl)',
      runs: 3,
      run: (l, k) => drain(l.exportText({ since: k.newest - 2 * DAY, source: k.source }, 'jsonl')),
    },
    { label: 'export --tool Task (whole, jsonl)', runs: 3, run: (l) => drain(l.exportText({ toolName: 'Task' }, 'jsonl')) },
    { label: 'export --decision ask (whole, jsonl)', runs: 3, run: (l) => drain(l.exportText({ decision: 'ask' }, 'jsonl')) },
    {
      label: 'replay selection --tool Bash --limit 500',
      runs: 5,
      run: async (l) => {
        const source = await l.replaySource({ filter: { toolName: 'Bash' }, limit: 500 });
        let rows = 0;
        for (let batch = await source.next(); batch.length > 0; batch = await source.next()) {
          rows += batch.length;
          await source.recordedOutcomes(batch.map((r) => r.id));
        }
        return rows;
      },
    },
    {
      label: 'replay selection --since 1d --point pre_tool_use',
      runs: 3,
      run: async (l, k) => {
        const source = await l.replaySource({ filter: { since: k.newest - DAY, point: 'pre_tool_use' } });
        let rows = 0;
        for (let batch = await source.next(); batch.length > 0; batch = await source.next()) rows += batch.length;
        return rows;
      },
    },
    { label: 'holds list', runs: 5, run: (l) => l.listHolds() },
  ];
  return all.filter((c, i) => i === 0 || !values.match || new RegExp(values.match).test(c.label));
}

async function keysOf(pool: pg.Pool): Promise<Keys> {
  const one = async (sql: string) => (await pool.query<{ v: string }>(`SELECT (${sql}) AS v`)).rows[0]!.v;
  const sample = async (sql: string) => (await pool.query<[string]>({ text: sql, rowMode: 'array' })).rows.map((r) => r[0]);
  return {
    maxId: Number(await one('SELECT max(id) FROM invocations')),
    newest: Number(await one('SELECT max(started_at) FROM invocations')),
    sessions: await sample(`SELECT session_id FROM invocations WHERE id % 997 = 0 AND session_id IS NOT NULL ORDER BY id LIMIT 300`),
    toolUses: await sample(`SELECT tool_use_id FROM invocations WHERE id % 991 = 0 AND tool_use_id IS NOT NULL ORDER BY id LIMIT 300`),
    source: (await one('SELECT coalesce((SELECT id FROM ship_sources ORDER BY id LIMIT 1), (SELECT min(writer_id) FROM invocations))'))!,
    host: (await one('SELECT host FROM invocations ORDER BY id DESC LIMIT 1'))!,
    fingerprints: await sample('SELECT fingerprint FROM hook_sets ORDER BY id'),
  };
}

/** p50 and p99 (ms) of `c` after two warm-up runs. */
async function measure(ledger: Ledger, keys: Keys, c: Case): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 2; i++) await c.run(ledger, keys, i);
  const samples: number[] = [];
  for (let i = 0; i < c.runs; i++) {
    const t0 = process.hrtime.bigint();
    await c.run(ledger, keys, i);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const s = stats(samples);
  return { p50: s.p50, p99: s.p99 };
}

async function timeAll(keys: Keys): Promise<Map<string, { p50: number; p99: number }>> {
  const ledger = await openLedger({ url: URL_, readonly: true });
  const out = new Map<string, { p50: number; p99: number }>();
  try {
    for (const c of cases()) out.set(c.label, await measure(ledger, keys, c));
  } finally {
    await ledger.close();
  }
  return out;
}

const indexScans = async (pool: pg.Pool) =>
  new Map(
    (
      await pool.query<{ name: string; n: string }>(
        `SELECT indexrelname AS name, idx_scan AS n FROM pg_stat_user_indexes WHERE relname IN ('invocations', 'outcomes', 'chain', 'session_summaries', 'hook_sets', 'prune_checkpoints', 'health_rollups', 'health_rollup_hours', 'legal_holds', 'ship_hook_sets')`,
      )
    ).rows.map((r) => [r.name, Number(r.n)]),
  );

/** Per case, the indexes one run of it scanned (its connections closed, so their statistics are flushed). */
async function indexUse(pool: pg.Pool, keys: Keys): Promise<void> {
  const rows: string[][] = [];
  for (const c of cases()) {
    const before = await indexScans(pool);
    const ledger = await openLedger({ url: URL_, readonly: true });
    await c.run(ledger, keys, 1);
    await ledger.close();
    await new Promise((r) => setTimeout(r, 300));
    const after = await indexScans(pool);
    const used = [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name, n]) => `${name} (${n - before.get(name)!})`);
    rows.push([c.label, used.join(', ') || '(none: sequential or primary key only)']);
  }
  printTable(['page', 'indexes scanned (scans)'], rows);
}

/** The ledger's index definitions on the tables a migration may change. */
async function indexDefs(pool: pg.Pool): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename IN ('invocations', 'outcomes')`,
  );
  return new Map(rows.map((r) => [r.name, r.def]));
}

/** Drops the indexes `target` lacks and creates those it has that are missing (or differ), then ANALYZE. */
async function become(pool: pg.Pool, target: Map<string, string>): Promise<void> {
  const now = await indexDefs(pool);
  for (const [name, def] of now) if (target.get(name) !== def) await pool.query(`DROP INDEX "${name}"`);
  for (const [name, def] of target) if (now.get(name) !== def) await pool.query(def);
  await pool.query('ANALYZE invocations, outcomes');
}

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: URL_, max: 2 });
  try {
    const keys = await keysOf(pool);
    const count = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM invocations')).rows[0]!.n);
    console.log(`central ledger: ${count.toLocaleString('en')} invocations, source ${keys.source}, host ${keys.host}; load ${load()}`);
    if (values.indexes) return await indexUse(pool, keys);
    if (!values.migration) {
      const t = await timeAll(keys);
      printTable(
        ['page', 'p50 ms', 'p99 ms'],
        [...t].map(([label, s]) => [label, s.p50.toFixed(2), s.p99.toFixed(2)]),
      );
      return;
    }
    const a = await indexDefs(pool);
    await pool.query(readFileSync(values.migration, 'utf8').replaceAll('--> statement-breakpoint', ''));
    await pool.query('ANALYZE invocations, outcomes');
    const b = await indexDefs(pool);
    const changed = [...new Set([...a.keys(), ...b.keys()])].filter((n) => a.get(n) !== b.get(n));
    console.log(`A/B: ${changed.length} indexes differ: ${changed.join(', ')}`);
    const results: Record<'A' | 'B', Map<string, number[]>> = { A: new Map(), B: new Map() };
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [state, defs] of [
        ['A', a],
        ['B', b],
      ] as const) {
        await become(pool, defs);
        const t = await timeAll(keys);
        console.log(`  round ${round + 1} ${state} done; load ${load()}`);
        for (const [label, s] of t) results[state].set(label, [...(results[state].get(label) ?? []), s.p50]);
      }
    }
    await become(pool, a);
    const median = (xs: number[]) => stats(xs).p50;
    printTable(
      ['page', 'A p50 ms', 'B p50 ms', 'B / A'],
      [...results.A].map(([label, xs]) => {
        const ma = median(xs);
        const mb = median(results.B.get(label)!);
        return [label, ma.toFixed(2), mb.toFixed(2), (mb / ma).toFixed(2)];
      }),
    );
  } finally {
    await pool.end();
  }
}

await main();
