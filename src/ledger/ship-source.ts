import { randomUUID } from 'node:crypto';
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Ledger as SqliteHandle } from './open.js';
import { CHAIN_ENCODING_V1, parseRowsText } from './integrity.js';
import { hookSets, invocations, legalHolds, outcomes, pruneCheckpoints } from './schema.js';
import { prepared } from './statements.js';

/**
 * The source side of `hookledger ship` (src/ship/, docs/ship.md): this ledger's stable source id, and the committed records after a
 * chain position, read in one SQLite snapshot. What is committed is what the tamper-evidence
 * chain covers: every link (an invocation with its outcomes, a background completion, a prune
 * checkpoint) is one record, shipped with the rows it covers. Rows are read with every column
 * of the drizzle schema, in its order, so a column added later is shipped without a change here.
 */

/** Column names of a table, in schema order. */
export function columnsOf(table: SQLiteTable): string[] {
  return getTableConfig(table).columns.map((c) => c.name);
}

export const INVOCATION_COLUMNS = columnsOf(invocations);
export const OUTCOME_COLUMNS = columnsOf(outcomes);
export const CHECKPOINT_COLUMNS = columnsOf(pruneCheckpoints);
export const HOOK_SET_COLUMNS = columnsOf(hookSets);
export const HOLD_COLUMNS = columnsOf(legalHolds);

/**
 * Outcome columns a background completion fills (the result columns the chain requires empty on a
 * pending outcome, and the failure detail): before its own link is shipped, a shipped outcome that
 * was pending at its invocation's commit carries none of them, as it was then (so the centre never
 * shows a completion its chain does not cover yet).
 */
const COMPLETION_COLUMNS = [...CHAIN_ENCODING_V1.outcomeResult, 'failure_detail'];
const COMPLETION_POSITIONS = COMPLETION_COLUMNS.map((name) => OUTCOME_COLUMNS.indexOf(name));
const OUTCOME_STATUS = OUTCOME_COLUMNS.indexOf('status');
const OUTCOME_ID = OUTCOME_COLUMNS.indexOf('id');

/** One chain link as stored: seq, kind, ref_id, prev_hash, hash, at, rows. */
export type LinkRow = [seq: number, kind: string, refId: number, prevHash: string, hash: string, at: number, rows: string];
export type Row = unknown[];

/** The records of a run of links, with every row they cover. */
export interface LocalBatch {
  /** The links, in seq order (gaps where the source pruned). */
  links: LinkRow[];
  /** Invocation rows (INVOCATION_COLUMNS order) of the `invocation` links. */
  invocations: Row[];
  /** Outcome rows of those invocations, as at their invocation's commit. */
  outcomes: Row[];
  /** Outcome rows of the `background` links, as completed. */
  completions: Row[];
  /** Checkpoint rows of the `checkpoint` links. */
  checkpoints: Row[];
  /** Hook set rows the invocations name. */
  hookSets: Row[];
}

const LINKS_AFTER = 'SELECT seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE seq > ? ORDER BY seq LIMIT ?';
// `+kind`: the seq range (the primary key) must drive the read. On `kind = …` SQLite picks the chain_ref index and scans every link
// of that kind for the range, a cost that grows with the ledger: ship's CPU per invocation grew with the backlog (89 → 135 µs).
const refs = (kind: string) => `SELECT ref_id FROM chain WHERE seq BETWEEN ? AND ? AND +kind = '${kind}'`;
const SELECT_INVOCATIONS = `SELECT ${INVOCATION_COLUMNS.join(', ')} FROM invocations WHERE id IN (${refs('invocation')}) ORDER BY id`;
const SELECT_OUTCOMES = `SELECT ${OUTCOME_COLUMNS.join(', ')} FROM outcomes WHERE invocation_id IN (${refs('invocation')}) ORDER BY id`;
const SELECT_COMPLETIONS = `SELECT ${OUTCOME_COLUMNS.join(', ')} FROM outcomes WHERE id IN (${refs('background')}) ORDER BY id`;
const SELECT_CHECKPOINTS = `SELECT ${CHECKPOINT_COLUMNS.join(', ')} FROM prune_checkpoints WHERE id IN (${refs('checkpoint')}) ORDER BY id`;
const SELECT_HOOK_SETS = `SELECT ${HOOK_SET_COLUMNS.join(', ')} FROM hook_sets
  WHERE id IN (SELECT hook_set_id FROM invocations WHERE id IN (${refs('invocation')})) ORDER BY id`;

const raw = (ledger: SqliteHandle, sql: string) => prepared(ledger, sql).raw();

/**
 * The committed records after chain position `afterSeq`: at most `limit` links and what they
 * cover, from one snapshot (a read transaction), so a record committing meanwhile is either
 * wholly in a later batch or wholly in this one.
 */
export function readBatch(ledger: SqliteHandle, afterSeq: number, limit: number): LocalBatch {
  return ledger.sqlite
    .transaction((): LocalBatch => {
      const links = raw(ledger, LINKS_AFTER).all(afterSeq, limit) as LinkRow[];
      const empty: LocalBatch = { links, invocations: [], outcomes: [], completions: [], checkpoints: [], hookSets: [] };
      if (links.length === 0) return empty;
      const range = [links[0]![0], links[links.length - 1]![0]];
      const pendingAtCommit = new Set<number>();
      for (const link of links) {
        if (link[1] !== 'invocation') continue;
        for (const [label, entry] of parseRowsText(link[6]))
          if (entry.pending && label.startsWith('o')) pendingAtCommit.add(Number(label.slice(1)));
      }
      const outcomeRows = raw(ledger, SELECT_OUTCOMES).all(...range) as Row[];
      return {
        links,
        invocations: raw(ledger, SELECT_INVOCATIONS).all(...range) as Row[],
        outcomes: outcomeRows.map((row) => (pendingAtCommit.has(row[OUTCOME_ID] as number) ? asCommitted(row) : row)),
        completions: raw(ledger, SELECT_COMPLETIONS).all(...range) as Row[],
        checkpoints: raw(ledger, SELECT_CHECKPOINTS).all(...range) as Row[],
        hookSets: raw(ledger, SELECT_HOOK_SETS).all(...range) as Row[],
      };
    })
    .deferred();
}

/** A background outcome as it was when its invocation committed: pending (or interrupted, which records no result). */
function asCommitted(row: Row): Row {
  const status = row[OUTCOME_STATUS];
  if (status === 'pending' || status === 'interrupted') return row;
  const copy = [...row];
  copy[OUTCOME_STATUS] = 'pending';
  for (const i of COMPLETION_POSITIONS) copy[i] = null;
  return copy;
}

/**
 * Of the given outcome ids, those that local recovery marked `interrupted` (their process died
 * while the background hook ran): `[id, failure_detail]`. The chain does not cover that change
 * (a pending outcome's link covers its identity only, and verify accepts it pending or
 * interrupted), so no link carries it; ship asks for the outcomes the centre still shows pending.
 */
export function readInterrupted(ledger: SqliteHandle, ids: number[]): [id: number, detail: string | null][] {
  const found: [number, string | null][] = [];
  const select = raw(
    ledger,
    `SELECT id, failure_detail FROM outcomes WHERE status = 'interrupted' AND id IN (SELECT value FROM json_each(?))`,
  );
  // Chunks keep one statement's JSON small whatever the number of pending outcomes.
  for (let i = 0; i < ids.length; i += 5000)
    found.push(...(select.all(JSON.stringify(ids.slice(i, i + 5000))) as [number, string | null][]));
  return found;
}

/** Every legal hold of the ledger (a few rows). */
export function readHolds(ledger: SqliteHandle): Row[] {
  return raw(ledger, `SELECT ${HOLD_COLUMNS.join(', ')} FROM legal_holds ORDER BY session_id`).all() as Row[];
}

/** The newest link's seq (0 for an empty chain): how far this ledger's committed records reach. */
export function localHead(ledger: SqliteHandle): number {
  return (prepared(ledger, 'SELECT coalesce(max(seq), 0) FROM chain').pluck().get() as number) ?? 0;
}

/** This ledger's source id, created on first use and never changed (`ship_source`). */
export function sourceIdOf(ledger: SqliteHandle): string {
  const select = prepared(ledger, 'SELECT source_id FROM ship_source WHERE id = 1').pluck();
  const existing = select.get() as string | undefined;
  if (existing) return existing;
  // Two ships starting at once on a new ledger: the first insert wins, both read it back.
  prepared(ledger, 'INSERT OR IGNORE INTO ship_source (id, source_id, created_at) VALUES (1, ?, ?)').run(`src-${randomUUID()}`, Date.now());
  return select.get() as string;
}
