import type pg from 'pg';
import {
  CHECKPOINT_REMOVED,
  CHECKPOINT_SELECT,
  checkpointEntry,
  GENESIS_HASH,
  INVOCATION_SELECT,
  invocationEntry,
  linkHash,
  OUTCOME_ID,
  OUTCOME_SELECT,
  outcomeEntry,
  OUTCOMES_OF_INVOCATION_SELECT,
  parseRowsText,
  type RawRow,
  type RowEntry,
} from '../integrity.js';
import {
  diagnoseInvocationLink,
  PrunedRanges,
  removedRunsOf,
  uncommittedCompletion,
  type IntegrityProblem,
  type VerifyReport,
  type WriterChain,
} from '../verify.js';

export type { WriterChain } from '../verify.js';
import { orphanOutcomes } from './verify-orphans.js';
import { verifyShippedSources } from './verify-sources.js';

/** A problem, with the writer whose chain it is in (null: a row no writer's chain covers). */
export interface PostgresIntegrityProblem extends IntegrityProblem {
  writer: string | null;
}

/** What `verifyPostgres` reports: the engine-neutral report, with every writer's chain. */
export interface PostgresVerifyReport extends VerifyReport {
  writers: WriterChain[];
  problems: PostgresIntegrityProblem[];
}

/** A problem of one writer's chain: the writer named, in the problem and first in its line. */
function ofWriter(writer: string, problem: IntegrityProblem): PostgresIntegrityProblem {
  return { ...problem, writer, detail: `writer ${writer}: ${problem.detail}` };
}

type LinkRow = [seq: number, kind: string, refId: number, prevHash: string, hash: string, at: number, rows: string];

/** `?` placeholders as PostgreSQL's `$1`, and `decisive` as the 0/1 the chain encodes (PostgreSQL stores a boolean). */
function pgSelect(sqliteText: string): string {
  return sqliteText.replace('?', '$1').replace(/\bdecisive,/, 'decisive::int,');
}
const SELECT_INVOCATION = pgSelect(INVOCATION_SELECT);
const SELECT_OUTCOMES = pgSelect(OUTCOMES_OF_INVOCATION_SELECT);
const SELECT_OUTCOME = pgSelect(OUTCOME_SELECT);
const SELECT_CHECKPOINT = pgSelect(CHECKPOINT_SELECT);

/**
 * The runs of links that intact prune checkpoints removed, per writer (ledger/postgres/prune.ts
 * records each run with the writer whose chain it was in). Read before the walk: a gap early in
 * a chain is explained by a checkpoint later in it, or in another writer's chain.
 */
async function readPrunedRanges(
  rows: (text: string, values: unknown[]) => Promise<RawRow[]>,
  /** Filled with the same runs as listed, per writer (a shipped source's are verified apart: verify-sources.ts). */
  runs = new Map<string, [number, number, string][]>(),
): Promise<Map<string, PrunedRanges>> {
  const pruned = new Map<string, PrunedRanges>();
  for (const [seq, kind, refId, prevHash, hash, at] of (await rows(
    `SELECT seq, kind, ref_id, prev_hash, hash, at FROM chain WHERE kind = 'checkpoint' AND writer_id NOT IN (SELECT id FROM ship_sources)
     ORDER BY writer_id, seq`,
    [],
  )) as LinkRow[]) {
    const [row] = await rows(SELECT_CHECKPOINT, [refId]);
    if (!row || linkHash(prevHash, seq, kind, refId, at, [checkpointEntry(row)]) !== hash) continue;
    for (const [first, last, end, writer] of removedRunsOf(row[CHECKPOINT_REMOVED] as string)) {
      if (typeof writer !== 'string') continue;
      let ranges = pruned.get(writer);
      if (!ranges) pruned.set(writer, (ranges = new PrunedRanges()));
      ranges.addRun(first, last, end);
      if (!runs.has(writer)) runs.set(writer, []);
      runs.get(writer)!.push([first, last, end]);
    }
  }
  return pruned;
}

/**
 * Checks every writer's tamper-evidence chain: walks each writer's links in seq order,
 * recomputes each hash from the rows it covers and the writer's previous link (the encoding of
 * ledger/integrity.ts, as on SQLite), checks the writer's recorded head, then looks for rows no
 * link covers. One REPEATABLE READ snapshot, so writers carry on meanwhile. Every problem names
 * the writer it belongs to; the first is the first broken record of the first broken chain.
 * Gaps that prune checkpoints account for (a prune removed those links) are not problems.
 */
export async function verifyPostgres(
  pool: pg.Pool,
  location: string,
  options: { batchSize?: number; maxProblems?: number } = {},
): Promise<PostgresVerifyReport> {
  const started = Date.now();
  const batchSize = options.batchSize ?? 1000;
  const maxProblems = options.maxProblems ?? 100;
  const problems: PostgresIntegrityProblem[] = [];
  let problemCount = 0;
  const report = (p: PostgresIntegrityProblem) => {
    problemCount++;
    if (problems.length < maxProblems) problems.push(p);
  };
  const client = await pool.connect();
  const rows = async (text: string, values: unknown[]): Promise<RawRow[]> =>
    (await client.query<RawRow>({ text, values, rowMode: 'array' })).rows;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const records = { invocations: 0, backgroundOutcomes: 0, checkpoints: 0 };
    const prunedRuns = new Map<string, [number, number, string][]>();
    const pruned = await readPrunedRanges(rows, prunedRuns);
    const writers: WriterChain[] = [];
    let links = 0;
    // Shipped sources (docs/ship.md) are verified as their source would, below.
    const sources = new Set((await rows('SELECT id FROM ship_sources', [])).map((r) => r[0] as string));
    const writerRows = (await rows('SELECT id, head_seq, head_hash FROM writers ORDER BY id', [])).filter(
      (r) => !sources.has(r[0] as string),
    );
    const chainWriters = (await rows('SELECT DISTINCT writer_id FROM chain ORDER BY writer_id', []))
      .map((r) => r[0] as string)
      .filter((w) => !sources.has(w));
    const known = new Set(writerRows.map((r) => r[0] as string));
    for (const writer of chainWriters)
      if (!known.has(writer))
        report({
          kind: 'removed',
          table: 'chain',
          id: 0,
          seq: null,
          writer,
          detail: `writer ${writer} has chain links but no writers row (its head was deleted)`,
        });

    for (const [writer, headSeq, headHash] of [...writerRows, ...chainWriters.filter((w) => !known.has(w)).map((w) => [w, null, null])] as [
      string,
      number | null,
      string | null,
    ][]) {
      let prev = { seq: 0, hash: GENESIS_HASH, label: 'the start of the chain', table: 'chain' as IntegrityProblem['table'], id: 0 };
      let count = 0;
      for (;;) {
        const batch = (await rows(
          'SELECT seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE writer_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
          [writer, prev.seq, batchSize],
        )) as LinkRow[];
        if (batch.length === 0) break;
        for (const [seq, kind, refId, prevHash, hash, at, rowsText] of batch) {
          count++;
          let expected = prev.hash;
          const end = seq === prev.seq + 1 ? undefined : pruned.get(writer)?.endHash(prev.seq + 1, seq - 1);
          if (end !== undefined) expected = end;
          else if (seq !== prev.seq + 1) {
            report({
              kind: 'removed',
              table: 'chain',
              id: prev.seq + 1,
              seq: prev.seq + 1,
              writer,
              detail: `writer ${writer}: chain links ${prev.seq + 1}..${seq - 1} are missing and no prune checkpoint accounts for them (records deleted with their links)`,
            });
            expected = prevHash;
          }
          if (prevHash !== expected) {
            report({
              kind: 'changed',
              table: prev.table,
              id: prev.id,
              seq: prev.seq,
              writer,
              detail: `writer ${writer}: ${prev.label}: its link ${prev.seq} was rewritten or replaced (link ${seq} does not follow it)`,
            });
          }
          const ref = await checkLink(writer, kind, refId, seq, prevHash, hash, at, rowsText);
          prev = { seq, hash, ...ref };
        }
      }
      links += count;
      // The newest links of a writer that wrote nothing since may have been pruned: its head is then the end of a pruned run.
      const headPruned = headSeq !== null && headSeq > prev.seq && pruned.get(writer)?.endHash(prev.seq + 1, headSeq) === headHash;
      if (headPruned) prev = { ...prev, seq: headSeq, hash: headHash! };
      else if (headSeq !== null && (headSeq !== prev.seq || headHash !== prev.hash)) {
        report({
          kind: headSeq > prev.seq ? 'removed' : 'changed',
          table: 'chain',
          id: headSeq,
          seq: headSeq,
          writer,
          detail: `writer ${writer}: its recorded head is link ${headSeq} but the chain ends at link ${prev.seq}${headSeq > prev.seq ? ' (the last links were deleted)' : ''}`,
        });
      }
      writers.push({ writer, links: count, head: { seq: prev.seq, hash: prev.hash } });
    }

    async function checkLink(
      writer: string,
      kind: string,
      refId: number,
      seq: number,
      prevHash: string,
      hash: string,
      at: number,
      rowsText: string,
    ): Promise<{ label: string; table: IntegrityProblem['table']; id: number }> {
      if (kind === 'invocation') {
        records.invocations++;
        const [row] = await rows(SELECT_INVOCATION, [refId]);
        if (!row) {
          report({
            kind: 'removed',
            table: 'invocations',
            id: refId,
            seq,
            writer,
            detail: `writer ${writer}: invocation #${refId} (link ${seq}) is gone`,
          });
          return { label: `invocation #${refId}`, table: 'invocations', id: refId };
        }
        const stored = parseRowsText(rowsText);
        const outcomes = await rows(SELECT_OUTCOMES, [refId]);
        const entries: RowEntry[] = [invocationEntry(row)];
        for (const o of outcomes) entries.push(outcomeEntry(o, stored.get(`o${o[OUTCOME_ID] as number}`)?.pending ?? false));
        if (linkHash(prevHash, seq, kind, refId, at, entries) !== hash) {
          for (const problem of diagnoseInvocationLink(refId, seq, stored, entries)) report(ofWriter(writer, problem));
          return { label: `invocation #${refId}`, table: 'invocations', id: refId };
        }
        for (const o of outcomes) {
          const id = o[OUTCOME_ID] as number;
          if (!stored.get(`o${id}`)?.pending) continue;
          if ((await rows(`SELECT 1 FROM chain WHERE kind = 'background' AND ref_id = $1 AND writer_id = $2`, [id, writer])).length > 0)
            continue;
          const problem = uncommittedCompletion(o, refId, seq);
          if (problem) report(ofWriter(writer, problem));
        }
        return { label: `invocation #${refId}`, table: 'invocations', id: refId };
      }
      if (kind === 'background') {
        records.backgroundOutcomes++;
        const [row] = await rows(SELECT_OUTCOME, [refId]);
        if (!row)
          report({
            kind: 'removed',
            table: 'outcomes',
            id: refId,
            seq,
            writer,
            detail: `writer ${writer}: background outcome #${refId} (link ${seq}) is gone`,
          });
        else if (linkHash(prevHash, seq, kind, refId, at, [outcomeEntry(row, false)]) !== hash)
          report({
            kind: 'changed',
            table: 'outcomes',
            id: refId,
            seq,
            writer,
            detail: `writer ${writer}: background outcome #${refId} differs from what was committed (link ${seq})`,
          });
        return { label: `background outcome #${refId}`, table: 'outcomes', id: refId };
      }
      if (kind === 'checkpoint') {
        records.checkpoints++;
        const [row] = await rows(SELECT_CHECKPOINT, [refId]);
        if (!row)
          report({
            kind: 'removed',
            table: 'prune_checkpoints',
            id: refId,
            seq,
            writer,
            detail: `writer ${writer}: prune checkpoint #${refId} (link ${seq}) is gone`,
          });
        else if (linkHash(prevHash, seq, kind, refId, at, [checkpointEntry(row)]) !== hash)
          report({
            kind: 'changed',
            table: 'prune_checkpoints',
            id: refId,
            seq,
            writer,
            detail: `writer ${writer}: prune checkpoint #${refId} differs from what was committed (link ${seq})`,
          });
        return { label: `prune checkpoint #${refId}`, table: 'prune_checkpoints', id: refId };
      }
      report({
        kind: 'changed',
        table: 'chain',
        id: seq,
        seq,
        writer,
        detail: `writer ${writer}: link ${seq} has an unknown kind "${kind}"`,
      });
      return { label: `link ${seq}`, table: 'chain', id: seq };
    }

    // Rows no link covers.
    let uncommitted = 0;
    for (const [id, status, decision, hasOutcomes, writer] of await rows(
      `SELECT i.id, i.status, i.decision, EXISTS (SELECT 1 FROM outcomes o WHERE o.invocation_id = i.id), i.writer_id FROM invocations i
       WHERE NOT EXISTS (SELECT 1 FROM chain c WHERE c.kind = 'invocation' AND c.ref_id = i.id AND c.writer_id = i.writer_id)
         AND i.writer_id NOT IN (SELECT id FROM ship_sources) ORDER BY i.id`,
      [],
    )) {
      if ((status === 'running' || status === 'interrupted') && decision === null && hasOutcomes === false) uncommitted++;
      else
        report({
          kind: 'inserted',
          table: 'invocations',
          id: id as number,
          seq: null,
          writer: writer as string,
          detail: `invocation #${id as number} (${status as string}, decision ${(decision as string | null) ?? 'none'}) has no chain link: it was not committed by hookledger`,
        });
    }
    for (const [id] of await rows(
      `SELECT id FROM prune_checkpoints p WHERE NOT EXISTS (SELECT 1 FROM chain c WHERE c.kind = 'checkpoint' AND c.ref_id = p.id)
         AND p.source_id IS NULL ORDER BY id`,
      [],
    ))
      report({
        kind: 'inserted',
        table: 'prune_checkpoints',
        id: id as number,
        seq: null,
        writer: null,
        detail: `prune checkpoint #${id as number} has no chain link`,
      });
    // Outcomes whose invocation is gone (PostgreSQL does not enforce the reference: verify-orphans.ts).
    const orphans = await orphanOutcomes(rows, maxProblems);
    for (const problem of orphans.problems) report(problem);
    problemCount += orphans.count - orphans.problems.length;
    for (const source of await verifyShippedSources(client, { maxProblems, prunedRuns })) {
      links += source.links;
      records.invocations += source.records.invocations;
      records.backgroundOutcomes += source.records.backgroundOutcomes;
      records.checkpoints += source.records.checkpoints;
      writers.push({ writer: source.source, links: source.links, head: source.head });
      for (const problem of source.problems) report(problem);
      problemCount += source.problemCount - source.problems.length;
    }
    await client.query('COMMIT');
    return {
      ok: problemCount === 0,
      location,
      links,
      records,
      prunedLinks: [...pruned.values()].reduce((n, ranges) => n + ranges.count, 0),
      uncommitted,
      writers,
      problems,
      problemCount,
      durationMs: Date.now() - started,
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
