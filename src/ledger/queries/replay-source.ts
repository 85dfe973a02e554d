import type Database from 'better-sqlite3';
import type { Ledger } from '../open.js';
import type { InvocationRow, OutcomeRow } from '../rows.js';
import { orderedFilterSql, type InvocationFilter } from './filters.js';

/**
 * The stored invocations a replay re-runs, read in keyset batches. better-sqlite3 cannot run
 * other statements on a connection while an `.iterate()` is open, so the selection is never
 * held open: each batch is one short query (`id > last ORDER BY id LIMIT n`), and the replay
 * writes its results between batches. Memory stays flat however large the selection is.
 */

/** The columns of one stored invocation that a replay needs (snake_case, as SQLite returns them). */
export type ReplaySourceRow = Pick<
  InvocationRow,
  | 'id'
  | 'point'
  | 'session_id'
  | 'tool_name'
  | 'agent'
  | 'input_json'
  | 'invocation_json'
  | 'raw_json'
  | 'decision'
  | 'decisive_hook_id'
  | 'reason_code'
  | 'message'
  | 'modified_input_json'
  | 'redactions_json'
>;

/** ReplaySourceRow's columns, as both engines select them (`FROM invocations i`). */
export const REPLAY_SOURCE_COLUMNS = `i.id, i.point, i.session_id, i.tool_name, i.agent, i.input_json, i.invocation_json, i.raw_json, i.decision,
  i.decisive_hook_id, i.reason_code, i.message, i.modified_input_json, i.redactions_json`;

/** The recorded outcome columns the per-hook diff compares (not the payloads: the diff must stay cheap). */
export type ReplayOutcomeRow = Pick<
  OutcomeRow,
  'invocation_id' | 'hook_id' | 'mode' | 'status' | 'decision' | 'decisive' | 'reason_code' | 'failure_reason'
>;

/** ReplayOutcomeRow's columns in SELECT order (read raw: no object per row from SQLite). */
type OutcomeTuple = [
  ReplayOutcomeRow['invocation_id'],
  ReplayOutcomeRow['hook_id'],
  ReplayOutcomeRow['mode'],
  ReplayOutcomeRow['status'],
  ReplayOutcomeRow['decision'],
  ReplayOutcomeRow['decisive'],
  ReplayOutcomeRow['reason_code'],
  ReplayOutcomeRow['failure_reason'],
];

/** The selection as stored with a replay run: the shared invocation filter plus a limit. */
export interface ReplaySelection {
  filter: InvocationFilter;
  /** Replay only the most recent `limit` matching invocations (still replayed oldest first). */
  limit?: number;
}

/**
 * A selection bound to one ledger: its size and its rows, batch by batch. The id range is
 * fixed when the source is opened, so invocations recorded while the replay runs (a live
 * agent writing the same ledger) are not chased.
 */
export class ReplaySource {
  /** Invocations the selection holds (at most `limit`). */
  readonly total: number;
  private readonly batch: Database.Statement<unknown[], ReplaySourceRow>;
  private readonly outcomesIn: Database.Statement<[string], OutcomeTuple>;
  private readonly outcomesBetween: Database.Statement<[number, number], OutcomeTuple>;
  private readonly params: (string | number)[];
  private lastId: number;
  private readonly maxId: number;

  constructor(
    ledger: Ledger,
    selection: ReplaySelection,
    private readonly batchSize = 500,
  ) {
    const s = ledger.sqlite;
    // Only completed invocations have a recorded decision to compare against.
    const condition = orderedFilterSql(ledger, selection.filter, [`i.status = 'completed'`]);
    this.params = condition.params;
    const where = condition.where;
    this.maxId = (s.prepare('SELECT coalesce(max(id), 0) FROM invocations').pluck().get() as number) ?? 0;
    this.lastId = 0;
    if (selection.limit !== undefined) {
      // The most recent `limit`: start just below the limit-th newest match.
      const floor = s
        .prepare(`SELECT i.id FROM invocations i ${where} ORDER BY i.id DESC LIMIT 1 OFFSET ?`)
        .pluck()
        .get(...this.params, Math.max(0, selection.limit - 1)) as number | undefined;
      this.lastId = floor === undefined ? 0 : floor - 1;
    }
    const bounded = `${where} AND i.id > ? AND i.id <= ?`;
    this.total = s
      .prepare(`SELECT count(*) FROM invocations i ${bounded}`)
      .pluck()
      .get(...this.params, this.lastId, this.maxId) as number;
    this.batch = s.prepare(`SELECT ${REPLAY_SOURCE_COLUMNS} FROM invocations i ${bounded} ORDER BY i.id LIMIT ?`) as Database.Statement<
      unknown[],
      ReplaySourceRow
    >;
    // Raw arrays rather than objects: at replay speeds building a keyed object per outcome row shows in the profile.
    const columns = 'invocation_id, hook_id, mode, status, decision, decisive, reason_code, failure_reason';
    this.outcomesIn = s
      .prepare(`SELECT ${columns} FROM outcomes WHERE invocation_id IN (SELECT value FROM json_each(?)) ORDER BY invocation_id, id`)
      .raw(true) as Database.Statement<[string], OutcomeTuple>;
    this.outcomesBetween = s
      .prepare(`SELECT ${columns} FROM outcomes WHERE invocation_id >= ? AND invocation_id <= ? ORDER BY invocation_id, id`)
      .raw(true) as Database.Statement<[number, number], OutcomeTuple>;
  }

  /** The next batch of rows in id order (empty when the selection is exhausted). */
  next(): ReplaySourceRow[] {
    const rows = this.batch.all(...this.params, this.lastId, this.maxId, this.batchSize);
    if (rows.length > 0) this.lastId = rows[rows.length - 1]!.id;
    return rows;
  }

  /** The recorded outcomes of these invocations, grouped by invocation id, in storage order. */
  recordedOutcomes(ids: number[]): Map<number, ReplayOutcomeRow[]> {
    const grouped = new Map<number, ReplayOutcomeRow[]>();
    if (ids.length === 0) return grouped;
    for (const id of ids) grouped.set(id, []);
    const first = ids[0]!;
    const last = ids[ids.length - 1]!;
    // A dense batch (the usual case: no filter, or a filter most invocations pass) is one index
    // range; a sparse one (a single session in a busy ledger) names its ids instead.
    const rows = last - first < ids.length * 4 ? this.outcomesBetween.all(first, last) : this.outcomesIn.all(JSON.stringify(ids));
    for (const [invocation_id, hook_id, mode, status, decision, decisive, reason_code, failure_reason] of rows) {
      grouped.get(invocation_id)?.push({ invocation_id, hook_id, mode, status, decision, decisive, reason_code, failure_reason });
    }
    return grouped;
  }
}
