import type pg from 'pg';
import { NotFoundError } from '../../../domain/errors.js';
import {
  resultFromRow,
  RUN_COLUMNS,
  runFromRow,
  type ReplayRunDetail,
  type ReplayRunSummary,
  type ResultRow,
  type RunRow,
} from '../../queries/replay-runs.js';
import { numbered } from '../placeholders.js';
import { pgRead } from './read.js';

/**
 * Replay runs on PostgreSQL: the same reads as ledger/queries/replay-runs.ts (its column list
 * and row mappings), in PostgreSQL's dialect where it differs: `baseline_mismatch` is a boolean
 * (read as the 0/1 the mapping expects), and "no limit" is `LIMIT NULL` rather than SQLite's -1.
 */

const LIST = { name: 'hl_replay_runs_list', text: numbered(`SELECT ${RUN_COLUMNS} ORDER BY r.id DESC LIMIT ?`) };
const ONE = { name: 'hl_replay_runs_one', text: numbered(`SELECT ${RUN_COLUMNS} WHERE r.id = ?`) };
const RESULT_COLUMNS = `invocation_id, change, old_decision, new_decision, old_decisive_hook_id, new_decisive_hook_id, detail_json,
  baseline_mismatch::int AS baseline_mismatch`;
const CHANGES = {
  name: 'hl_replay_runs_changes',
  text: `SELECT ${RESULT_COLUMNS} FROM replay_results WHERE run_id = $1 AND change <> 'unchanged' ORDER BY invocation_id LIMIT $2`,
};
const MISMATCHES = {
  name: 'hl_replay_runs_mismatches',
  text: `SELECT ${RESULT_COLUMNS} FROM replay_results WHERE run_id = $1 AND baseline_mismatch ORDER BY invocation_id LIMIT $2`,
};
// SQLite sums its 0/1 comparisons; PostgreSQL counts with FILTER.
const COUNTS = {
  name: 'hl_replay_runs_counts',
  text: `SELECT count(*) FILTER (WHERE change <> 'unchanged') AS changed, count(*) FILTER (WHERE baseline_mismatch) AS mismatches,
       count(*) FILTER (WHERE change = 'unchanged' AND detail_json <> '{}' AND NOT baseline_mismatch) AS warned
     FROM replay_results WHERE run_id = $1`,
};

/** Past replay runs, most recent first (default 20). */
export async function listReplayRunsPostgres(
  pool: pg.Pool,
  location: string,
  options: { limit?: number } = {},
): Promise<ReplayRunSummary[]> {
  return pgRead(location, 'list replay runs', async () =>
    (await pool.query<RunRow>({ ...LIST, values: [options.limit ?? 20] })).rows.map(runFromRow),
  );
}

/** One run's summary; NotFoundError when there is no such run. */
export async function getReplayRunPostgres(pool: pg.Pool, location: string, runId: number): Promise<ReplayRunSummary> {
  const row = await pgRead(location, 'read the replay run', async () => (await pool.query<RunRow>({ ...ONE, values: [runId] })).rows[0]);
  if (!row) throw new NotFoundError(`no replay run ${runId} in ${location} (hookledger replay list shows the runs)`);
  return runFromRow(row);
}

/** A run with its changes and baseline mismatches in invocation order; `limit` caps each list. */
export async function showReplayRunPostgres(
  pool: pg.Pool,
  location: string,
  runId: number,
  options: { limit?: number } = {},
): Promise<ReplayRunDetail> {
  const run = await getReplayRunPostgres(pool, location, runId);
  const limit = options.limit ?? null;
  return pgRead(location, 'read the replay run', async () => {
    const [changes, mismatches, counts] = await Promise.all([
      pool.query<ResultRow>({ ...CHANGES, values: [runId, limit] }),
      pool.query<ResultRow>({ ...MISMATCHES, values: [runId, limit] }),
      pool.query<{ changed: number; mismatches: number; warned: number }>({ ...COUNTS, values: [runId] }),
    ]);
    const c = counts.rows[0]!;
    return {
      run,
      changes: changes.rows.map(resultFromRow),
      changedTotal: c.changed,
      baselineMismatches: mismatches.rows.map(resultFromRow),
      baselineMismatchTotal: c.mismatches,
      warningsOnUnchanged: c.warned,
    };
  });
}
