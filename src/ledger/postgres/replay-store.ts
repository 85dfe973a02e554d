import { hostname } from 'node:os';
import type pg from 'pg';
import type { HookSet } from '../../domain/hooks.js';
import type { ReplayRunStatus, ReplayTotals } from '../../domain/replay.js';
import type { ReplayRunWriter } from '../ledger.js';
import { REPLAY_STORE_SQL, type ReplayResultRecord, type ReplayRunStart } from '../replay-store.js';
import { isProcessAlive } from '../sqlite-errors.js';
import { numbered } from './placeholders.js';
import { guardWrite, inTransaction } from './transaction.js';

/** Where the store gets a hook set's ledger id (the engine's recorder, which stores it on first use). */
export interface HookSetIds {
  hookSetId(hookSet: HookSet): Promise<number>;
}

const INSERT_RUN = {
  name: 'hl_replay_insert_run',
  text: `INSERT INTO replay_runs (hook_set_id, baseline_hook_set_id, filter_json, status, started_at, totals_json, options_json, pid, host)
     VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8) RETURNING id`,
};
/**
 * A batch of results in one statement: one array per column, unnested into rows (SQLite inserts
 * row by row inside its transaction; over a network one round trip per result would dominate).
 */
const INSERT_RESULTS = {
  name: 'hl_replay_insert_results',
  text: `INSERT INTO replay_results (run_id, invocation_id, change, old_decision, new_decision, old_decisive_hook_id,
       new_decisive_hook_id, detail_json, baseline_mismatch)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[])`,
};
const UPDATE_TOTALS = { name: 'hl_replay_update_totals', text: numbered(REPLAY_STORE_SQL.updateTotals) };
const FINISH_RUN = { name: 'hl_replay_finish_run', text: numbered(REPLAY_STORE_SQL.finishRun) };
const RUNNING_ON_HOST = { name: 'hl_replay_running_on_host', text: numbered(REPLAY_STORE_SQL.runningOnHost) };
const MARK_INCOMPLETE = { name: 'hl_replay_mark_incomplete', text: numbered(REPLAY_STORE_SQL.markIncomplete) };

/**
 * The replay run store on PostgreSQL (ledger/replay-store.ts on SQLite): runs and their results
 * only, never the live invocations and outcomes. A batch of results and the run's totals so
 * far commit in one transaction, so a run stopped at any point keeps results and totals that agree.
 * Runs left `running` by a dead process are found as on SQLite: by pid, on this host only (a
 * replay is a one-off command, not a writer with a lease).
 */
export class PostgresReplayStore implements ReplayRunWriter {
  private readonly host = hostname();

  constructor(
    private readonly pool: pg.Pool,
    private readonly location: string,
    private readonly hookSets: HookSetIds,
  ) {}

  async startRun(run: ReplayRunStart): Promise<number> {
    const hookSetId = await this.hookSets.hookSetId(run.hookSet);
    const baselineHookSetId = run.baseline ? await this.hookSets.hookSetId(run.baseline) : null;
    return this.guard('record the replay run', async () => {
      await this.recoverDeadRuns();
      const inserted = await this.pool.query<{ id: number }>({
        ...INSERT_RUN,
        values: [
          hookSetId,
          baselineHookSetId,
          JSON.stringify(run.selection),
          run.startedAt,
          JSON.stringify(run.totals),
          JSON.stringify(run.options),
          process.pid,
          this.host,
        ],
      });
      return inserted.rows[0]!.id;
    });
  }

  async append(runId: number, records: ReplayResultRecord[], totals: ReplayTotals): Promise<void> {
    await this.guard('record replay results', () =>
      this.transaction(async (client) => {
        if (records.length > 0) {
          await client.query({
            ...INSERT_RESULTS,
            values: [
              runId,
              records.map((r) => r.invocationId),
              records.map((r) => r.change),
              records.map((r) => r.oldDecision),
              records.map((r) => r.newDecision),
              records.map((r) => r.oldDecisiveHookId),
              records.map((r) => r.newDecisiveHookId),
              records.map((r) => r.detailJson),
              records.map((r) => r.baselineMismatch),
            ],
          });
        }
        await client.query({ ...UPDATE_TOTALS, values: [JSON.stringify(totals), runId] });
      }),
    );
  }

  async finish(runId: number, status: Exclude<ReplayRunStatus, 'running'>, totals: ReplayTotals, finishedAt = Date.now()): Promise<void> {
    await this.guard('finish the replay run', () =>
      this.pool.query({ ...FINISH_RUN, values: [status, JSON.stringify(totals), finishedAt, runId] }),
    );
  }

  private async recoverDeadRuns(): Promise<void> {
    const running = await this.pool.query<{ id: number; pid: number }>({ ...RUNNING_ON_HOST, values: [this.host] });
    for (const run of running.rows) if (!isProcessAlive(run.pid)) await this.pool.query({ ...MARK_INCOMPLETE, values: [run.id] });
  }

  private transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    return inTransaction(this.pool, work);
  }

  private guard<T>(what: string, write: () => Promise<T>): Promise<T> {
    return guardWrite(this.location, what, write);
  }
}
