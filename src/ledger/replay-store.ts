import type Database from 'better-sqlite3';
import { hostname } from 'node:os';
import type { HookSet } from '../domain/hooks.js';
import type { ReplayRunStatus, ReplayTotals } from '../domain/replay.js';
import type { Ledger } from './open.js';
import type { ReplaySelection } from './queries/replay-source.js';
import { guardWrite, isProcessAlive } from './sqlite-errors.js';
import { LedgerWriter } from './write.js';

/** One result row ready to insert: the columns plus the detail already serialised. */
export interface ReplayResultRecord {
  invocationId: number;
  change: string;
  oldDecision: string | null;
  newDecision: string | null;
  oldDecisiveHookId: string | null;
  newDecisiveHookId: string | null;
  baselineMismatch: boolean;
  /** JSON text of a ReplayResultDetail (`{}` for an unchanged result with nothing to say). */
  detailJson: string;
}

/** How a run was made, stored with it. */
export interface ReplayRunOptions {
  concurrency: number;
  withBackground: boolean;
}

/** A replay run as it starts: what is replayed, against what, how. */
export interface ReplayRunStart {
  hookSet: HookSet;
  baseline: HookSet | null;
  selection: ReplaySelection;
  options: ReplayRunOptions;
  startedAt: number;
  totals: ReplayTotals;
}

/** Statements both engines' run stores use as they are (PostgreSQL numbers the placeholders). */
export const REPLAY_STORE_SQL = {
  updateTotals: 'UPDATE replay_runs SET totals_json = ? WHERE id = ?',
  finishRun: 'UPDATE replay_runs SET status = ?, totals_json = ?, finished_at = ? WHERE id = ?',
  runningOnHost: `SELECT id, pid FROM replay_runs WHERE status = 'running' AND host = ? AND pid IS NOT NULL`,
  markIncomplete: `UPDATE replay_runs SET status = 'incomplete' WHERE id = ? AND status = 'running'`,
} as const;

/**
 * Writes replay runs and their results, and nothing else: replay never touches the live
 * `invocations` and `outcomes` tables. Results are inserted a batch per transaction, together
 * with the run's running totals, so a run stopped at any point (Ctrl-C, a crash) keeps
 * results and totals that agree.
 */
export class ReplayStore {
  private readonly host = hostname();
  private readonly insertRun: Database.Statement;
  private readonly insertResult: Database.Statement;
  private readonly updateTotals: Database.Statement;
  private readonly finishRunStatement: Database.Statement;
  private readonly appendBatch: (runId: number, records: ReplayResultRecord[], totals: ReplayTotals) => void;
  private readonly writer: LedgerWriter;

  constructor(private readonly ledger: Ledger) {
    const s = ledger.sqlite;
    this.writer = new LedgerWriter(ledger);
    this.insertRun = s.prepare(
      `INSERT INTO replay_runs (hook_set_id, baseline_hook_set_id, filter_json, status, started_at, totals_json, options_json, pid, host)
       VALUES (@hookSetId, @baselineHookSetId, @filterJson, 'running', @startedAt, @totalsJson, @optionsJson, @pid, @host)`,
    );
    this.insertResult = s.prepare(
      `INSERT INTO replay_results (run_id, invocation_id, change, old_decision, new_decision, old_decisive_hook_id,
         new_decisive_hook_id, detail_json, baseline_mismatch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.updateTotals = s.prepare(REPLAY_STORE_SQL.updateTotals);
    this.finishRunStatement = s.prepare(REPLAY_STORE_SQL.finishRun);
    const append = s.transaction((runId: number, records: ReplayResultRecord[], totals: ReplayTotals) => {
      for (const r of records) {
        this.insertResult.run(
          runId,
          r.invocationId,
          r.change,
          r.oldDecision,
          r.newDecision,
          r.oldDecisiveHookId,
          r.newDecisiveHookId,
          r.detailJson,
          r.baselineMismatch ? 1 : 0,
        );
      }
      this.updateTotals.run(JSON.stringify(totals), runId);
    });
    // IMMEDIATE: wait for the write lock at BEGIN (busy_timeout) rather than fail on upgrade.
    this.appendBatch = (...args) => append.immediate(...args);
  }

  /** The ledger id of a hook set, storing it on first use (replay runs reference it). */
  hookSetId(hookSet: HookSet): number {
    return this.writer.hookSetId(hookSet);
  }

  /** Records a new run as `running`; first marks runs of dead processes on this host as incomplete. */
  startRun(run: ReplayRunStart): number {
    const hookSetId = this.hookSetId(run.hookSet);
    const baselineHookSetId = run.baseline ? this.hookSetId(run.baseline) : null;
    return this.guard('record the replay run', () => {
      this.recoverDeadRuns();
      return Number(
        this.insertRun.run({
          hookSetId,
          baselineHookSetId,
          filterJson: JSON.stringify(run.selection),
          startedAt: run.startedAt,
          totalsJson: JSON.stringify(run.totals),
          optionsJson: JSON.stringify(run.options),
          pid: process.pid,
          host: this.host,
        }).lastInsertRowid,
      );
    });
  }

  /** Inserts a batch of results in one transaction, with the totals so far. */
  append(runId: number, records: ReplayResultRecord[], totals: ReplayTotals): void {
    this.guard('record replay results', () => this.appendBatch(runId, records, totals));
  }

  /** Sets the final status and totals. */
  finish(runId: number, status: Exclude<ReplayRunStatus, 'running'>, totals: ReplayTotals, finishedAt = Date.now()): void {
    this.guard('finish the replay run', () => this.finishRunStatement.run(status, JSON.stringify(totals), finishedAt, runId));
  }

  private recoverDeadRuns(): void {
    const running = this.ledger.sqlite.prepare(REPLAY_STORE_SQL.runningOnHost).all(this.host) as { id: number; pid: number }[];
    const mark = this.ledger.sqlite.prepare(REPLAY_STORE_SQL.markIncomplete);
    for (const run of running) if (!isProcessAlive(run.pid)) mark.run(run.id);
  }

  private guard<T>(what: string, write: () => T): T {
    return guardWrite(this.ledger.path, what, write);
  }
}
