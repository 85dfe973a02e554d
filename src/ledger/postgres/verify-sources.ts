import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import type pg from 'pg';
import { openLedger } from '../open.js';
import * as local from '../schema.js';
import { verifyLedger, type IntegrityProblem } from '../verify.js';

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

// The source's own ids: source_ref for the row, the mapped local id for its hook set and its invocation.
const SELECT_INVOCATIONS = `SELECT i.id, ${selectList(INVOCATION, 'i', { id: 'i.source_ref', hook_set_id: 'm.local_id' })}
  FROM invocations i LEFT JOIN ship_hook_sets m ON m.source_id = i.writer_id AND m.hook_set_id = i.hook_set_id
  WHERE i.writer_id = $1 AND i.id > $2 ORDER BY i.id LIMIT $3`;
const SELECT_OUTCOMES = `SELECT o.id, ${selectList(OUTCOME, 'o', { id: 'o.source_ref', invocation_id: 'i.source_ref' })}
  FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
  WHERE i.writer_id = $1 AND o.id > $2 ORDER BY o.id LIMIT $3`;
const SELECT_CHECKPOINTS = `SELECT p.id, ${selectList(CHECKPOINT, 'p', { id: 'p.source_ref' })}
  FROM prune_checkpoints p WHERE p.source_id = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`;
const SELECT_LINKS = `SELECT seq, seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE writer_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`;
const SELECT_HOOK_SETS = `SELECT ${selectList(HOOK_SET, 'h', { id: 'm.local_id' })}
  FROM ship_hook_sets m JOIN hook_sets h ON h.id = m.hook_set_id WHERE m.source_id = $1 ORDER BY m.local_id`;

export interface SourceVerifyOptions {
  batchSize?: number;
  maxProblems?: number;
  /** Runs of links a central prune removed, per writer (a source's id among them): its gaps are then accounted for. */
  prunedRuns?: Map<string, [number, number, string][]>;
}

const insert = (table: string, names: string[]) => `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;

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
    // Triggers keep report caches; a scratch copy has no reports.
    for (const name of s.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).pluck().all() as string[])
      s.exec(`DROP TRIGGER "${name}"`);
    const copy = async (text: string, target: string, names: string[], keyed: boolean) => {
      const statement = s.prepare(insert(target, names));
      let after = 0;
      for (;;) {
        const rows = (
          await client.query<unknown[]>({ text, values: keyed ? [source.id, after, batchSize] : [source.id], rowMode: 'array' })
        ).rows;
        if (rows.length === 0) return;
        s.transaction(() => {
          for (const row of rows) statement.run(keyed ? row.slice(1) : row);
        })();
        if (!keyed) return;
        after = rows[rows.length - 1]![0] as number;
      }
    };
    await copy(SELECT_HOOK_SETS, 'hook_sets', HOOK_SET, false);
    await copy(SELECT_INVOCATIONS, 'invocations', INVOCATION, true);
    await copy(SELECT_OUTCOMES, 'outcomes', OUTCOME, true);
    await copy(SELECT_CHECKPOINTS, 'prune_checkpoints', CHECKPOINT, true);
    await copy(SELECT_LINKS, 'chain', ['seq', 'kind', 'ref_id', 'prev_hash', 'hash', 'at', 'rows'], true);
    const report = verifyLedger(scratch, {
      ...(options.maxProblems !== undefined ? { maxProblems: options.maxProblems } : {}),
      anchor: { seq: source.head_seq, hash: source.head_hash },
      prunedElsewhere: options.prunedRuns?.get(source.id) ?? [],
    });
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
