import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { IntegrityError } from '../domain/errors.js';
import {
  checkpointEntry,
  CHECKPOINT_REMOVED,
  CHECKPOINT_SELECT,
  GENESIS_HASH,
  INVOCATION_SELECT,
  invocationEntry,
  linkHash,
  linkHashOfText,
  OUTCOME_ID,
  OUTCOME_SELECT,
  OUTCOME_STATUS,
  outcomeEntry,
  OUTCOMES_OF_INVOCATION_SELECT,
  parseRowsText,
  RESULT_COLUMNS,
  type RawRow,
  type RowEntry,
} from './integrity.js';
import { invocationLinkTextSql } from './link-text-sql.js';
import type { Ledger } from './open.js';
import { walkChunks } from './verify-threads.js';

/** What is wrong with one record. */
export interface IntegrityProblem {
  /** changed: the row differs from what was committed; inserted: a row no link accounts for; removed: a link whose row is gone. */
  kind: 'changed' | 'inserted' | 'removed';
  table: 'invocations' | 'outcomes' | 'prune_checkpoints' | 'hook_sets' | 'chain';
  /** The row's id (for `chain`, the link's seq). */
  id: number;
  /** The chain link that covers (or should cover) the row, when there is one. */
  seq: number | null;
  /** One line saying what is wrong. */
  detail: string;
  /**
   * On an engine with one chain per writer (PostgreSQL): the writer whose chain covers the record
   * (null: a row no writer's chain covers). Absent where the ledger has one chain (SQLite).
   */
  writer?: string | null;
}

/** One writer's chain, on an engine where each writer appends its own (PostgreSQL). */
export interface WriterChain {
  writer: string;
  /** Links walked in this writer's chain. */
  links: number;
  /** Its last link. */
  head: { seq: number; hash: string };
}

/** What `verify` found, on either engine. */
export interface VerifyReport {
  ok: boolean;
  /** Where the ledger is, fit to print (a file path, or a URL without its password). */
  location: string;
  /** Links walked. */
  links: number;
  /** Records the walked links cover, by kind. */
  records: { invocations: number; backgroundOutcomes: number; checkpoints: number };
  /** Links that prune checkpoints account for (no longer in the ledger). */
  prunedLinks: number;
  /** Invocations written `running` whose decision was never committed (a crash): not part of the chain. */
  uncommitted: number;
  /** The last link, where the ledger has one chain (SQLite; `verify --anchor` keeps it). */
  head?: { seq: number; hash: string };
  /** Each writer's chain, where every writer appends its own (PostgreSQL), in writer id order. */
  writers?: WriterChain[];
  /** The first problems found, in chain order, then rows no link covers. The first is the first broken record. */
  problems: IntegrityProblem[];
  /** All problems found (`problems` is capped). */
  problemCount: number;
  /** Present when an anchor was given. */
  anchor?: AnchorCheck;
  durationMs: number;
}

/** SQLite's report: one chain, so always a head; `path` is the file (the same as `location`). */
export interface SqliteVerifyReport extends VerifyReport {
  path: string;
  head: { seq: number; hash: string };
}

/** A chain head written outside the database (`verify --anchor FILE`). */
export interface Anchor {
  seq: number;
  hash: string;
  /** ISO time the anchor was written. */
  at?: string;
}

export interface AnchorCheck {
  seq: number;
  hash: string;
  /** match: the link is there, unchanged; pruned: the link was pruned (checked against the checkpoint when possible); mismatch: the chain was rewritten or cut. */
  status: 'match' | 'pruned' | 'mismatch';
}

export interface VerifyOptions {
  /** Links read per batch. Default 1000. */
  batchSize?: number;
  /** Problems kept in the report. Default 100. */
  maxProblems?: number;
  /** A head recorded earlier outside the database: the chain must still contain it. */
  anchor?: Anchor;
  /**
   * Runs of links removed by prunes recorded elsewhere, as [first, last, hash of last]: a central
   * ledger's prune of a shipped source's records (ledger/postgres/verify-sources.ts).
   */
  prunedElsewhere?: readonly (readonly [number, number, string])[];
  /**
   * Threads that walk the chain: this one and `threads - 1` worker threads, each reading the
   * ledger file on its own connection. Default: the machine's parallelism (at most 4) when the
   * chain has at least 50,000 links, else 1. The report is the same whatever the number.
   */
  threads?: number;
  /**
   * Links a thread claims at a time when the walk is split. Default 4096 (about 70 ms of one
   * core): small enough that no core waits long for the last chunk, large enough that claiming
   * costs nothing.
   */
  chunkLinks?: number;
  /** When split, this thread walks only what the workers could not (tests use it to make workers walk a small chain). */
  workersOnly?: boolean;
}

/**
 * A chain row; walk only: `text` is an invocation link's hashed text as SQLite built it
 * (link-text-sql.ts), `outcomes` how many outcome rows carry its ref_id as invocation_id.
 */
type LinkRow = [
  seq: number,
  kind: string,
  refId: number,
  prevHash: string,
  hash: string,
  at: number,
  rows: string,
  text?: Buffer | null,
  outcomes?: number,
];

/** The statements verify reads with, prepared once per run. */
interface VerifyStatements {
  linksBetween: Database.Statement<[number, number, number], LinkRow>;
  linkBefore: Database.Statement<[number], [seq: number, kind: string, refId: number, hash: string]>;
  firstSeq: Database.Statement<[], number>;
  checkpointLinks: Database.Statement<[], LinkRow>;
  invocation: Database.Statement<[number], RawRow>;
  outcomesOf: Database.Statement<[number], RawRow>;
  outcome: Database.Statement<[number], RawRow>;
  checkpoint: Database.Statement<[number], RawRow>;
  backgroundLinked: Database.Statement<[number], number>;
}

/** The record a link covers, to name it when the next link does not follow it. */
interface Ref {
  label: string;
  table: IntegrityProblem['table'];
  id: number;
}

/** What walking one run of the chain found; runs walked apart add up to the report of one walk. */
export interface RangeResult {
  links: number;
  records: VerifyReport['records'];
  /** The first problems (at most maxProblems), in chain order. */
  problems: IntegrityProblem[];
  problemCount: number;
  /** Invocations whose link remains but whose row is gone: their outcomes are not reported again as orphans. */
  removedInvocations: number[];
  /** Outcome rows of the walked invocation links whose invocation row is there (to skip the orphan scan when they are all). */
  linkedOutcomes: number;
}

/** What walking the chain on one connection needs. */
export interface ChainWalker {
  readonly q: VerifyStatements;
  readonly batchSize: number;
  readonly maxProblems: number;
  /** Link runs that prune checkpoints removed (read first: a gap early in the chain is explained by a checkpoint later in it). */
  readonly pruned: PrunedRanges;
}

/** What one run of the walk accumulates. */
interface WalkState {
  readonly w: ChainWalker;
  readonly result: RangeResult;
  /** The last link walked and the record it covers. */
  prev: { seq: number; hash: string } & Ref;
}

/** Everything the steps after the walk accumulate (on the connection of the snapshot). */
interface VerifyState {
  readonly s: Database.Database;
  readonly q: VerifyStatements;
  readonly maxProblems: number;
  problems: IntegrityProblem[];
  problemCount: number;
  pruned: PrunedRanges;
  removedInvocations: Set<number>;
}

/**
 * Checks the tamper-evidence chain: walks every link in seq order, recomputes its hash from
 * the rows it covers and the previous link, and then looks for rows no link covers. Reads one
 * snapshot (a read transaction), so writers carry on meanwhile. Does not throw on a broken
 * ledger: the report says what is wrong (see `assertIntact`).
 */
export function verifyLedger(ledger: Ledger, options: VerifyOptions = {}): SqliteVerifyReport {
  const started = Date.now();
  const s = ledger.sqlite;
  const q = prepareStatements(s);
  const maxProblems = options.maxProblems ?? 100;
  return s
    .transaction((): SqliteVerifyReport => {
      const walker: ChainWalker = {
        q,
        batchSize: options.batchSize ?? 1000,
        maxProblems,
        pruned: readPrunedRanges(q, options.prunedElsewhere ?? []),
      };
      const head = (s.prepare('SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1').get() as
        { seq: number; hash: string } | undefined) ?? { seq: 0, hash: GENESIS_HASH };
      const walked = walkChain(ledger, walker, head, options);
      const state: VerifyState = {
        s,
        q,
        maxProblems,
        problems: walked.problems,
        problemCount: walked.problemCount,
        pruned: walker.pruned,
        removedInvocations: new Set(walked.removedInvocations),
      };
      const unique = linksAreUnique(s);
      const uncommitted = unique && everyInvocationLinked(s, walked) ? 0 : checkUnlinkedInvocations(state);
      if (!unique || !everyOutcomeLinked(s, walked)) checkOrphanOutcomes(state);
      checkUnlinkedCheckpoints(state);
      checkHookSets(state);
      const anchor = options.anchor ? checkAnchorStep(state, options.anchor, head) : undefined;
      return {
        ok: state.problemCount === 0,
        location: ledger.path,
        path: ledger.path,
        links: walked.links,
        records: walked.records,
        prunedLinks: walker.pruned.count,
        uncommitted,
        head,
        problems: state.problems,
        problemCount: state.problemCount,
        ...(anchor ? { anchor } : {}),
        durationMs: Date.now() - started,
      };
    })
    .deferred();
}

/** A chain of at least this many links is walked by several threads unless `threads` says otherwise. */
const PARALLEL_FROM_LINKS = 50_000;

/**
 * Step 2: every link up to the head, in seq order: on this connection, or split into chunks of
 * seqs that this thread and worker threads walk at once (verify-threads.ts), added up in order.
 */
function walkChain(ledger: Ledger, walker: ChainWalker, head: { seq: number; hash: string }, options: VerifyOptions): RangeResult {
  const first = head.seq === 0 ? 0 : (walker.q.firstSeq.get() ?? 0);
  const span = head.seq - first + 1;
  const threads = options.threads ?? (span >= PARALLEL_FROM_LINKS ? Math.min(4, availableParallelism()) : 1);
  if (threads <= 1 || head.seq === 0 || ledger.path === ':memory:' || ledger.path === '') return walkRange(walker, 1, head.seq);
  const size = Math.max(1, options.chunkLinks ?? 4_096);
  const chunks: [number, number][] = [];
  for (let at = first; at <= head.seq; at += size) chunks.push([at, Math.min(head.seq, at + size - 1)]);
  const results = walkChunks({
    path: ledger.path,
    head,
    chunks,
    workers: threads - 1,
    prunedRuns: walker.pruned.runs(),
    batchSize: walker.batchSize,
    maxProblems: walker.maxProblems,
    walkHere: (chunk) => walkRange(walker, chunk[0], chunk[1]),
    workersOnly: options.workersOnly ?? false,
  });
  return addRanges(results, walker.maxProblems);
}

/** Results of consecutive runs of the chain, in order, as one. */
function addRanges(results: readonly RangeResult[], maxProblems: number): RangeResult {
  const total = emptyRange();
  for (const r of results) {
    total.links += r.links;
    total.records.invocations += r.records.invocations;
    total.records.backgroundOutcomes += r.records.backgroundOutcomes;
    total.records.checkpoints += r.records.checkpoints;
    total.problemCount += r.problemCount;
    for (const p of r.problems) if (total.problems.length < maxProblems) total.problems.push(p);
    for (const id of r.removedInvocations) total.removedInvocations.push(id);
    total.linkedOutcomes += r.linkedOutcomes;
  }
  return total;
}

function emptyRange(): RangeResult {
  return {
    links: 0,
    records: { invocations: 0, backgroundOutcomes: 0, checkpoints: 0 },
    problems: [],
    problemCount: 0,
    removedInvocations: [],
    linkedOutcomes: 0,
  };
}

/** What walking the chain on connection `s` needs (a worker thread builds its own). */
export function chainWalker(
  s: Database.Database,
  options: { batchSize: number; maxProblems: number; prunedRuns: readonly (readonly [number, number, string])[] },
): ChainWalker {
  const pruned = new PrunedRanges();
  for (const [first, last, hash] of options.prunedRuns) pruned.addRun(first, last, hash);
  return { q: prepareStatements(s), batchSize: options.batchSize, maxProblems: options.maxProblems, pruned };
}

/**
 * Walks the links with seqs first..last, starting from the link before them (or the start of the
 * chain): each follows the one before it and matches the rows it covers. The links before a
 * run are never read beyond the last one (its prev_hash is stored in the next link), so runs
 * walked apart find exactly what one walk finds, in the same order.
 */
export function walkRange(w: ChainWalker, first: number, last: number): RangeResult {
  const before = first > 1 ? w.q.linkBefore.get(first) : undefined;
  const state: WalkState = {
    w,
    result: emptyRange(),
    prev: before
      ? { seq: before[0], hash: before[3], ...refOf(before[0], before[1], before[2]) }
      : { seq: 0, hash: GENESIS_HASH, label: 'the start of the chain', table: 'chain', id: 0 },
  };
  for (;;) {
    const batch = w.q.linksBetween.all(state.prev.seq, last, w.batchSize);
    if (batch.length === 0) return state.result;
    for (const link of batch) followLink(state, link);
  }
}

function prepareStatements(s: Database.Database): VerifyStatements {
  return {
    linksBetween: s
      .prepare(
        `SELECT c.seq, c.kind, c.ref_id, c.prev_hash, c.hash, c.at, c.rows, ${invocationLinkTextSql()}, count(o.id)
         FROM chain c LEFT JOIN invocations i ON c.kind = 'invocation' AND i.id = c.ref_id LEFT JOIN hook_sets h ON h.id = i.hook_set_id
           LEFT JOIN outcomes o ON c.kind = 'invocation' AND o.invocation_id = c.ref_id
         WHERE c.seq > ? AND c.seq <= ? GROUP BY c.seq ORDER BY c.seq LIMIT ?`,
      )
      .raw() as Database.Statement<[number, number, number], LinkRow>,
    linkBefore: s
      .prepare('SELECT seq, kind, ref_id, hash FROM chain WHERE seq < ? ORDER BY seq DESC LIMIT 1')
      .raw() as VerifyStatements['linkBefore'],
    firstSeq: s.prepare('SELECT seq FROM chain ORDER BY seq LIMIT 1').pluck() as Database.Statement<[], number>,
    checkpointLinks: s
      .prepare(`SELECT seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE kind = 'checkpoint' ORDER BY seq`)
      .raw() as Database.Statement<[], LinkRow>,
    invocation: s.prepare(INVOCATION_SELECT).raw() as Database.Statement<[number], RawRow>,
    outcomesOf: s.prepare(OUTCOMES_OF_INVOCATION_SELECT).raw() as Database.Statement<[number], RawRow>,
    outcome: s.prepare(OUTCOME_SELECT).raw() as Database.Statement<[number], RawRow>,
    checkpoint: s.prepare(CHECKPOINT_SELECT).raw() as Database.Statement<[number], RawRow>,
    backgroundLinked: s.prepare(`SELECT 1 FROM chain WHERE kind = 'background' AND ref_id = ?`).pluck() as Database.Statement<
      [number],
      number
    >,
  };
}

function report(state: VerifyState, problem: IntegrityProblem): void {
  state.problemCount++;
  if (state.problems.length < state.maxProblems) state.problems.push(problem);
}

function reportInWalk(state: WalkState, problem: IntegrityProblem): void {
  state.result.problemCount++;
  if (state.result.problems.length < state.w.maxProblems) state.result.problems.push(problem);
}

/** Step 1: the runs of links that intact prune checkpoints account for. */
function readPrunedRanges(q: VerifyStatements, elsewhere: readonly (readonly [number, number, string])[]): PrunedRanges {
  const pruned = new PrunedRanges();
  for (const [first, last, hash] of elsewhere) pruned.addRun(first, last, hash);
  for (const link of q.checkpointLinks.all()) {
    const row = q.checkpoint.get(link[2]);
    if (row && linkHash(link[3], link[0], link[1], link[2], link[5], [checkpointEntry(row)]) === link[4])
      pruned.add(row[CHECKPOINT_REMOVED] as string);
  }
  return pruned;
}

/** A link's place in the chain: no unexplained gap before it, and its prev_hash is the previous link's hash. */
function followLink(state: WalkState, link: LinkRow): void {
  const [seq, , , prevHash, hash] = link;
  const prev = state.prev;
  state.result.links++;
  let expected = prev.hash;
  if (seq !== prev.seq + 1) {
    const end = state.w.pruned.endHash(prev.seq + 1, seq - 1);
    if (end !== undefined) expected = end;
    else {
      reportInWalk(state, {
        kind: 'removed',
        table: 'chain',
        id: prev.seq + 1,
        seq: prev.seq + 1,
        detail: `chain links ${prev.seq + 1}..${seq - 1} are missing and no prune checkpoint accounts for them (records deleted with their links)`,
      });
      expected = prevHash;
    }
  }
  if (prevHash !== expected) {
    reportInWalk(state, {
      kind: 'changed',
      table: prev.table,
      id: prev.id,
      seq: prev.seq,
      detail: `${prev.label}: its link ${prev.seq} was rewritten or replaced (link ${seq} does not follow it)`,
    });
  }
  state.prev = { seq, hash, ...checkLink(state, link) };
}

/** The rows a link covers still hash to it. */
function checkLink(state: WalkState, link: LinkRow): Ref {
  const [seq, kind, refId] = link;
  if (kind === 'invocation') checkInvocationLink(state, link);
  else if (kind === 'background') checkBackgroundLink(state, link);
  else if (kind === 'checkpoint') checkCheckpointLink(state, link);
  else reportInWalk(state, { kind: 'changed', table: 'chain', id: seq, seq, detail: `link ${seq} has an unknown kind "${kind}"` });
  return refOf(seq, kind, refId);
}

/** The record a link covers, as problems name it. */
function refOf(seq: number, kind: string, refId: number): Ref {
  if (kind === 'invocation') return { label: `invocation #${refId}`, table: 'invocations', id: refId };
  if (kind === 'background') return { label: `background outcome #${refId}`, table: 'outcomes', id: refId };
  if (kind === 'checkpoint') return { label: `prune checkpoint #${refId}`, table: 'prune_checkpoints', id: refId };
  return { label: `link ${seq}`, table: 'chain', id: seq };
}

function checkInvocationLink(state: WalkState, [seq, kind, refId, prevHash, hash, at, rowsText, text, outcomeCount]: LinkRow): void {
  state.result.records.invocations++;
  // Most links: SQLite built the hashed text; the rows are read into JavaScript only when it
  // could not (or the hash differs, to name what changed).
  if (text && linkHashOfText(text) === hash) {
    state.result.linkedOutcomes += outcomeCount ?? 0;
    return;
  }
  const row = state.w.q.invocation.get(refId);
  if (!row) {
    state.result.removedInvocations.push(refId);
    reportInWalk(state, { kind: 'removed', table: 'invocations', id: refId, seq, detail: `invocation #${refId} (link ${seq}) is gone` });
    return;
  }
  const stored = parseRowsText(rowsText);
  const outcomes = state.w.q.outcomesOf.all(refId);
  state.result.linkedOutcomes += outcomes.length;
  const entries: RowEntry[] = [invocationEntry(row)];
  for (const o of outcomes) entries.push(outcomeEntry(o, stored.get(`o${o[OUTCOME_ID] as number}`)?.pending ?? false));
  if (linkHash(prevHash, seq, kind, refId, at, entries) !== hash) diagnose(state, refId, seq, stored, entries);
  else checkUnfinishedBackground(state, refId, seq, stored, outcomes);
}

/** Background outcomes pending when their invocation committed and never completed through hookledger carry no result. */
function checkUnfinishedBackground(
  state: WalkState,
  invocationId: number,
  seq: number,
  stored: ReturnType<typeof parseRowsText>,
  outcomes: RawRow[],
): void {
  for (const o of outcomes) {
    const id = o[OUTCOME_ID] as number;
    if (!stored.get(`o${id}`)?.pending || state.w.q.backgroundLinked.get(id) !== undefined) continue;
    const problem = uncommittedCompletion(o, invocationId, seq);
    if (problem) reportInWalk(state, problem);
  }
}

function checkBackgroundLink(state: WalkState, [seq, kind, refId, prevHash, hash, at]: LinkRow): void {
  state.result.records.backgroundOutcomes++;
  const row = state.w.q.outcome.get(refId);
  if (!row)
    reportInWalk(state, {
      kind: 'removed',
      table: 'outcomes',
      id: refId,
      seq,
      detail: `background outcome #${refId} (link ${seq}) is gone`,
    });
  else if (linkHash(prevHash, seq, kind, refId, at, [outcomeEntry(row, false)]) !== hash) {
    reportInWalk(state, {
      kind: 'changed',
      table: 'outcomes',
      id: refId,
      seq,
      detail: `background outcome #${refId} differs from what was committed (link ${seq})`,
    });
  }
}

function checkCheckpointLink(state: WalkState, [seq, kind, refId, prevHash, hash, at]: LinkRow): void {
  state.result.records.checkpoints++;
  const row = state.w.q.checkpoint.get(refId);
  if (!row)
    reportInWalk(state, {
      kind: 'removed',
      table: 'prune_checkpoints',
      id: refId,
      seq,
      detail: `prune checkpoint #${refId} (link ${seq}) is gone`,
    });
  else if (linkHash(prevHash, seq, kind, refId, at, [checkpointEntry(row)]) !== hash) {
    reportInWalk(state, {
      kind: 'changed',
      table: 'prune_checkpoints',
      id: refId,
      seq,
      detail: `prune checkpoint #${refId} differs from what was committed (link ${seq})`,
    });
  }
}

/** An invocation link's hash differs: the per-row checks name the rows changed, removed or inserted. */
function diagnose(
  state: WalkState,
  invocationId: number,
  seq: number,
  stored: ReturnType<typeof parseRowsText>,
  entries: RowEntry[],
): void {
  for (const problem of diagnoseInvocationLink(invocationId, seq, stored, entries)) reportInWalk(state, problem);
}

/*
 * Steps 3 and 4 look for rows no link covers: each a scan of a table (about a second of CPU at a
 * million invocations, after a walk that other threads share). The walk already counted the rows
 * its links cover: when the tables hold no more rows than that, there is nothing to look for.
 * That holds only if no two links cover one invocation, which the unique index on (kind, ref_id)
 * guarantees (both steps also trust that index); without it, the scans always run.
 */

/** The chain's unique index on (kind, ref_id) is there: no two links cover one record. */
function linksAreUnique(s: Database.Database): boolean {
  const index = s.prepare(`SELECT "unique" FROM pragma_index_list('chain') WHERE name = 'chain_ref'`).pluck().get() as number | undefined;
  if (index !== 1) return false;
  const columns = s.prepare(`SELECT name FROM pragma_index_info('chain_ref') ORDER BY seqno`).pluck().all() as string[];
  return columns.join(',') === 'kind,ref_id';
}

/** Every invocation row is one the walk found behind its link (count(*) reads an index's size, not the table). */
function everyInvocationLinked(s: Database.Database, walked: RangeResult): boolean {
  const rows = s.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
  return rows === walked.records.invocations - walked.removedInvocations.length;
}

/** Every outcome row belongs to an invocation the walk found behind its link. */
function everyOutcomeLinked(s: Database.Database, walked: RangeResult): boolean {
  return (s.prepare('SELECT count(*) FROM outcomes').pluck().get() as number) === walked.linkedOutcomes;
}

/** Step 3: invocations no link covers. Returns how many are uncommitted (a crash before the commit), which is not tampering. */
function checkUnlinkedInvocations(state: VerifyState): number {
  // The ids alone, unordered, let SQLite scan the smallest index of invocations (half the CPU of
  // scanning the table, which ORDER BY id would choose); the few found are then read one by one.
  const ids = (
    state.s
      .prepare(`SELECT i.id FROM invocations i WHERE NOT EXISTS (SELECT 1 FROM chain c WHERE c.kind = 'invocation' AND c.ref_id = i.id)`)
      .pluck()
      .all() as number[]
  ).sort((x, y) => x - y);
  const details = state.s
    .prepare(
      `SELECT i.status, i.decision, EXISTS (SELECT 1 FROM outcomes o WHERE o.invocation_id = i.id) FROM invocations i WHERE i.id = ?`,
    )
    .raw();
  let uncommitted = 0;
  for (const id of ids) {
    const [status, decision, hasOutcomes] = details.get(id) as [string, string | null, number];
    if ((status === 'running' || status === 'interrupted') && decision === null && hasOutcomes === 0) uncommitted++;
    else
      report(state, {
        kind: 'inserted',
        table: 'invocations',
        id,
        seq: null,
        detail: `invocation #${id} (${status}, decision ${decision ?? 'none'}) has no chain link: it was not committed by hookledger`,
      });
  }
  return uncommitted;
}

/** Step 4: outcomes whose invocation does not exist (unless its removal was already reported). */
function checkOrphanOutcomes(state: VerifyState): void {
  const orphans = state.s
    .prepare('SELECT id, invocation_id FROM outcomes WHERE invocation_id NOT IN (SELECT id FROM invocations) ORDER BY id')
    .raw()
    .all() as [number, number][];
  for (const [id, invocationId] of orphans) {
    if (state.removedInvocations.has(invocationId)) continue;
    report(state, {
      kind: 'inserted',
      table: 'outcomes',
      id,
      seq: null,
      detail: `outcome #${id} belongs to no invocation (#${invocationId} does not exist)`,
    });
  }
}

/** Step 5: prune checkpoints no link covers. */
function checkUnlinkedCheckpoints(state: VerifyState): void {
  const unlinked = state.s
    .prepare(
      `SELECT id FROM prune_checkpoints p WHERE NOT EXISTS (SELECT 1 FROM chain c WHERE c.kind = 'checkpoint' AND c.ref_id = p.id) ORDER BY id`,
    )
    .pluck()
    .all() as number[];
  for (const id of unlinked)
    report(state, { kind: 'inserted', table: 'prune_checkpoints', id, seq: null, detail: `prune checkpoint #${id} has no chain link` });
}

/** Step 6: every hook set is what its fingerprint says (the chain covers only the fingerprint). */
function checkHookSets(state: VerifyState): void {
  for (const [id, fingerprint, definition, name, version, strategy] of state.s
    .prepare('SELECT id, fingerprint, definition_json, name, version, strategy FROM hook_sets ORDER BY id')
    .raw()
    .iterate() as IterableIterator<[number, string, string, string, string, string]>) {
    if (!hookSetIntact(fingerprint, definition, name, version, strategy)) {
      report(state, {
        kind: 'changed',
        table: 'hook_sets',
        id,
        seq: null,
        detail: `hook set #${id} ("${name}") does not match its fingerprint ${fingerprint.slice(0, 12)}`,
      });
    }
  }
}

/** Step 7: the chain still holds a head recorded outside the database. */
function checkAnchorStep(state: VerifyState, anchor: Anchor, head: { seq: number; hash: string }): AnchorCheck {
  const check = checkAnchor(state.s, anchor, head, state.pruned);
  if (check.status === 'mismatch') {
    report(state, {
      kind: anchor.seq > head.seq ? 'removed' : 'changed',
      table: 'chain',
      id: anchor.seq,
      seq: anchor.seq,
      detail:
        anchor.seq > head.seq
          ? `the anchor recorded link ${anchor.seq} but the chain ends at ${head.seq}: links were removed from its end`
          : `link ${anchor.seq} differs from the anchor: the chain was rewritten after the anchor was written`,
    });
  }
  return check;
}

/** Throws IntegrityError naming the first problem when the report is not ok. */
export function assertIntact(report: VerifyReport): void {
  if (report.ok) return;
  const first = report.problems[0]!;
  const more = report.problemCount > 1 ? ` (and ${report.problemCount - 1} more problem${report.problemCount > 2 ? 's' : ''})` : '';
  throw new IntegrityError(
    `integrity check failed for ${report.location}: ${first.kind} ${first.table} #${first.id}: ${first.detail}${more}`,
  );
}

/** The hook_sets row is what its fingerprint says: fingerprint = sha-256 of the stored canonical definition. */
function hookSetIntact(fingerprint: string, definition: string, name: string, version: string, strategy: string): boolean {
  if (createHash('sha256').update(definition).digest('hex') !== fingerprint) return false;
  try {
    const parsed = JSON.parse(definition) as { name?: unknown; version?: unknown; strategy?: unknown };
    return parsed.name === name && parsed.version === version && parsed.strategy === strategy;
  } catch {
    return false;
  }
}

function checkAnchor(s: Database.Database, anchor: Anchor, head: { seq: number; hash: string }, pruned: PrunedRanges): AnchorCheck {
  const base = { seq: anchor.seq, hash: anchor.hash };
  if (anchor.seq === 0) return { ...base, status: anchor.hash === GENESIS_HASH ? 'match' : 'mismatch' };
  if (anchor.seq > head.seq) {
    // A central prune (`prunedElsewhere`) may take a shipped source's newest links: the source's chain has no later
    // checkpoint link saying so, the centre's prune runs do, down to the hash of the last link removed.
    const removedEnd = pruned.endHash(head.seq + 1, anchor.seq);
    return { ...base, status: removedEnd !== undefined && removedEnd === anchor.hash ? 'pruned' : 'mismatch' };
  }
  const hash = s.prepare('SELECT hash FROM chain WHERE seq = ?').pluck().get(anchor.seq) as string | undefined;
  if (hash !== undefined) return { ...base, status: hash === anchor.hash ? 'match' : 'mismatch' };
  const end = pruned.endHash(anchor.seq, anchor.seq);
  if (end !== undefined && pruned.isEnd(anchor.seq)) return { ...base, status: end === anchor.hash ? 'pruned' : 'mismatch' };
  return { ...base, status: pruned.covers(anchor.seq, anchor.seq) ? 'pruned' : 'mismatch' };
}

/**
 * The well-formed runs of a checkpoint's `removed_json`: [first, last, hash of last, …]; on
 * PostgreSQL a fourth element names the writer whose chain the run was in. Not trusted beyond
 * its checkpoint's link: verify reads only checkpoints whose link is intact.
 */
export function removedRunsOf(removedJson: string): [number, number, string, unknown][] {
  let runs: unknown;
  try {
    runs = JSON.parse(removedJson);
  } catch {
    return [];
  }
  if (!Array.isArray(runs)) return [];
  return runs.filter(
    (run): run is [number, number, string, unknown] =>
      Array.isArray(run) && typeof run[0] === 'number' && typeof run[1] === 'number' && typeof run[2] === 'string',
  );
}

/** The runs of links prune checkpoints removed: [first, last, hash of last] (on PostgreSQL, one set per writer). */
export class PrunedRanges {
  private readonly ends = new Map<number, string>();
  private intervals: [number, number][] = [];
  private readonly added: [number, number, string][] = [];
  private merged: [number, number][] | null = null;
  count = 0;

  add(removedJson: string): void {
    for (const [first, last, hash] of removedRunsOf(removedJson)) this.addRun(first, last, hash);
  }

  /** One run of removed links: [first, last] and the hash of `last`. */
  addRun(first: number, last: number, hash: string): void {
    this.added.push([first, last, hash]);
    this.intervals.push([first, last]);
    this.ends.set(last, hash);
    this.count += last - first + 1;
    this.merged = null;
  }

  /** The runs added, in order (a worker thread rebuilds the same ranges from them). */
  runs(): readonly [number, number, string][] {
    return this.added;
  }

  isEnd(seq: number): boolean {
    return this.ends.has(seq);
  }

  /** True when every seq in [first, last] was removed by a checkpoint. */
  covers(first: number, last: number): boolean {
    const merged = this.mergedIntervals();
    let lo = 0;
    let hi = merged.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [a, b] = merged[mid]!;
      if (first < a) hi = mid - 1;
      else if (first > b) lo = mid + 1;
      else return last <= b;
    }
    return false;
  }

  /** The hash of link `last` when [first, last] was removed by checkpoints (the prev_hash of link last + 1). */
  endHash(first: number, last: number): string | undefined {
    return this.covers(first, last) ? this.ends.get(last) : undefined;
  }

  private mergedIntervals(): [number, number][] {
    if (this.merged) return this.merged;
    const sorted = [...this.intervals].sort((x, y) => x[0] - y[0]);
    const merged: [number, number][] = [];
    for (const [a, b] of sorted) {
      const last = merged[merged.length - 1];
      if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    this.merged = merged;
    return merged;
  }
}

/** Reads an anchor file; undefined when it does not exist. Throws IntegrityError when it is unreadable. */
export function readAnchor(file: string): Anchor | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as Partial<Anchor>;
    if (typeof json.seq !== 'number' || typeof json.hash !== 'string' || !/^[0-9a-f]{64}$/.test(json.hash))
      throw new Error('expected {"seq": number, "hash": 64 hex digits}');
    return { seq: json.seq, hash: json.hash, ...(typeof json.at === 'string' ? { at: json.at } : {}) };
  } catch (error) {
    throw new IntegrityError(`anchor ${file} is not a hookledger anchor: ${(error as Error).message}`);
  }
}

/** Writes the head to an anchor file atomically (a temp file renamed over it). */
export function writeAnchor(file: string, head: { seq: number; hash: string }, ledgerPath: string): Anchor {
  const anchor = { seq: head.seq, hash: head.hash, at: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...anchor, ledger: ledgerPath }, null, 2)}\n`);
  renameSync(tmp, file);
  return anchor;
}

/**
 * What differs in an invocation link whose hash does not match, named row by row from the
 * link's per-row checks (shared by both engines' verify).
 */
export function diagnoseInvocationLink(
  invocationId: number,
  seq: number,
  stored: ReturnType<typeof parseRowsText>,
  entries: RowEntry[],
): IntegrityProblem[] {
  const found: IntegrityProblem[] = [];
  const current = new Map(entries.map((e) => [e.label.replace('~', ''), e]));
  for (const [label, was] of stored) {
    const now = current.get(label);
    const id = Number(label.slice(1));
    const table = label.startsWith('i') ? 'invocations' : 'outcomes';
    const what = table === 'invocations' ? `invocation #${id}` : `outcome #${id} of invocation #${invocationId}`;
    if (!now) found.push({ kind: 'removed', table, id, seq, detail: `${what} is gone (link ${seq})` });
    else if (now.check !== was.check)
      found.push({ kind: 'changed', table, id, seq, detail: `${what} differs from what was committed (link ${seq})` });
  }
  for (const [label] of current) {
    if (stored.has(label)) continue;
    const id = Number(label.slice(1));
    found.push({
      kind: 'inserted',
      table: 'outcomes',
      id,
      seq,
      detail: `outcome #${id} was added to invocation #${invocationId} after it was committed (link ${seq})`,
    });
  }
  if (found.length === 0) {
    found.push({
      kind: 'changed',
      table: 'invocations',
      id: invocationId,
      seq,
      detail: `invocation #${invocationId} or its link ${seq} differs from what was committed`,
    });
  }
  return found;
}

/**
 * A background outcome that was pending when its invocation committed and has no completion
 * link must carry no result (shared by both engines' verify); null when it does not.
 */
export function uncommittedCompletion(o: RawRow, invocationId: number, seq: number): IntegrityProblem | null {
  const id = o[OUTCOME_ID] as number;
  const status = o[OUTCOME_STATUS] as string;
  const filled = RESULT_COLUMNS.filter(([i]) => o[i] !== null).map(([, name]) => name);
  if ((status === 'pending' || status === 'interrupted') && filled.length === 0) return null;
  return {
    kind: 'changed',
    table: 'outcomes',
    id,
    seq,
    detail: `background outcome #${id} of invocation #${invocationId} is "${status}"${filled.length > 0 ? ` with ${filled.join(', ')}` : ''} but its completion was never committed (no chain link)`,
  };
}
