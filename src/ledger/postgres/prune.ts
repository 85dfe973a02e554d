import { LedgerError } from '../../domain/errors.js';
import { HOUR_MS } from '../health-rollup.js';
import { CHECKPOINT_SELECT, checkpointEntry, type RawRow } from '../integrity.js';
import {
  PRUNE_SQL,
  pruneBatchSize,
  removedRuns,
  runPruneBatches,
  startPruneReport,
  type PruneBatchResult,
  type PruneOptions,
  type PruneReport,
} from '../prune.js';
import { describePgError } from './errors.js';
import { numbered } from './placeholders.js';
import type { PostgresStore } from './store.js';
import { appendChainLink } from './write.js';

/**
 * Retention on PostgreSQL, with the semantics of ledger/prune.ts (SQLite): invocations started
 * before the cutoff are removed with their outcomes in batches, one short transaction each;
 * sessions under legal hold and invocations still running or with a pending background hook
 * are kept.
 *
 * Each writer has its own chain (ledger/postgres/write.ts), so the links a batch removes are
 * runs in several writers' chains. The batch's checkpoint records every run as
 * `[firstSeq, lastSeq, hashOfLastSeq, writerId]` (SQLite's three elements plus the writer) and
 * is itself a link appended to the pruning process's own writer chain; verify
 * (ledger/postgres/verify.ts) accepts a gap in a writer's chain, or a writer head that is no
 * longer there, exactly when an intact checkpoint accounts for it.
 */

/** Serializes prunes of one database (two at once would count and checkpoint the same rows). */
const PRUNE_LOCK = [0x686b6c67, 2] as const;

/** A removed run: first seq, last seq, hash of the last link, the writer whose chain it was in. */
export type WriterRun = [first: number, last: number, hash: string, writer: string];

const HELD = { name: 'hl_prune_held', text: numbered(PRUNE_SQL.held) };
const IN_PROGRESS = { name: 'hl_prune_in_progress', text: numbered(PRUNE_SQL.inProgress) };
const DRY_RUN = { name: 'hl_prune_dry_run', text: numbered(PRUNE_SQL.dryRun) };
// FOR UPDATE: a slow writer committing over a row that recovery marked interrupted waits for the
// batch and then finds the row gone, instead of adding outcomes to a row being deleted.
const SELECT_IDS = {
  name: 'hl_prune_ids',
  text: `${numbered(`SELECT i.id ${PRUNE_SQL.eligible}`)} ORDER BY i.id LIMIT $3 FOR UPDATE OF i`,
};
const LINKS = {
  name: 'hl_prune_links',
  // A link is in its record's writer's chain; a shipped record's link names it by its id at the source (docs/ship.md).
  text: `SELECT c.writer_id, c.seq, c.hash FROM invocations i
      JOIN chain c ON c.kind = 'invocation' AND c.ref_id = coalesce(i.source_ref, i.id) AND c.writer_id = i.writer_id
    WHERE i.id = ANY($1::bigint[])
    UNION ALL
    SELECT c.writer_id, c.seq, c.hash FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
      JOIN chain c ON c.kind = 'background' AND c.ref_id = coalesce(o.source_ref, o.id) AND c.writer_id = i.writer_id
    WHERE o.invocation_id = ANY($1::bigint[])
    ORDER BY 1, 2`,
};
const DELETE_LINKS = {
  name: 'hl_prune_delete_links',
  text: 'DELETE FROM chain WHERE (writer_id, seq) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))',
};
// Hook health rollups are kept per closed hour; the hours a batch touches are rebuilt when next read
// (as on SQLite: ledger/health-rollup.ts rollupInvalidator).
const TOUCHED_HOURS = `SELECT started_at / ${HOUR_MS} * ${HOUR_MS} FROM invocations WHERE id = ANY($1::bigint[])
  UNION SELECT started_at / ${HOUR_MS} * ${HOUR_MS} FROM outcomes WHERE invocation_id = ANY($1::bigint[]) AND started_at IS NOT NULL`;
const DROP_ROLLUPS = { name: 'hl_prune_drop_rollups', text: `DELETE FROM health_rollups WHERE hour IN (${TOUCHED_HOURS})` };
const DROP_ROLLUP_HOURS = { name: 'hl_prune_drop_rollup_hours', text: `DELETE FROM health_rollup_hours WHERE hour IN (${TOUCHED_HOURS})` };
const DELETE_OUTCOMES = { name: 'hl_prune_delete_outcomes', text: 'DELETE FROM outcomes WHERE invocation_id = ANY($1::bigint[])' };
const DELETE_INVOCATIONS = { name: 'hl_prune_delete_invocations', text: 'DELETE FROM invocations WHERE id = ANY($1::bigint[])' };
const INSERT_CHECKPOINT = {
  name: 'hl_prune_checkpoint',
  text: 'INSERT INTO prune_checkpoints (at, before, invocations, outcomes, removed_json) VALUES ($1, $2, $3, $4, $5) RETURNING id',
};
const SELECT_CHECKPOINT = { name: 'hl_select_checkpoint', text: numbered(CHECKPOINT_SELECT), rowMode: 'array' as const };

/** Removes old invocations in batches (see the file comment); the report has SQLite's shape. */
export async function prunePostgres(store: PostgresStore, options: PruneOptions): Promise<PruneReport> {
  const started = Date.now();
  const batchSize = pruneBatchSize(options, started);
  const pool = store.connection.pool;
  const location = store.connection.displayUrl;
  const before = options.before;

  const report = await guard(location, 'read what to prune', async () => {
    const held = (await pool.query<{ sessionId: string; invocations: number }>({ ...HELD, values: [before] })).rows;
    const inProgress = (await pool.query<unknown[]>({ ...IN_PROGRESS, values: [before], rowMode: 'array' })).rows[0]![0] as number;
    return startPruneReport(options, held, inProgress);
  });

  if (options.dryRun) {
    const [invocations, outcomes] = await guard(location, 'count what to prune', async () => {
      const row = (await pool.query<unknown[]>({ ...DRY_RUN, values: [before, 0], rowMode: 'array' })).rows[0]!;
      return [Number(row[0]), Number(row[1])];
    });
    report.invocations = invocations!;
    report.outcomes = outcomes!;
    report.durationMs = Date.now() - started;
    return report;
  }

  // The checkpoint links go into this process's chain: register it first.
  await guard(location, 'register this writer', () => store.lease.ensure());
  return runPruneBatches(report, options, started, location, describePgError, (afterId) => pruneBatch(store, before, afterId, batchSize));
}

/** One batch in one transaction; null when nothing is left to remove. Any failure rolls it back whole. */
async function pruneBatch(store: PostgresStore, before: number, afterId: number, limit: number): Promise<PruneBatchResult | null> {
  const client = await store.connection.pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...PRUNE_LOCK]);
    const ids = (await client.query<unknown[]>({ ...SELECT_IDS, values: [before, afterId, limit], rowMode: 'array' })).rows.map(
      (r) => r[0] as number,
    );
    if (ids.length === 0) {
      await client.query('COMMIT');
      return null;
    }
    const links = (await client.query<unknown[]>({ ...LINKS, values: [ids], rowMode: 'array' })).rows as [string, number, string][];
    const runs: WriterRun[] = [];
    for (const writer of new Set(links.map((l) => l[0]))) {
      const own = links.filter((l) => l[0] === writer).map(([, seq, hash]) => [seq, hash] as const);
      for (const run of removedRuns(own)) runs.push([...run, writer]);
    }
    await client.query({ ...DELETE_LINKS, values: [links.map((l) => l[0]), links.map((l) => l[1])] });
    await client.query({ ...DROP_ROLLUPS, values: [ids] });
    await client.query({ ...DROP_ROLLUP_HOURS, values: [ids] });
    const outcomes = (await client.query({ ...DELETE_OUTCOMES, values: [ids] })).rowCount ?? 0;
    const invocations = (await client.query({ ...DELETE_INVOCATIONS, values: [ids] })).rowCount ?? 0;
    const at = Date.now();
    const checkpointId = (
      await client.query<{ id: number }>({ ...INSERT_CHECKPOINT, values: [at, before, invocations, outcomes, JSON.stringify(runs)] })
    ).rows[0]!.id;
    const row = (await client.query<RawRow>({ ...SELECT_CHECKPOINT, values: [checkpointId] })).rows[0]!;
    await appendChainLink(client, store.lease, store.connection.displayUrl, 'checkpoint', checkpointId, [checkpointEntry(row)], at);
    await client.query('COMMIT');
    return { invocations, outcomes, links: links.length, checkpointId, lastId: ids[ids.length - 1]! };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A connection that cannot even roll back (server gone) is dropped, not reused.
    client.release(broken);
  }
}

async function guard<T>(location: string, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('ledger_write_failed', `cannot ${what} in ${location}: ${describePgError(error)}`, { cause: error });
  }
}
