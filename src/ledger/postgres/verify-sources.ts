import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import type pg from 'pg';
import { openLedger } from '../open.js';
import * as local from '../schema.js';
import { verifyLedger, type IntegrityProblem } from '../verify.js';
import { originalValue } from './text.js';

/**
 * Verifies each shipped source's chain exactly as the source would (docs/ship.md): the source's
 * records are rebuilt, with the ids they have at the source, into a scratch SQLite ledger, and
 * the SQLite engine's own verify walks it, prune checkpoints and all; the source's shipped head
 * is checked as an anchor, so links cut from the end are caught too. A record edited centrally,
 * a missing range of links or a reordered link is therefore named exactly as the source's own
 * verify would name it, with the source id and host in front. Rows are copied in batches in
 * central id order (memory stays flat); the scratch file is removed afterwards.
 */

/** One shipped source as verify found it. */
export interface SourceChain {
  source: string;
  host: string;
  links: number;
  head: { seq: number; hash: string };
  records: { invocations: number; backgroundOutcomes: number; checkpoints: number };
  problems: (IntegrityProblem & { writer: string })[];
  problemCount: number;
}

const columns = (table: Parameters<typeof getTableConfig>[0]) => getTableConfig(table).columns.map((c) => c.name);
const INVOCATION = columns(local.invocations);
const OUTCOME = columns(local.outcomes);
const CHECKPOINT = columns(local.pruneCheckpoints);
const HOOK_SET = columns(local.hookSets);

/** A select list with some columns replaced (the source's ids) and `decisive` as the 0/1 SQLite holds. */
const selectList = (names: string[], alias: string, replace: Record<string, string>) =>
  names.map((c) => replace[c] ?? (c === 'decisive' ? `${alias}.decisive::int` : `${alias}.${c}`)).join(', ');

/**
 * How each table of a source is read back, with the source's own ids: source_ref for the row, the
 * mapped local id for its hook set and its invocation. `order` pages through the rows in central
 * id order (the select's first column); `ref` is the source's id of a row, to read one again.
 */
interface SourceTable {
  table: 'hook_sets' | 'invocations' | 'outcomes' | 'prune_checkpoints' | 'chain';
  names: string[];
  select: string;
  order: string | null;
  ref: string;
  /**
   * Reading rows again by `ref` also names their invocations' source ids (read from the scratch copy) under this
   * column, so that an index serves the read: outcomes have no index on `source_ref` (migration 0010).
   */
  invocationRef?: string;
}
const TABLES: SourceTable[] = [
  {
    table: 'hook_sets',
    names: HOOK_SET,
    select: `SELECT ${selectList(HOOK_SET, 'h', { id: 'm.local_id' })} FROM ship_hook_sets m JOIN hook_sets h ON h.id = m.hook_set_id WHERE m.source_id = $1`,
    order: null,
    ref: 'm.local_id',
  },
  {
    table: 'invocations',
    names: INVOCATION,
    select: `SELECT i.id, ${selectList(INVOCATION, 'i', { id: 'i.source_ref', hook_set_id: 'm.local_id' })}
      FROM invocations i LEFT JOIN ship_hook_sets m ON m.source_id = i.writer_id AND m.hook_set_id = i.hook_set_id WHERE i.writer_id = $1`,
    order: 'i.id',
    ref: 'i.source_ref',
  },
  {
    table: 'outcomes',
    names: OUTCOME,
    select: `SELECT o.id, ${selectList(OUTCOME, 'o', { id: 'o.source_ref', invocation_id: 'i.source_ref' })}
      FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE i.writer_id = $1`,
    order: 'o.id',
    ref: 'o.source_ref',
    invocationRef: 'i.source_ref',
  },
  {
    table: 'prune_checkpoints',
    names: CHECKPOINT,
    select: `SELECT p.id, ${selectList(CHECKPOINT, 'p', { id: 'p.source_ref' })} FROM prune_checkpoints p WHERE p.source_id = $1`,
    order: 'p.id',
    ref: 'p.source_ref',
  },
  {
    table: 'chain',
    names: ['seq', 'kind', 'ref_id', 'prev_hash', 'hash', 'at', 'rows'],
    select: `SELECT seq, seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE writer_id = $1`,
    order: 'seq',
    ref: 'seq',
  },
];
const ROUNDS_FOR_OLD_TEXT = 10;

export interface SourceVerifyOptions {
  batchSize?: number;
  maxProblems?: number;
  /** Runs of links a central prune removed, per writer (a source's id among them): its gaps are then accounted for. */
  prunedRuns?: Map<string, [number, number, string][]>;
}

const insert = (table: string, names: string[], replace = false) =>
  `INSERT ${replace ? 'OR REPLACE ' : ''}INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;

/**
 * Verifies every shipped source, inside the caller's transaction (one snapshot with the rest of
 * verify). `writer` in each problem is the source id.
 */
export async function verifyShippedSources(client: pg.ClientBase, options: SourceVerifyOptions = {}): Promise<SourceChain[]> {
  const sources = (
    await client.query<{ id: string; host: string; head_seq: number; head_hash: string }>(
      `SELECT s.id, s.host, w.head_seq, w.head_hash FROM ship_sources s JOIN writers w ON w.id = s.id ORDER BY s.id`,
    )
  ).rows;
  const results: SourceChain[] = [];
  for (const source of sources) results.push(await verifySource(client, source, options));
  return results;
}

async function verifySource(
  client: pg.ClientBase,
  source: { id: string; host: string; head_seq: number; head_hash: string },
  options: SourceVerifyOptions,
): Promise<SourceChain> {
  const batchSize = options.batchSize ?? 5000;
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-verify-'));
  const scratch = openLedger({ path: join(dir, 'source.db') });
  try {
    const s = scratch.sqlite;
    // The rebuilt ledger holds whatever the centre holds, however broken: verify, not a constraint, must say what is wrong.
    s.pragma('foreign_keys = OFF');
    s.pragma('synchronous = OFF');
    const tried = new Set<string>();
    // Triggers keep report caches; a scratch copy has no reports.
    for (const name of s.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).pluck().all() as string[])
      s.exec(`DROP TRIGGER "${name}"`);
    // So do the reports' indexes: verify reads records by primary key and outcomes by invocation, and each secondary
    // index cost every rebuilt row an entry (about 20 on invocations). Keys and unique constraints stay.
    for (const name of s
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('invocations', 'outcomes') AND name <> 'outcomes_invocation' AND sql NOT LIKE 'CREATE UNIQUE%'`,
      )
      .pluck()
      .all() as string[])
      s.exec(`DROP INDEX "${name}"`);
    const inserts = new Map(TABLES.map((t) => [t.table, s.prepare(insert(t.table, t.names))]));
    const replaces = new Map(TABLES.map((t) => [t.table, s.prepare(insert(t.table, t.names, true))]));
    // Central text is stored escaped (text.ts); the source hashed the original.
    const put = (t: SourceTable, rows: unknown[][], decode: boolean) =>
      s.transaction(() => {
        const statement = (decode ? inserts : replaces).get(t.table)!;
        for (const row of rows) {
          const values = t.order ? row.slice(1) : row;
          statement.run(decode ? values.map(originalValue) : values);
        }
      })();
    for (const t of TABLES) {
      let after = 0;
      for (;;) {
        const text = t.order ? `${t.select} AND ${t.order} > $2 ORDER BY ${t.order} LIMIT $3` : t.select;
        const rows = (
          await client.query<unknown[]>({ text, values: t.order ? [source.id, after, batchSize] : [source.id], rowMode: 'array' })
        ).rows;
        if (rows.length === 0) break;
        put(t, rows, true);
        if (!t.order) break;
        after = rows[rows.length - 1]![0] as number;
      }
    }
    const verifyScratch = () =>
      verifyLedger(scratch, {
        ...(options.maxProblems !== undefined ? { maxProblems: options.maxProblems } : {}),
        anchor: { seq: source.head_seq, hash: source.head_hash },
        prunedElsewhere: options.prunedRuns?.get(source.id) ?? [],
      });
    let report = verifyScratch();
    // Text shipped before NUL was escaped reversibly stored a literal U+2400 (or U+241B) as it is,
    // which now reads back as an escape: a changed row whose central text holds one is checked once
    // more as stored. Only rows that match what was committed that way stop being reported.
    for (let round = 0; round < ROUNDS_FOR_OLD_TEXT; round++) {
      let replaced = 0;
      for (const t of TABLES) {
        const ids = report.problems
          .filter((p) => p.kind === 'changed' && p.table === t.table && !tried.has(`${t.table}:${p.id}`))
          .map((p) => p.id);
        if (ids.length === 0) continue;
        for (const id of ids) tried.add(`${t.table}:${id}`);
        const byInvocation = t.invocationRef
          ? {
              text: ` AND ${t.invocationRef} IS NOT NULL AND ${t.invocationRef} = ANY($3)`,
              values: s
                .prepare(`SELECT DISTINCT invocation_id FROM ${t.table} WHERE id IN (SELECT value FROM json_each(?))`)
                .pluck()
                .all(JSON.stringify(ids)),
            }
          : null;
        const rows = (
          await client.query<unknown[]>({
            text: `${t.select} AND ${t.ref} = ANY($2)${byInvocation?.text ?? ''}`,
            values: byInvocation ? [source.id, ids, byInvocation.values] : [source.id, ids],
            rowMode: 'array',
          })
        ).rows;
        const escaped = rows.filter((row) => row.some((v) => originalValue(v) !== v));
        put(t, escaped, false);
        replaced += escaped.length;
      }
      if (replaced === 0) break;
      report = verifyScratch();
    }
    const named = `source ${source.id} (host ${source.host})`;
    return {
      source: source.id,
      host: source.host,
      links: report.links,
      head: report.head,
      records: report.records,
      problems: report.problems.map((p) => ({ ...p, writer: source.id, detail: `${named}: ${p.detail}` })),
      problemCount: report.problemCount,
    };
  } finally {
    scratch.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
