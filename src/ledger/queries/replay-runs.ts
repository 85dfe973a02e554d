import { NotFoundError } from '../../domain/errors.js';
import { emptyTotals, type ReplayResult, type ReplayResultDetail, type ReplayRunStatus, type ReplayTotals } from '../../domain/replay.js';
import type { Ledger } from '../open.js';
import type { ReplayResultRow, ReplayRunRow } from '../rows.js';
import type { ReplayRunOptions } from '../replay-store.js';
import { prepared } from '../statements.js';
import type { ReplaySelection } from './replay-source.js';

/** A replay run as listed and shown: which hook set, which selection, when, and its counts. */
export interface ReplayRunSummary {
  id: number;
  status: ReplayRunStatus;
  hookSet: HookSetRef;
  /** The baseline hook set, when the run had one. */
  baseline: HookSetRef | null;
  selection: ReplaySelection;
  options: Partial<ReplayRunOptions>;
  startedAt: number;
  finishedAt: number | null;
  totals: ReplayTotals;
}

export interface HookSetRef {
  id: number;
  name: string;
  version: string;
  fingerprint: string;
}

/** A run with its results worth showing. */
export interface ReplayRunDetail {
  run: ReplayRunSummary;
  /** Changed invocations in invocation order (at most `limit` of them; `changedTotal` counts all). */
  changes: ReplayResult[];
  changedTotal: number;
  /** With a baseline: invocations whose recording the baseline did not reproduce. */
  baselineMismatches: ReplayResult[];
  baselineMismatchTotal: number;
  /** Unchanged results that carry a warning (redacted input), counted only. */
  warningsOnUnchanged: number;
}

/** A run with its hook set and baseline (columns typed by the schema). */
export type RunRow = Pick<ReplayRunRow, 'id' | 'status' | 'filter_json' | 'options_json' | 'started_at' | 'finished_at' | 'totals_json'> & {
  hs_id: number;
  hs_name: string;
  hs_version: string;
  hs_fingerprint: string;
  b_id: number | null;
  b_name: string | null;
  b_version: string | null;
  b_fingerprint: string | null;
};

/** The result columns a run's detail shows. */
export type ResultRow = Pick<
  ReplayResultRow,
  | 'invocation_id'
  | 'change'
  | 'old_decision'
  | 'new_decision'
  | 'old_decisive_hook_id'
  | 'new_decisive_hook_id'
  | 'detail_json'
  | 'baseline_mismatch'
>;

/** The run columns and joins both engines read runs with (`SELECT ${RUN_COLUMNS} WHERE …`). */
export const RUN_COLUMNS = `r.id, r.status, r.filter_json, r.options_json, r.started_at, r.finished_at, r.totals_json,
  h.id AS hs_id, h.name AS hs_name, h.version AS hs_version, h.fingerprint AS hs_fingerprint,
  b.id AS b_id, b.name AS b_name, b.version AS b_version, b.fingerprint AS b_fingerprint
  FROM replay_runs r JOIN hook_sets h ON h.id = r.hook_set_id LEFT JOIN hook_sets b ON b.id = r.baseline_hook_set_id`;

/** Past replay runs, most recent first. */
export function listReplayRuns(ledger: Ledger, options: { limit?: number } = {}): ReplayRunSummary[] {
  return prepared<[number], RunRow>(ledger, `SELECT ${RUN_COLUMNS} ORDER BY r.id DESC LIMIT ?`)
    .all(options.limit ?? 20)
    .map(runFromRow);
}

/** One run's summary; NotFoundError when there is no such run. */
export function getReplayRun(ledger: Ledger, runId: number): ReplayRunSummary {
  const row = prepared<[number], RunRow>(ledger, `SELECT ${RUN_COLUMNS} WHERE r.id = ?`).get(runId);
  if (!row) throw new NotFoundError(`no replay run ${runId} in ${ledger.path} (hookledger replay list shows the runs)`);
  return runFromRow(row);
}

/**
 * A run with its changes and baseline mismatches, in invocation order. `limit` caps each list
 * (the totals still count everything); omit it for all of them.
 */
export function showReplayRun(ledger: Ledger, runId: number, options: { limit?: number } = {}): ReplayRunDetail {
  const run = getReplayRun(ledger, runId);
  const limit = options.limit ?? -1;
  const changes = prepared<[number, number], ResultRow>(
    ledger,
    `SELECT * FROM replay_results WHERE run_id = ? AND change != 'unchanged' ORDER BY invocation_id LIMIT ?`,
  )
    .all(runId, limit)
    .map(resultFromRow);
  const mismatches = prepared<[number, number], ResultRow>(
    ledger,
    `SELECT * FROM replay_results WHERE run_id = ? AND baseline_mismatch = 1 ORDER BY invocation_id LIMIT ?`,
  )
    .all(runId, limit)
    .map(resultFromRow);
  const counts = prepared<[number], { changed: number; mismatches: number; warned: number }>(
    ledger,
    `SELECT coalesce(sum(change != 'unchanged'), 0) AS changed, coalesce(sum(baseline_mismatch), 0) AS mismatches,
       coalesce(sum(change = 'unchanged' AND detail_json != '{}' AND baseline_mismatch = 0), 0) AS warned
     FROM replay_results WHERE run_id = ?`,
  ).get(runId)!;
  return {
    run,
    changes,
    changedTotal: counts.changed,
    baselineMismatches: mismatches,
    baselineMismatchTotal: counts.mismatches,
    warningsOnUnchanged: counts.warned,
  };
}

/** A run summary from its row (both engines). */
export function runFromRow(row: RunRow): ReplayRunSummary {
  return {
    id: row.id,
    status: row.status,
    hookSet: { id: row.hs_id, name: row.hs_name, version: row.hs_version, fingerprint: row.hs_fingerprint },
    baseline: row.b_id === null ? null : { id: row.b_id, name: row.b_name!, version: row.b_version!, fingerprint: row.b_fingerprint! },
    selection: JSON.parse(row.filter_json) as ReplaySelection,
    options: JSON.parse(row.options_json) as Partial<ReplayRunOptions>,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    totals: { ...emptyTotals(), ...(JSON.parse(row.totals_json) as Partial<ReplayTotals>) },
  };
}

/** A result from its row (both engines; `baseline_mismatch` as 0/1). */
export function resultFromRow(row: ResultRow): ReplayResult {
  return {
    invocationId: row.invocation_id,
    change: row.change,
    oldDecision: row.old_decision,
    newDecision: row.new_decision,
    oldDecisiveHookId: row.old_decisive_hook_id,
    newDecisiveHookId: row.new_decisive_hook_id,
    baselineMismatch: row.baseline_mismatch === 1,
    ...(JSON.parse(row.detail_json) as ReplayResultDetail),
  };
}
