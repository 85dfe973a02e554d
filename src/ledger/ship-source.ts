import { randomUUID } from 'node:crypto';
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Ledger as SqliteHandle } from './open.js';
import { CHAIN_ENCODING_V1 } from './integrity.js';
import { copyField, copyFieldSql, copyLineSql } from './postgres/copy.js';
import { storedValue } from './postgres/text.js';
import { chain, hookSets, invocations, legalHolds, outcomes, pruneCheckpoints } from './schema.js';
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

export type Row = unknown[];

/**
 * One invocation of a batch: its local id and hook set id (which the centre maps to its own), its
 * COPY line without those two (INVOCATION_COPY_COLUMNS after them, ended by a newline), and its
 * outcomes' COPY lines (OUTCOME_COPY_COLUMNS after the invocation id, which the centre puts
 * first; joined by newlines, none at the end; null for none).
 */
export type LocalInvocation = [id: number, hookSetId: number, line: string, outcomes: string | null];

/** The first and last link of a batch: where it must follow the centre's head, and the new head. */
export interface LinkSpan {
  firstSeq: number;
  /** The hash the first link follows. */
  prevHash: string;
  lastSeq: number;
  lastHash: string;
}

/**
 * The records of a run of links, with every row they cover. Invocations, outcomes and links, the
 * bulk, come as PostgreSQL COPY text that SQLite built (copy.ts copyFieldSql): JavaScript never
 * holds them as rows. The rare rest comes as rows (the schema's columns, in its order).
 */
export interface LocalBatch {
  /** How many links (gaps where the source pruned); 0 for nothing to ship. */
  links: number;
  /** Null when there are no links. */
  span: LinkSpan | null;
  /** COPY text of the links: LINK_COPY_COLUMNS, one line each, in seq order. */
  linksText: string;
  /** The `invocation` links' invocations, by id, with their outcomes as at their invocation's commit. */
  invocations: LocalInvocation[];
  /** Outcome rows of the `background` links, as completed. */
  completions: Row[];
  /** Checkpoint rows of the `checkpoint` links. */
  checkpoints: Row[];
  /** Hook set rows the invocations name. */
  hookSets: Row[];
}

/** An empty batch, to add slices to (addBatch). */
export const emptyBatch = (): LocalBatch => ({
  links: 0,
  span: null,
  linksText: '',
  invocations: [],
  completions: [],
  checkpoints: [],
  hookSets: [],
});

const without = (columns: string[], ...names: string[]) => columns.filter((c) => !names.includes(c));
/** copyFieldSql of each of `columns` of `table` (as `alias`), or `override`'s expression for a column. */
function copyFieldsSql(
  table: SQLiteTable,
  alias: string,
  columns: string[],
  override: (column: string) => string | null = () => null,
): string[] {
  const types = new Map(getTableConfig(table).columns.map((c) => [c.name, c.getSQLType()]));
  return columns.map((c) => override(c) ?? copyFieldSql(`${alias}.${c}`, types.get(c)!));
}

/** COPY columns of a shipped invocation line: central id and hook set id (added centrally), the rest, the local id, the source. */
export const INVOCATION_COPY_COLUMNS = [
  'id',
  'hook_set_id',
  ...without(INVOCATION_COLUMNS, 'id', 'hook_set_id'),
  'source_ref',
  'writer_id',
];
/** COPY columns of a shipped outcome line: the central invocation id (added centrally), the rest, the local id. */
export const OUTCOME_COPY_COLUMNS = ['invocation_id', ...without(OUTCOME_COLUMNS, 'id', 'invocation_id'), 'source_ref'];
/** COPY columns of a shipped link: the link as stored, and the source. */
export const LINK_COPY_COLUMNS = [...columnsOf(chain), 'writer_id'];

/**
 * An outcome pending when its invocation committed (its label in the link's rows carries `~`,
 * integrity.ts) that has completed since: shipped as it was then (pending, no result), so the
 * centre never shows a completion its chain does not cover yet. Interrupted records no result.
 */
const PENDING_AT_COMMIT = `o.status NOT IN ('pending', 'interrupted') AND instr(c.rows, '~') > 0 AND instr(' ' || c.rows, ' o' || o.id || '~:') > 0`;
const OUTCOME_FIELDS = [...OUTCOME_COPY_COLUMNS.slice(1, -1), 'id'];
const OUTCOME_AS_COMMITTED = copyFieldsSql(outcomes, 'o', OUTCOME_FIELDS, (column) =>
  column === 'status' ? `'pending'` : COMPLETION_COLUMNS.includes(column) ? `'\\N'` : null,
);
const OUTCOME_LINE_AS_STORED = copyLineSql(copyFieldsSql(outcomes, 'o', OUTCOME_FIELDS));
const OUTCOME_LINE = `iif(${PENDING_AT_COMMIT}, ${copyLineSql(OUTCOME_AS_COMMITTED)}, ${OUTCOME_LINE_AS_STORED})`;
const outcomeLines = (line: string) =>
  `(SELECT group_concat(${line}, char(10) ORDER BY o.id) FROM outcomes o WHERE o.invocation_id = i.id)`;
const INVOCATION_LINE = copyLineSql(copyFieldsSql(invocations, 'i', [...INVOCATION_COPY_COLUMNS.slice(2, -2), 'id']));
const LINK_LINE = copyLineSql(copyFieldsSql(chain, 'c', columnsOf(chain)));

const LINKS_AFTER = 'SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM (SELECT seq FROM chain WHERE seq > ? ORDER BY seq LIMIT ?)';
const SPAN_ENDS = 'SELECT (SELECT prev_hash FROM chain WHERE seq = :lo), (SELECT hash FROM chain WHERE seq = :hi)';
const LINKS_TEXT = `SELECT group_concat(${LINK_LINE} || char(9) || :writer || char(10), '' ORDER BY c.seq)
  FROM chain c WHERE c.seq BETWEEN :lo AND :hi`;
// Whether the link covers a pending outcome (`~`) is asked once per invocation, not once per outcome: most have none (about 8% of
// the read's CPU, measured on a generated ledger).
const SELECT_INVOCATIONS = `SELECT i.id, i.hook_set_id, ${INVOCATION_LINE} || char(9) || :writer || char(10),
    iif(instr(c.rows, '~') > 0, ${outcomeLines(OUTCOME_LINE)}, ${outcomeLines(OUTCOME_LINE_AS_STORED)})
  FROM chain c JOIN invocations i ON i.id = c.ref_id WHERE c.seq BETWEEN :lo AND :hi AND +c.kind = 'invocation' ORDER BY i.id`;
// `+kind`: the seq range (the primary key) must drive the read. On `kind = …` SQLite picks the chain_ref index and scans every link
// of that kind for the range, a cost that grows with the ledger: ship's CPU per invocation grew with the backlog (89 → 135 µs).
const refs = (kind: string) => `SELECT ref_id FROM chain WHERE seq BETWEEN :lo AND :hi AND +kind = '${kind}'`;
const SELECT_COMPLETIONS = `SELECT ${OUTCOME_COLUMNS.join(', ')} FROM outcomes WHERE id IN (${refs('background')}) ORDER BY id`;
const SELECT_CHECKPOINTS = `SELECT ${CHECKPOINT_COLUMNS.join(', ')} FROM prune_checkpoints WHERE id IN (${refs('checkpoint')}) ORDER BY id`;
const SELECT_HOOK_SETS = `SELECT ${HOOK_SET_COLUMNS.join(', ')} FROM hook_sets
  WHERE id IN (SELECT hook_set_id FROM invocations WHERE id IN (${refs('invocation')})) ORDER BY id`;

/** Every statement readBatch runs on a range of links (for the query-plan test: the `seq` range must drive each). */
export const BATCH_READS: readonly string[] = [
  SPAN_ENDS,
  LINKS_TEXT,
  SELECT_INVOCATIONS,
  SELECT_COMPLETIONS,
  SELECT_CHECKPOINTS,
  SELECT_HOOK_SETS,
];

const raw = (ledger: SqliteHandle, sql: string) => prepared(ledger, sql).raw();

/**
 * The committed records after chain position `afterSeq`: at most `limit` links and what they
 * cover, from one snapshot (a read transaction), so a record committing meanwhile is either
 * wholly in a later batch or wholly in this one. `sourceId` is the writer the COPY lines name.
 */
export function readBatch(ledger: SqliteHandle, afterSeq: number, limit: number, sourceId: string): LocalBatch {
  return ledger.sqlite
    .transaction((): LocalBatch => {
      const { n, lo, hi } = prepared(ledger, LINKS_AFTER).get(afterSeq, limit) as { n: number; lo: number; hi: number };
      if (n === 0) return emptyBatch();
      const range = { lo, hi };
      const ends = raw(ledger, SPAN_ENDS).get(range) as [string, string];
      const texts = { ...range, writer: copyField(sourceId) };
      return {
        links: n,
        span: { firstSeq: lo, prevHash: ends[0], lastSeq: hi, lastHash: ends[1] },
        linksText: storedValue(prepared(ledger, LINKS_TEXT).pluck().get(texts) as string),
        invocations: storedInvocations(raw(ledger, SELECT_INVOCATIONS).all(texts) as LocalInvocation[]),
        completions: raw(ledger, SELECT_COMPLETIONS).all(range) as Row[],
        checkpoints: raw(ledger, SELECT_CHECKPOINTS).all(range) as Row[],
        hookSets: raw(ledger, SELECT_HOOK_SETS).all(range) as Row[],
      };
    })
    .deferred();
}

/** COPY lines SQLite built with text in its stored form (copy.ts copyLineSql). */
function storedInvocations(rows: LocalInvocation[]): LocalInvocation[] {
  for (const row of rows) {
    row[2] = storedValue(row[2]);
    if (row[3] !== null) row[3] = storedValue(row[3]);
  }
  return rows;
}

/** Appends `slice`, the batch read right after `whole` ends, to `whole`: one batch as if read at once. */
export function addBatch(whole: LocalBatch, slice: LocalBatch): void {
  if (!slice.span) return;
  whole.span = whole.span ? { ...whole.span, lastSeq: slice.span.lastSeq, lastHash: slice.span.lastHash } : slice.span;
  whole.links += slice.links;
  whole.linksText += slice.linksText;
  for (const row of slice.invocations) whole.invocations.push(row);
  for (const row of slice.completions) whole.completions.push(row);
  for (const row of slice.checkpoints) whole.checkpoints.push(row);
  const known = new Set(whole.hookSets.map((row) => row[0]));
  for (const row of slice.hookSets) if (!known.has(row[0])) whole.hookSets.push(row);
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

/** Every hook set of the ledger (few: one per version of a configuration), shipped ahead of the batches (ship-sink.ts shipHookSets). */
export function readHookSets(ledger: SqliteHandle): Row[] {
  return raw(ledger, `SELECT ${HOOK_SET_COLUMNS.join(', ')} FROM hook_sets ORDER BY id`).all() as Row[];
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
