import type Database from 'better-sqlite3';
import { ChainAppender, CHECKPOINT_SELECT, checkpointEntry, type RawRow } from './integrity.js';
import type { Ledger } from './open.js';
import { describeSqliteError } from './sqlite-errors.js';
import { rollupInvalidator } from './health-rollup.js';
import { LedgerError, OptionError } from '../domain/errors.js';

export interface PruneOptions {
  /** Invocations started before this time (ms since the epoch; `parseTimeBound` reads `180d` or a date) are removed. */
  before: number;
  /** Invocations removed per transaction. Default 500. */
  batchSize?: number;
  /** Count what would be removed; change nothing. */
  dryRun?: boolean;
  /** Pause between batches so that waiting writers get the lock, ms. Default 5. */
  pauseMs?: number;
}

/** What a prune removed (or, with `dryRun`, would remove). */
export interface PruneReport {
  before: number;
  dryRun: boolean;
  invocations: number;
  outcomes: number;
  /** Chain links removed (each accounted for by a checkpoint link). */
  links: number;
  batches: number;
  /** Ids of the prune checkpoints written (one per batch). */
  checkpoints: number[];
  /** Sessions under legal hold that had invocations before the cutoff: kept. */
  held: { sessionId: string; invocations: number }[];
  /** Invocations before the cutoff still running, or with a background hook still pending: kept. */
  inProgress: number;
  /** The longest time one batch held the write lock, ms. */
  longestBatchMs: number;
  durationMs: number;
}

/** Invocations a prune may remove: old, not held, not in progress. Parameters: before, after id. */
const ELIGIBLE = `FROM invocations i
  WHERE i.started_at < ? AND i.id > ? AND i.status != 'running'
    AND (i.session_id IS NULL OR i.session_id NOT IN (SELECT session_id FROM legal_holds))
    AND NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'pending')`;

/**
 * The statements a prune reads with, shared by both engines (PostgreSQL numbers the `?`
 * placeholders: ledger/postgres/prune.ts). `eligible` is a FROM/WHERE clause (before, after id).
 */
export const PRUNE_SQL = {
  eligible: ELIGIBLE,
  /** Held sessions with invocations before the cutoff (before). */
  // Driven by the holds (IN), not a join: SQLite scanned every invocation's session to join the few holds (0.3 s at 1M).
  held: `SELECT i.session_id AS "sessionId", count(*) AS invocations FROM invocations i
       WHERE i.session_id IN (SELECT session_id FROM legal_holds) AND i.started_at < ? GROUP BY i.session_id ORDER BY i.session_id`,
  /** Invocations before the cutoff kept because they are still in progress (before). */
  inProgress: `SELECT count(*) FROM invocations i WHERE i.started_at < ?
         AND (i.status = 'running' OR EXISTS (SELECT 1 FROM outcomes o WHERE o.invocation_id = i.id AND o.status = 'pending'))
         AND (i.session_id IS NULL OR i.session_id NOT IN (SELECT session_id FROM legal_holds))`,
  /** What a dry run counts: invocations and their outcomes (before, after id). */
  dryRun: `SELECT count(*), coalesce(sum((SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id)), 0) ${ELIGIBLE}`,
} as const;

/** Checks a prune's options alike on every engine; returns the batch size. */
export function pruneBatchSize(options: PruneOptions, now: number): number {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000)
    throw new OptionError('batchSize', `must be an integer from 1 to 100000, got ${batchSize}`);
  if (options.before > now)
    throw new OptionError('before', `${new Date(options.before).toISOString()} is in the future; nothing that recent can be pruned`);
  return batchSize;
}

/** A report before any batch ran. */
export function startPruneReport(options: PruneOptions, held: PruneReport['held'], inProgress: number): PruneReport {
  return {
    before: options.before,
    dryRun: options.dryRun ?? false,
    invocations: 0,
    outcomes: 0,
    links: 0,
    batches: 0,
    checkpoints: [],
    held,
    inProgress,
    longestBatchMs: 0,
    durationMs: 0,
  };
}

/**
 * Runs of consecutive seqs in `[seq, hash]` links sorted by seq: `[first, last, hash of last]`.
 * Verify needs, for each gap, the hash of its last link (the next link's prev_hash).
 */
export function removedRuns(links: readonly (readonly [number, string])[]): [number, number, string][] {
  const runs: [number, number, string][] = [];
  for (const [seq, hash] of links) {
    const last = runs[runs.length - 1];
    if (last && seq === last[1] + 1) {
      last[1] = seq;
      last[2] = hash;
    } else runs.push([seq, seq, hash]);
  }
  return runs;
}

/**
 * Removes old invocations with their outcomes, in batches of short IMMEDIATE transactions so
 * that writers wait at most one batch. Sessions under legal hold are kept. Each batch removes
 * the chain links of what it deletes and appends a checkpoint link that records the runs of
 * links removed and the hash of the last link of each run, so `verify` still passes on what
 * remains and still catches anything removed outside hookledger.
 */
export async function pruneLedger(ledger: Ledger, options: PruneOptions): Promise<PruneReport> {
  const started = Date.now();
  const batchSize = pruneBatchSize(options, started);
  const s = ledger.sqlite;
  const before = options.before;

  const held = s.prepare(PRUNE_SQL.held).all(before) as { sessionId: string; invocations: number }[];
  const inProgress = s.prepare(PRUNE_SQL.inProgress).pluck().get(before) as number;
  const report = startPruneReport(options, held, inProgress);

  if (options.dryRun) {
    const counts = s.prepare(PRUNE_SQL.dryRun).raw().get(before, 0) as [number, number];
    report.invocations = counts[0];
    report.outcomes = counts[1];
    report.durationMs = Date.now() - started;
    return report;
  }

  // The batches walk invocations by id; without an upper bound, the last one (finding nothing)
  // read every invocation after the last one removed (about 0.5 s at 1M). An invocation that
  // commits during the prune with a start before the cutoff (a clock behind) is left to the next prune.
  // INDEXED BY: for max(id) SQLite otherwise walks the table from its newest row back to the cutoff.
  const lastId =
    (s.prepare('SELECT max(id) FROM invocations INDEXED BY invocations_started_at WHERE started_at < ?').pluck().get(before) as
      number | null) ?? 0;
  const batch = new PruneBatch(s);
  return runPruneBatches(report, options, started, ledger.path, describeSqliteError, (afterId) =>
    batch.run(before, afterId, lastId, batchSize),
  );
}

/** What one batch removed. */
export interface PruneBatchResult {
  invocations: number;
  outcomes: number;
  links: number;
  checkpointId: number;
  /** The last invocation id the batch removed: the next batch starts after it. */
  lastId: number;
}

/**
 * Runs batches (each engine's own) until one finds nothing left (null), adding each to the report
 * and pausing between them so that waiting writers get in. A failing batch stops the prune with
 * one line saying how far it got (what earlier batches removed stays removed, each with its
 * checkpoint).
 */
export async function runPruneBatches(
  report: PruneReport,
  options: PruneOptions,
  started: number,
  location: string,
  describeError: (error: unknown) => string,
  runBatch: (afterId: number) => PruneBatchResult | null | Promise<PruneBatchResult | null>,
): Promise<PruneReport> {
  const pauseMs = options.pauseMs ?? 5;
  let afterId = 0;
  for (;;) {
    const t0 = performance.now();
    let result: PruneBatchResult | null;
    try {
      result = await runBatch(afterId);
    } catch (error) {
      throw new LedgerError(
        'ledger_write_failed',
        `prune stopped after ${report.batches} batches (${report.invocations} invocations removed) in ${location}: ${describeError(error)}`,
        { cause: error },
      );
    }
    report.longestBatchMs = Math.max(report.longestBatchMs, performance.now() - t0);
    if (result === null) break;
    report.batches++;
    report.invocations += result.invocations;
    report.outcomes += result.outcomes;
    report.links += result.links;
    report.checkpoints.push(result.checkpointId);
    afterId = result.lastId;
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  report.longestBatchMs = Math.round(report.longestBatchMs * 100) / 100;
  report.durationMs = Date.now() - started;
  return report;
}

/** One batch's statements, prepared once per prune. */
class PruneBatch {
  private readonly tx: (before: number, afterId: number, lastId: number, limit: number) => PruneBatchResult | null;

  constructor(s: Database.Database) {
    const selectIds = s.prepare(`SELECT i.id ${ELIGIBLE} AND i.id <= ? ORDER BY i.id LIMIT ?`).pluck() as Database.Statement<
      [number, number, number, number],
      number
    >;
    const invocationLinks = s
      // IN (subquery), not a join with json_each: with a join SQLite walked every invocation link
      // of the chain per id (kind = ? alone on chain_ref), 5 minutes a batch at 1M invocations.
      .prepare(`SELECT c.seq, c.hash FROM chain c WHERE c.kind = 'invocation' AND c.ref_id IN (SELECT value FROM json_each(?))`)
      .raw() as Database.Statement<[string], [number, string]>;
    const backgroundLinks = s
      .prepare(
        `SELECT c.seq, c.hash FROM chain c WHERE c.kind = 'background'
           AND c.ref_id IN (SELECT o.id FROM outcomes o WHERE o.invocation_id IN (SELECT value FROM json_each(?)))`,
      )
      .raw() as Database.Statement<[string], [number, string]>;
    const deleteLinks = s.prepare('DELETE FROM chain WHERE seq IN (SELECT value FROM json_each(?))');
    const deleteOutcomes = s.prepare('DELETE FROM outcomes WHERE invocation_id IN (SELECT value FROM json_each(?))');
    const deleteInvocations = s.prepare('DELETE FROM invocations WHERE id IN (SELECT value FROM json_each(?))');
    const insertCheckpoint = s.prepare(
      'INSERT INTO prune_checkpoints (at, before, invocations, outcomes, removed_json) VALUES (?, ?, ?, ?, ?)',
    );
    const selectCheckpoint = s.prepare(CHECKPOINT_SELECT).raw() as Database.Statement<[number], RawRow>;
    const appender = new ChainAppender(s);
    const invalidateRollups = rollupInvalidator(s);

    const tx = s.transaction((before: number, afterId: number, lastId: number, limit: number) => {
      const ids = selectIds.all(before, afterId, lastId, limit);
      if (ids.length === 0) return null;
      const idsJson = JSON.stringify(ids);
      const links = [...invocationLinks.all(idsJson), ...backgroundLinks.all(idsJson)].sort((a, b) => a[0] - b[0]);
      const runs = removedRuns(links);
      deleteLinks.run(JSON.stringify(links.map((l) => l[0])));
      invalidateRollups(idsJson);
      const outcomes = deleteOutcomes.run(idsJson).changes;
      const invocations = deleteInvocations.run(idsJson).changes;
      const at = Date.now();
      const checkpointId = Number(insertCheckpoint.run(at, before, invocations, outcomes, JSON.stringify(runs)).lastInsertRowid);
      // When the newest links were among those removed, the checkpoint follows the last of them (never reusing its seq).
      const tail = links[links.length - 1];
      const after = tail ? { seq: tail[0], hash: tail[1] } : undefined;
      appender.append('checkpoint', checkpointId, [checkpointEntry(selectCheckpoint.get(checkpointId)!)], at, after);
      return { invocations, outcomes, links: links.length, checkpointId, lastId: ids[ids.length - 1]! };
    });
    this.tx = (...args) => tx.immediate(...args);
  }

  run(before: number, afterId: number, lastId: number, limit: number) {
    return this.tx(before, afterId, lastId, limit);
  }
}
