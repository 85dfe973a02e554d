/**
 * What each index of a central table costs per inserted row (docs/postgres.md "Indexes"): copies
 * `--rows` rows of the table (`--where`, default the first 100,000 by id) into an empty table of the
 * same columns, once with no index, once with each index alone and once with all of them, and prints
 * the backend's CPU per row (user + sys of the server process serving this connection, read from
 * /proc: run it on the same machine as the server). CPU, not wall time, so that a shared machine's
 * load matters less; take the minimum of `--rounds`.
 *
 *   npx tsx scripts/bench-pg-index-cost.ts --url postgres://…/central --table outcomes --where 'invocation_id <= 100000'
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { printTable } from './bench-support.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    table: { type: 'string', default: 'invocations' },
    where: { type: 'string', default: 'id <= 100000' },
    rounds: { type: 'string', default: '2' },
  },
});
if (!values.url) {
  console.error('bench-pg-index-cost: --url postgres://… (a central ledger, on this machine) is required');
  process.exit(2);
}
const table = values.table!;
const copy = `index_cost_${table}`;
const client = new pg.Client({ connectionString: values.url });
await client.connect();
try {
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  /** The backend's CPU so far, ms (USER_HZ 100). */
  const cpu = () => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  const defs = (
    await client.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY 1`,
      [table],
    )
  ).rows;
  const rows = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${values.where}`)).rows[0]!.n);
  const run = async (names: string[]) => {
    await client.query(`DROP TABLE IF EXISTS ${copy}; CREATE TABLE ${copy} (LIKE ${table} INCLUDING DEFAULTS)`);
    for (const d of defs.filter((d) => names.includes(d.name)))
      await client.query(d.def.replace(`ON public.${table} `, `ON ${copy} `).replace(`INDEX ${d.name} `, `INDEX ${copy}_${d.name} `));
    const before = cpu();
    await client.query(`INSERT INTO ${copy} SELECT * FROM ${table} WHERE ${values.where}`);
    return cpu() - before;
  };
  const cases: [string, string[]][] = [
    ['(no index)', []],
    ...defs.map((d): [string, string[]] => [d.name, [d.name]]),
    ['(all)', defs.map((d) => d.name)],
  ];
  const ms = new Map<string, number>();
  for (let round = 0; round < Number(values.rounds); round++)
    for (const [label, names] of cases) ms.set(label, Math.min(ms.get(label) ?? Infinity, await run(names)));
  const base = ms.get('(no index)')!;
  console.log(`${table}: ${rows.toLocaleString('en')} rows per insert; backend CPU, minimum of ${values.rounds} rounds`);
  printTable(
    ['index', 'CPU ms', 'µs per row over no index'],
    cases.map(([label]) => [label, ms.get(label)!, label === '(no index)' ? '-' : (((ms.get(label)! - base) * 1000) / rows).toFixed(2)]),
  );
} finally {
  await client.query(`DROP TABLE IF EXISTS ${copy}`);
  await client.end();
}
