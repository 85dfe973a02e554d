/**
 * Writes the synthetic history of scripts/generate-ledger.ts into a PostgreSQL ledger, fast:
 *
 *   npm run generate:ledger -- --db postgres://user@host:5432/dbname [--invocations 1000000] [--sessions 5000] [--days 90] [--seed 1]
 *
 * The database must hold no invocations yet (the schema is migrated on open, as by any command).
 * Rows are bulk-loaded with `COPY … FROM STDIN` over plain node-postgres, in batches, with ids
 * assigned here; secondary indexes and foreign keys are dropped for the load and rebuilt after it
 * (one sort each instead of millions of b-tree inserts), then `ANALYZE` gives the planner the
 * statistics of a million rows instead of an empty table's. The load is one transaction: a
 * failure leaves the database as it was.
 *
 * Every record is stored and chained exactly as the live write path does it: the stored rows come
 * from `storedPostgresBegin`/`storedPostgresFinal` (ledger/postgres/write.ts) and the links from
 * `invocationLinkEntries` + `linkHash`, on one writer's chain (`--writer`, default `generator`),
 * so `hookledger verify --db postgres://…` passes on the result.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { GENESIS_HASH, linkHash, rowsText, CHAIN_ENCODING_V1 } from '../src/ledger/integrity.js';
import { Redactor } from '../src/ledger/redact.js';
import { invocationRow } from '../src/ledger/write.js';
import { catchUpRollupPostgres } from '../src/ledger/postgres/health-rollup.js';
import { copyIn, copyLine } from '../src/ledger/postgres/copy.js';
import { PostgresStore } from '../src/ledger/postgres/store.js';
import { invocationLinkEntries, storedPostgresBegin, storedPostgresFinal } from '../src/ledger/postgres/write.js';
import { historyHookSets, syntheticHistory, type HistoryOptions } from './generate-ledger.js';

export interface GeneratePostgresOptions extends HistoryOptions {
  /** `postgres://` URL of the ledger (an empty database, or one migrated but without invocations). */
  url: string;
  /** The writer id whose chain covers the generated records. Default `generator`. */
  writer?: string;
  /** Invocations per COPY batch. Default 5000. */
  batch?: number;
  log?: (line: string) => void;
}

/** Tables the load fills; their secondary indexes and foreign keys are rebuilt after it. */
const LOADED_TABLES = ['invocations', 'outcomes', 'chain'];
const INVOCATION_COLUMNS = [...CHAIN_ENCODING_V1.invocation, 'writer_id'];
const OUTCOME_COLUMNS = CHAIN_ENCODING_V1.outcome;
const CHAIN_COLUMNS = ['writer_id', 'seq', 'kind', 'ref_id', 'prev_hash', 'hash', 'at', 'rows'];

/** Secondary indexes and foreign keys of the loaded tables, as the DDL that recreates them. */
async function droppable(
  client: pg.PoolClient,
): Promise<{ indexes: { name: string; sql: string }[]; keys: { table: string; name: string; sql: string }[] }> {
  const indexes = (
    await client.query<{ name: string; sql: string }>(
      `SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
       WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()))`,
      [LOADED_TABLES],
    )
  ).rows;
  const keys = (
    await client.query<{ table: string; name: string; sql: string }>(
      `SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS sql FROM pg_constraint c
       WHERE c.contype = 'f' AND (c.conrelid::regclass::text = ANY($1) OR c.confrelid::regclass::text = ANY($1))`,
      [LOADED_TABLES],
    )
  ).rows;
  return { indexes, keys };
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Writes the synthetic history into the PostgreSQL ledger at `options.url`. */
export async function generatePostgresLedger(
  options: GeneratePostgresOptions,
): Promise<{ invocations: number; outcomes: number; seconds: number; bytes: number }> {
  const log = options.log ?? (() => {});
  const writerId = options.writer ?? 'generator';
  const batchSize = options.batch ?? 5000;
  const host = hostname();
  const t0 = process.hrtime.bigint();
  const elapsed = () => (Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1);
  const store = await PostgresStore.open({ url: options.url, statementTimeoutMs: 0 });
  const pool = store.connection.pool;
  const client = await pool.connect();
  try {
    const existing = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM invocations')).rows[0]!.n);
    if (existing > 0)
      throw new Error(`${store.connection.displayUrl} already holds ${existing} invocations: generate into an empty database`);
    const sets = historyHookSets();
    const recorder = store.writer();
    const setIds: number[] = [];
    for (const set of sets) setIds.push(await recorder.hookSetId(set));
    const redactors = sets.map((set) => (set.redact ? new Redactor(set.redact) : new Redactor()));

    // One transaction for the whole load: a failure leaves the database as it was (DDL included).
    await client.query('BEGIN');
    const { indexes, keys } = await droppable(client);
    for (const k of keys) await client.query(`ALTER TABLE ${k.table} DROP CONSTRAINT ${quote(k.name)}`);
    for (const ix of indexes) await client.query(`DROP INDEX ${quote(ix.name)}`);

    let invocationId = 0;
    let outcomeId = 0;
    let head = { seq: 0, hash: GENESIS_HASH };
    let outcomeCount = 0;
    const history = syntheticHistory(options, sets);
    for (let done = false; !done;) {
      let invocations = '';
      let outcomes = '';
      let links = '';
      for (let n = 0; n < batchSize; n++) {
        const next = history.next();
        if (next.done) {
          done = true;
          break;
        }
        const g = next.value;
        const id = ++invocationId;
        const redactor = redactors[g.setIndex]!;
        const begin = storedPostgresBegin(redactor, setIds[g.setIndex]!, g.invocation, g.startedAt, host);
        const { final, outcomeRows } = storedPostgresFinal(
          id,
          { point: g.invocation.point, paths: begin.paths },
          redactor,
          g.result,
          g.outcomes,
          g.finishedAt,
        );
        const row = invocationRow(begin.row, final, sets[g.setIndex]!.fingerprint);
        const ids = outcomeRows.map(() => ++outcomeId);
        const entries = invocationLinkEntries(row, outcomeRows, ids);
        const seq = head.seq + 1;
        const hash = linkHash(head.hash, seq, 'invocation', id, g.finishedAt, entries);
        invocations += copyLine([...row.slice(0, -1), writerId]);
        outcomeRows.forEach((values, i) => (outcomes += copyLine([ids[i], ...values])));
        links += copyLine([writerId, seq, 'invocation', id, head.hash, hash, g.finishedAt, rowsText(entries)]);
        head = { seq, hash };
        outcomeCount += outcomeRows.length;
      }
      await copyIn(client, 'invocations', INVOCATION_COLUMNS, invocations);
      await copyIn(client, 'outcomes', OUTCOME_COLUMNS, outcomes);
      await copyIn(client, 'chain', CHAIN_COLUMNS, links);
      if (invocationId % 100_000 === 0 || done)
        log(`  ${invocationId.toLocaleString('en')} invocations, ${outcomeCount.toLocaleString('en')} outcomes, ${elapsed()}s`);
    }

    // The writer's head, as the write path leaves it (its lease long over: no row of it is running).
    await client.query(
      `INSERT INTO writers (id, host, head_seq, head_hash, created_at, lease_until) VALUES ($1, $2, $3, $4, $5, 0)
       ON CONFLICT (id) DO UPDATE SET head_seq = EXCLUDED.head_seq, head_hash = EXCLUDED.head_hash`,
      [writerId, host, head.seq, head.hash, Date.now()],
    );
    // Ids were assigned here: the identity columns continue after them.
    for (const table of ['invocations', 'outcomes'])
      await client.query(`SELECT setval(pg_get_serial_sequence($1, 'id'), greatest((SELECT max(id) FROM ${table}), 1))`, [table]);
    for (const ix of indexes) await client.query(ix.sql);
    log(`  ${indexes.length} indexes rebuilt, ${elapsed()}s`);
    for (const k of keys) await client.query(`ALTER TABLE ${k.table} ADD CONSTRAINT ${quote(k.name)} ${k.sql}`);
    log(`  foreign keys checked, ${elapsed()}s`);
    await client.query('COMMIT');
    // Statistics of the loaded rows, not of empty tables: the planner picks its indexes from them.
    await client.query('ANALYZE');
    log(`  committed and analyzed, ${elapsed()}s`);
    // The hook-health rollup for the whole history, as generate-ledger does on SQLite: the first report reads built hours.
    await catchUpRollupPostgres(store.connection.pool);
    log(`  hook-health rollup built, ${elapsed()}s`);
    const bytes = Number((await client.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]!.n);
    return { invocations: invocationId, outcomes: outcomeCount, seconds: Number(elapsed()), bytes };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
    await store.close();
  }
}
