import type pg from 'pg';
import type { ReplaySourceReader } from '../../ledger.js';
import { REPLAY_SOURCE_COLUMNS, type ReplayOutcomeRow, type ReplaySelection, type ReplaySourceRow } from '../../queries/replay-source.js';
import { pgFilterSql } from './filters.js';
import { numbered } from '../placeholders.js';
import { pgRead } from './read.js';

/** The outcome columns the diff compares; `decisive` as the 0/1 SQLite stores (PostgreSQL: boolean). */
const OUTCOME_COLUMNS = 'invocation_id, hook_id, mode, status, decision, decisive::int AS decisive, reason_code, failure_reason';
const OUTCOMES_IN = {
  name: 'hl_replay_outcomes_in',
  text: `SELECT ${OUTCOME_COLUMNS} FROM outcomes WHERE invocation_id = ANY($1::bigint[]) ORDER BY invocation_id, id`,
};
const OUTCOMES_BETWEEN = {
  name: 'hl_replay_outcomes_between',
  text: `SELECT ${OUTCOME_COLUMNS} FROM outcomes WHERE invocation_id >= $1 AND invocation_id <= $2 ORDER BY invocation_id, id`,
};

/**
 * A replay selection on PostgreSQL, read as on SQLite (ledger/queries/replay-source.ts): keyset
 * batches in id order (`id > last ORDER BY id LIMIT n`), each one short query, so no
 * transaction or cursor stays open while the replay runs hooks, and memory stays flat. The id
 * range is fixed when the selection is opened (invocations recorded during the replay are not
 * chased); with `limit`, it starts just below the limit-th newest match.
 */
export async function openReplaySourcePostgres(
  pool: pg.Pool,
  location: string,
  selection: ReplaySelection,
  batchSize = 500,
): Promise<ReplaySourceReader> {
  return pgRead(location, 'read the replay selection', async () => {
    // Only completed invocations have a recorded decision to compare against.
    const { where, params } = await pgFilterSql(pool, selection.filter, [`i.status = 'completed'`]);
    const maxId = (await pool.query<{ max: number }>('SELECT coalesce(max(id), 0) AS max FROM invocations')).rows[0]!.max;
    let lastId = 0;
    if (selection.limit !== undefined) {
      const floor = await pool.query<{ id: number }>(
        numbered(`SELECT i.id FROM invocations i ${where} ORDER BY i.id DESC LIMIT 1 OFFSET ?`),
        [...params, Math.max(0, selection.limit - 1)],
      );
      lastId = floor.rows[0] === undefined ? 0 : floor.rows[0].id - 1;
    }
    const bounded = `${where} AND i.id > ? AND i.id <= ?`;
    const total = (
      await pool.query<{ n: number }>(numbered(`SELECT count(*) AS n FROM invocations i ${bounded}`), [...params, lastId, maxId])
    ).rows[0]!.n;
    const batch = numbered(`SELECT ${REPLAY_SOURCE_COLUMNS} FROM invocations i ${bounded} ORDER BY i.id LIMIT ?`);
    return {
      total,
      next: () =>
        pgRead(location, 'read the replay selection', async () => {
          const rows = (await pool.query<ReplaySourceRow>(batch, [...params, lastId, maxId, batchSize])).rows;
          if (rows.length > 0) lastId = rows[rows.length - 1]!.id;
          return rows;
        }),
      recordedOutcomes: (ids) => pgRead(location, 'read the recorded outcomes', () => recordedOutcomes(pool, ids)),
    };
  });
}

/** The recorded outcomes of these invocations (ascending ids), grouped by invocation id, in storage order. */
async function recordedOutcomes(pool: pg.Pool, ids: number[]): Promise<Map<number, ReplayOutcomeRow[]>> {
  const grouped = new Map<number, ReplayOutcomeRow[]>();
  if (ids.length === 0) return grouped;
  for (const id of ids) grouped.set(id, []);
  const first = ids[0]!;
  const last = ids[ids.length - 1]!;
  // As on SQLite: a dense batch is one index range, a sparse one names its ids.
  const rows =
    last - first < ids.length * 4
      ? await pool.query<ReplayOutcomeRow>({ ...OUTCOMES_BETWEEN, values: [first, last] })
      : await pool.query<ReplayOutcomeRow>({ ...OUTCOMES_IN, values: [ids] });
  for (const row of rows.rows) grouped.get(row.invocation_id)?.push(row);
  return grouped;
}
