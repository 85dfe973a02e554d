/**
 * Reports on a central ledger selected by source (`--source`, issue 13): each report's first page
 * with and without `{ source }`, through the Ledger interface of the built package, p50/p99 over
 * `--runs`. The ledger must hold several writers (e.g. a generated ledger whose invocations were
 * spread over 50 writer ids: `UPDATE invocations SET writer_id = 'src-' || (id % 50)`).
 *
 *   npx tsx scripts/bench-source-filter.ts --db postgres://…/db --source src-7 [--runs 50]
 */
import { parseArgs } from 'node:util';
import { openLedger } from '../dist/index.js';

const { values } = parseArgs({ options: { db: { type: 'string' }, source: { type: 'string' }, runs: { type: 'string' } } });
if (!values.db || !values.source) throw new Error('--db postgres://… and --source ID are required');
const runs = Number(values.runs ?? 50);
const ledger = await openLedger({ url: values.db });
const source = values.source;
const cases: [string, () => Promise<unknown>][] = [
  ['denials, first page', () => ledger.listDenials({}, { limit: 50 })],
  ['denials, first page, --source', () => ledger.listDenials({ source }, { limit: 50 })],
  ['denials --group-by hook', () => ledger.groupDenials({}, 'hook')],
  ['denials --group-by hook --source', () => ledger.groupDenials({ source }, 'hook')],
  ['sessions, first page', () => ledger.listSessions({}, { limit: 50 })],
  ['sessions, first page, --source', () => ledger.listSessions({ source }, { limit: 50 })],
  ['hooks, 30 days', () => ledger.hookHealth({})],
  ['hooks, 30 days, --source', () => ledger.hookHealth({ source })],
];
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
process.stdout.write(`| query | p50 ms | p99 ms |\n|---|---:|---:|\n`);
for (const [name, run] of cases) {
  await run(); // warm
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  process.stdout.write(`| ${name} | ${quantile(times, 0.5).toFixed(2)} | ${quantile(times, 0.99).toFixed(2)} |\n`);
}
await ledger.close();
